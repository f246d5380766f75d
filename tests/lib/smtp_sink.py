#!/usr/bin/python3
"""smtp_sink.py DIR PORT: a real SMTP server (Debian's python3-aiosmtpd) on
127.0.0.1:PORT that keeps every message it accepts as DIR/NNNN.eml (the
bytes as received, CRLF turned back to LF) and its envelope as DIR/NNNN.json
({"mail_from", "rcpt_tos"}).  Writes DIR/ready once it listens; runs until
SIGTERM.  Run with Debian's /usr/bin/python3, where python3-aiosmtpd is.
"""
import json
import os
import signal
import sys
import threading

from aiosmtpd.controller import Controller

out, port = sys.argv[1], int(sys.argv[2])
os.makedirs(out, exist_ok=True)
lock = threading.Lock()


class Keep:
    async def handle_DATA(self, server, session, envelope):
        with lock:
            n = len([f for f in os.listdir(out) if f.endswith(".eml")]) + 1
            base = os.path.join(out, "%04d" % n)
            with open(base + ".json", "w") as f:
                json.dump({"mail_from": envelope.mail_from, "rcpt_tos": envelope.rcpt_tos}, f)
            data = envelope.original_content or envelope.content
            with open(base + ".eml.tmp", "wb") as f:
                f.write(data.replace(b"\r\n", b"\n"))
            os.rename(base + ".eml.tmp", base + ".eml")
        return "250 OK kept as %04d" % n


controller = Controller(Keep(), hostname="127.0.0.1", port=port)
controller.start()
open(os.path.join(out, "ready"), "w").close()
stop = threading.Event()
signal.signal(signal.SIGTERM, lambda *a: stop.set())
signal.signal(signal.SIGINT, lambda *a: stop.set())
while not stop.wait(3600):
    pass
controller.stop()
os.unlink(os.path.join(out, "ready"))
