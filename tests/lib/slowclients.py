#!/usr/bin/env python3
"""slowclients.py - hostile and idle HTTP clients for the connection tests.

Every address is on loopback: the server's (HOST) and the client sources.

  slowclients.py flood HOST PORT IDLE SLOW SOURCES SECONDS PROBES
      IDLE connections that send nothing and SLOW ones that send one header
      byte a second, spread over SOURCES (a comma list of loopback
      addresses), each reopened when the server closes it, for SECONDS;
      meanwhile PROBES fresh clients from 127.0.0.1 ask GET /healthz (5 s
      each).  Prints one JSON object: probes answered 200, how the slow
      connections ended (408 first, or closed without a reply), the longest
      one lived, and how many connections were open at once.
  slowclients.py over HOST PORT SOURCE COUNT
      COUNT kept-alive connections from SOURCE, each after one GET /healthz
      answered (a connection that has sent a request counts against the
      per-address limit; one that has not is under the header budget), then
      GET /healthz on one more from SOURCE and on one from 127.0.0.1.
      Prints "STATUS RETRY-AFTER" for each, one a line ("closed -" when
      nothing came back).
  slowclients.py slowbody HOST PORT LENGTH
      POST /api/v1/submissions declaring LENGTH body bytes, then one byte a
      second until the server answers or closes (at most LENGTH seconds).
      Prints "STATUS SECONDS" ("closed SECONDS" without a reply).
  slowclients.py headersonly HOST PORT LENGTH
      POST /api/v1/submissions declaring LENGTH body bytes and sending none
      of them; prints "STATUS RETRY-AFTER" of a reply that comes within
      10 s ("closed -" without one).
  slowclients.py agentburst HOST PORT HOLD TOKEN POSTS PARALLEL
      HOLD anonymous clients from 127.0.0.1 that sent a request's headers
      and trickle its body (they count against the address's limit), then
      one more anonymous GET /healthz, then POSTS of POST /api/v1/jobs/claim
      with TOKEN, PARALLEL at a time, each on a fresh connection from
      127.0.0.1.  Prints one JSON object: the anonymous probe's status and
      the agent's statuses counted.
"""
import concurrent.futures
import json
import socket
import sys
import threading
import time


def connect(host, port, src, timeout=5.0):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(timeout)
    s.bind((src, 0))
    s.connect((host, port))
    return s


def read_reply(s):
    """(status or 'closed', headers dict) of what the server sent, until EOF or a timeout."""
    data = b""
    try:
        while b"\r\n\r\n" not in data:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
    except (socket.timeout, ConnectionResetError, OSError):
        pass
    if not data.startswith(b"HTTP/"):
        return "closed", {}
    head = data.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")
    headers = {}
    for line in head[1:]:
        k, _, v = line.partition(":")
        headers[k.strip().lower()] = v.strip()
    return head[0].split()[1], headers


def get_healthz(host, port, src):
    try:
        s = connect(host, port, src)
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        status, headers = read_reply(s)
        s.close()
        return status, headers
    except OSError:
        return "closed", {}


def flood(host, port, idle, slow, sources, seconds, probes):
    stop = time.monotonic() + seconds
    lock = threading.Lock()
    st = {"slow_408": 0, "slow_closed": 0, "idle_closed": 0, "longest_slow": 0.0,
          "refused_connects": 0, "open": 0, "most_open": 0}

    def bump(key, n=1):
        with lock:
            st[key] += n
            st["most_open"] = max(st["most_open"], st["open"])

    def client(src, dripping):
        while time.monotonic() < stop:
            try:
                s = connect(host, port, src, timeout=1.0)
            except OSError:
                bump("refused_connects")
                time.sleep(0.2)
                continue
            bump("open")
            born = time.monotonic()
            header = b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 10000
            i = 0
            ended = None
            while time.monotonic() < stop and ended is None:
                try:
                    if dripping:
                        s.send(header[i:i + 1])
                        i += 1
                    data = s.recv(4096)  # waits up to 1 s: the drip's pace
                    ended = "408" if data.startswith(b"HTTP/1.1 408") else "closed"
                except socket.timeout:
                    continue
                except OSError:
                    ended = "closed"
            bump("open", -1)
            s.close()
            if ended is None:
                continue
            if dripping:
                bump("slow_408" if ended == "408" else "slow_closed")
                with lock:
                    st["longest_slow"] = max(st["longest_slow"], time.monotonic() - born)
            else:
                bump("idle_closed")

    threads = []
    for i in range(idle + slow):
        t = threading.Thread(target=client, args=(sources[i % len(sources)], i >= idle),
                             daemon=True)
        t.start()
        threads.append(t)
    time.sleep(min(2.0, seconds / 4))
    answered = []
    for _ in range(probes):
        if time.monotonic() >= stop:
            break
        status, _ = get_healthz(host, port, "127.0.0.1")
        answered.append(status)
        time.sleep(max(0.0, (stop - time.monotonic() - 1.0) / max(1, probes)))
    for t in threads:
        t.join(timeout=seconds + 5)
    st["probes"] = len(answered)
    st["probes_200"] = answered.count("200")
    st["probe_statuses"] = answered
    st["longest_slow"] = round(st["longest_slow"], 1)
    print(json.dumps(st))


