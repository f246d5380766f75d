#!/usr/bin/env python3
"""firstline.py - a loopback listener that records what each client says first.

    firstline.py PORTFILE LOGFILE [SECONDS]

Listens on a free port of 127.0.0.1 and, where the machine has it, on the
same port of ::1; writes the port to PORTFILE.  For each connection it
appends the client's first line (up to 64 bytes, "?" when nothing came in
5 s) to LOGFILE and closes it: an ssh client's first line is its
"SSH-2.0-..." banner, so a test sees that ssh connected, and how often,
without an ssh server.  Runs SECONDS (default 300).
"""
import selectors
import socket
import sys
import time

portfile, logfile = sys.argv[1], sys.argv[2]
seconds = float(sys.argv[3]) if len(sys.argv) > 3 else 300
sel = selectors.DefaultSelector()
s = socket.socket()
s.bind(("127.0.0.1", 0))
port = s.getsockname()[1]
socks = [s]
try:
    s6 = socket.socket(socket.AF_INET6)
    s6.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
    s6.bind(("::1", port))
    socks.append(s6)
except OSError:
    pass
for x in socks:
    x.listen(8)
    sel.register(x, selectors.EVENT_READ)
open(portfile, "w").write(str(port))
end = time.time() + seconds
while time.time() < end:
    for key, _ in sel.select(timeout=1):
        c, _ = key.fileobj.accept()
        c.settimeout(5)
        try:
            first = c.recv(64).split(b"\r\n")[0].decode("ascii", "replace")
        except OSError:
            first = "?"
        with open(logfile, "a") as f:
            f.write(first + "\n")
        c.close()
