#!/usr/bin/env python3
"""fixture.py - a loopback HTTP fixture for the fetch tests.

    fixture.py PORTFILE LOGFILE DIR [BIND]

Listens on BIND (default 127.0.0.1) on a free port, writes the port to
PORTFILE, and appends one line "connection from HOST:PORT" to LOGFILE for
every TCP connection it accepts (before any request is read), so a test can
show that nothing connected.  Serves:
  /redirect?to=URL   302 to URL
  /gz/NAME           DIR/NAME with Content-Encoding: gzip (NAME is gzip'd)
  /drip              200, then one byte a second for up to 60 s
  /NAME              DIR/NAME as is
"""
import http.server
import os
import sys
import time
import urllib.parse

portfile, logfile, root = sys.argv[1], sys.argv[2], sys.argv[3]
bind = sys.argv[4] if len(sys.argv) > 4 else "127.0.0.1"


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, fmt, *args):
        with open(logfile, "a") as f:
            f.write("request %s\n" % (fmt % args))

    def do_GET(self):
        u = urllib.parse.urlsplit(self.path)
        if u.path == "/redirect":
            to = urllib.parse.parse_qs(u.query).get("to", [""])[0]
            self.send_response(302)
            self.send_header("Location", to)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if u.path == "/drip":
            self.send_response(200)
            self.send_header("Content-Length", "60")
            self.end_headers()
            for _ in range(60):
                try:
                    self.wfile.write(b"x")
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    return
                time.sleep(1)
            return
        encoded = u.path.startswith("/gz/")
        name = u.path[4:] if encoded else u.path[1:]
        path = os.path.join(root, os.path.basename(name))
        if not name or not os.path.isfile(path):
            self.send_error(404)
            return
        with open(path, "rb") as f:
            data = f.read()
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        if encoded:
            self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        try:
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def get_request(self):
        sock, addr = super().get_request()
        with open(logfile, "a") as f:
            f.write("connection from %s:%d\n" % (addr[0], addr[1]))
        return sock, addr


srv = Server((bind, 0), Handler)
open(logfile, "a").close()
with open(portfile + ".tmp", "w") as f:
    f.write("%d\n" % srv.server_address[1])
os.rename(portfile + ".tmp", portfile)
srv.serve_forever()
