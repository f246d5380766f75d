#!/usr/bin/env python3
"""countproxy.py - a loopback TCP proxy that counts connections and requests.

    countproxy.py PORTFILE LOGFILE TARGET_PORT

Listens on a free port of 127.0.0.1, writes it to PORTFILE, and forwards
every connection to 127.0.0.1:TARGET_PORT.  Appends "connection N" to
LOGFILE for each connection accepted and "request N METHOD PATH" for each
HTTP request line the client sends on it, so a test can tell how many
connections a client used for how many requests.
"""
import os
import re
import socket
import sys
import threading

portfile, logfile, target = sys.argv[1], sys.argv[2], int(sys.argv[3])
lock = threading.Lock()
REQ = re.compile(rb"(?:^|\r\n)(GET|POST|PUT|PATCH|DELETE|HEAD) (\S+) HTTP/1\.[01]\r\n")


def log(line):
    with lock, open(logfile, "a") as f:
        f.write(line + "\n")


def pump(src, dst, n, count):
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            if count:
                for m in REQ.finditer(data):
                    log("request %d %s %s" % (n, m.group(1).decode(), m.group(2).decode()))
            dst.sendall(data)
    except OSError:
        pass
    for s in (dst, src):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def main():
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", 0))
    srv.listen(16)
    with open(portfile + ".tmp", "w") as f:
        f.write(str(srv.getsockname()[1]))
    os.rename(portfile + ".tmp", portfile)
    n = 0
    while True:
        c, _ = srv.accept()
        n += 1
        log("connection %d" % n)
        up = socket.create_connection(("127.0.0.1", target))
        threading.Thread(target=pump, args=(c, up, n, True), daemon=True).start()
        threading.Thread(target=pump, args=(up, c, n, False), daemon=True).start()


main()
