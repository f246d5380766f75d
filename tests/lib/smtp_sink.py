#!/usr/bin/python3
"""smtp_sink.py DIR PORT [MODE CERT KEY USER PASSWORD]: a real SMTP server
(Debian's python3-aiosmtpd) on 127.0.0.1:PORT that keeps every message it
accepts as DIR/NNNN.eml (the bytes as received, CRLF turned back to LF) and
its envelope as DIR/NNNN.json ({"mail_from", "rcpt_tos", "tls", "login"}).
MODE plain (default); starttls: STARTTLS and a login (USER, PASSWORD) are
required before MAIL; smtps: TLS from the first byte, login required.
Writes DIR/ready once it listens; runs until SIGTERM.  Run with Debian's
/usr/bin/python3, where python3-aiosmtpd is.
"""
import json
import os
import signal
import ssl
import sys
import threading

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult

out, port = sys.argv[1], int(sys.argv[2])
mode = sys.argv[3] if len(sys.argv) > 3 else "plain"
os.makedirs(out, exist_ok=True)
lock = threading.Lock()


class Keep:
    async def handle_DATA(self, server, session, envelope):
        with lock:
            n = len([f for f in os.listdir(out) if f.endswith(".eml")]) + 1
            base = os.path.join(out, "%04d" % n)
            with open(base + ".json", "w") as f:
                json.dump({"mail_from": envelope.mail_from, "rcpt_tos": envelope.rcpt_tos,
                           "tls": session.ssl is not None
                           or server.transport.get_extra_info("sslcontext") is not None,
                           "login": session.auth_data if session.authenticated else None}, f)
            data = envelope.original_content or envelope.content
            with open(base + ".eml.tmp", "wb") as f:
                f.write(data.replace(b"\r\n", b"\n"))
            os.rename(base + ".eml.tmp", base + ".eml")
        return "250 OK kept as %04d" % n


def check_login(server, session, envelope, mechanism, auth_data):
    ok = auth_data.login == sys.argv[6].encode() and auth_data.password == sys.argv[7].encode()
    return AuthResult(success=ok, handled=False, auth_data=auth_data.login.decode() if ok else None)


kw = {}
if mode != "plain":
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(sys.argv[4], sys.argv[5])
    kw = {"authenticator": check_login, "auth_required": True}
    if mode == "starttls":
        kw.update(tls_context=ctx, require_starttls=True)
    else:
        # TLS from the first byte: aiosmtpd cannot tell, so it must not ask for STARTTLS
        kw.update(ssl_context=ctx, auth_require_tls=False)
controller = Controller(Keep(), hostname="127.0.0.1", port=port, **kw)
controller.start()
open(os.path.join(out, "ready"), "w").close()
stop = threading.Event()
signal.signal(signal.SIGTERM, lambda *a: stop.set())
signal.signal(signal.SIGINT, lambda *a: stop.set())
while not stop.wait(3600):
    pass
controller.stop()
os.unlink(os.path.join(out, "ready"))
