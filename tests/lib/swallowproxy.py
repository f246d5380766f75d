#!/usr/bin/env python3
"""swallowproxy.py PORT UPSTREAM_PORT LOG [MATCH COUNT | --hold REGEX SECONDS]: a loopback HTTP
proxy that loses answers.  Each request (headers and Content-Length body,
one per connection) is sent to 127.0.0.1:UPSTREAM_PORT and the upstream's
whole answer is read; the answer is thrown away and the client's connection
closed with nothing sent -- what a client sees when the server dies after
committing its work -- for every request, or with MATCH and COUNT only for
the first COUNT requests whose request line holds MATCH (the others get
their answer).  With --hold, nothing is swallowed: an answer whose bytes
match REGEX is held SECONDS before it is sent (what a client sees when the
answer to its request is slow), every other answer passes at once.  One
line per request ("METHOD PATH -> upstream STATUS, swallowed|passed|held")
goes to LOG, written when the answer is sent.  Only loopback; runs until
killed."""
import re
import socket
import sys
import threading
import time

port, upstream, log = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
hold = None
if len(sys.argv) > 6 and sys.argv[4] == "--hold":
    hold = (re.compile(sys.argv[5].encode()), float(sys.argv[6]))
match = sys.argv[4].encode() if len(sys.argv) > 5 and hold is None else None
left = [int(sys.argv[5]) if len(sys.argv) > 5 and hold is None else -1]
lock = threading.Lock()


def to_swallow(line):
    with lock:
        if hold is not None:
            return False
        if match is None:
            return True
        if match in line and left[0] > 0:
            left[0] -= 1
            return True
        return False


def read_request(c):
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = c.recv(65536)
        if not chunk:
            return None
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        k, _, v = line.partition(b":")
        if k.strip().lower() == b"content-length":
            length = int(v.strip())
    while len(body) < length:
        chunk = c.recv(65536)
        if not chunk:
            return None
        body += chunk
    # one request per connection upstream: no keep-alive to tell apart
    lines = [l for l in head.split(b"\r\n") if not l.lower().startswith(b"connection:")]
    return b"\r\n".join(lines) + b"\r\nConnection: close\r\n\r\n" + body


def serve(c):
    try:
        req = read_request(c)
        if req is None:
            return
        u = socket.create_connection(("127.0.0.1", upstream), timeout=30)
        u.sendall(req)
        answer = b""
        while True:
            chunk = u.recv(65536)
            if not chunk:
                break
            answer += chunk
        u.close()
        line = req.split(b"\r\n", 1)[0]
        swallow = to_swallow(line)
        held = hold is not None and hold[0].search(answer) is not None
        if held:
            time.sleep(hold[1])
        if not swallow:
            c.sendall(answer)
        status = answer.split(b"\r\n", 1)[0].decode(errors="replace")
        what = "swallowed" if swallow else "held" if held else "passed"
        with lock, open(log, "a") as f:
            f.write("%s -> upstream %s, %s\n" % (line.decode(errors="replace"), status, what))
    finally:
        c.close()


s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", port))
s.listen(16)
open(log, "a").close()
while True:
    c, _ = s.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