def over(host, port, src, count):
    held = []
    for _ in range(count):
        s = connect(host, port, src)
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        s.settimeout(0.5)
        read_reply(s)  # its reply; the connection stays open
        held.append(s)
    time.sleep(0.3)
    for who in (src, "127.0.0.1"):
        status, headers = get_healthz(host, port, who)
        print(status, headers.get("retry-after", "-"))
    for s in held:
        s.close()


def slowbody(host, port, length):
    s = connect(host, port, "127.0.0.1", timeout=1.0)
    s.sendall(("POST /api/v1/submissions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json"
               "\r\nContent-Length: %d\r\n\r\n" % length).encode())
    t0 = time.monotonic()
    body = b"{" + b" " * (length - 1)
    status = None
    for i in range(length):
        try:
            s.send(body[i:i + 1])
            data = s.recv(4096)
            status = data.split()[1].decode() if data.startswith(b"HTTP/") else "closed"
            break
        except socket.timeout:
            continue
        except OSError:
            status = "closed"
            break
    print(status or "none", round(time.monotonic() - t0))


def agentburst(host, port, hold, token, posts, parallel):
    held = []
    for _ in range(hold):
        s = connect(host, port, "127.0.0.1", timeout=1.0)
        s.sendall(b"POST /api/v1/submissions HTTP/1.1\r\nHost: x\r\n"
                  b"Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{")
        held.append(s)
    time.sleep(0.5)
    anon, _ = get_healthz(host, port, "127.0.0.1")

    def post(_):
        try:
            s = connect(host, port, "127.0.0.1", timeout=30.0)  # a loaded machine
            s.sendall(("POST /api/v1/jobs/claim HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s"
                       "\r\nContent-Type: application/json\r\nContent-Length: 2\r\n"
                       "Connection: close\r\n\r\n{}" % token).encode())
            status, _ = read_reply(s)
            s.close()
            return status
        except OSError:
            return "closed"

    with concurrent.futures.ThreadPoolExecutor(parallel) as ex:
        statuses = list(ex.map(post, range(posts)))
    counts = {}
    for st in statuses:
        counts[st] = counts.get(st, 0) + 1
    for s in held:
        s.close()
    print(json.dumps({"anonymous": anon, "agent": counts}))


def main():
    cmd, host, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
    a = sys.argv[4:]
    if cmd == "flood":
        flood(host, port, int(a[0]), int(a[1]), a[2].split(","), float(a[3]), int(a[4]))
    elif cmd == "over":
        over(host, port, a[0], int(a[1]))
    elif cmd == "headersonly":
        s = connect(host, port, "127.0.0.1", timeout=10.0)
        s.sendall(("POST /api/v1/submissions HTTP/1.1\r\nHost: x\r\nContent-Type: "
                   "application/json\r\nContent-Length: %d\r\n\r\n" % int(a[0])).encode())
        status, headers = read_reply(s)
        print(status, headers.get("retry-after", "-"))
    elif cmd == "agentburst":
        agentburst(host, port, int(a[0]), a[1], int(a[2]), int(a[3]))
    elif cmd == "slowbody":
        slowbody(host, port, int(a[0]))
    else:
        sys.exit("unknown command " + cmd)


main()
