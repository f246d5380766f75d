#!/usr/bin/env python3
"""mailinfo.py [FILE]: what a mail reader sees in one mail (FILE or stdin),
read with Python's email package (policy=default), as one JSON object.

Keys: subject, from, to, cc (addr-specs), to_names, message_id,
in_reply_to, references (list), date, content_type, charset, cte, body,
first_paragraph (joined to one line), max_body_columns, defects (every
defect the parser noted, headers included), longest_encoded_word,
longest_header_line, raw_8bit (any byte > 127 in the raw mail).
"""
import email
import email.policy
import json
import re
import sys

raw = open(sys.argv[1], "rb").read() if len(sys.argv) > 1 and sys.argv[1] != "-" else sys.stdin.buffer.read()
msg = email.message_from_bytes(raw, policy=email.policy.default)
head = raw.split(b"\n\n", 1)[0]

defects = [type(d).__name__ for part in msg.walk() for d in part.defects]
def header(name):
    h = msg[name]
    if h is None:
        return None
    defects.extend(type(d).__name__ for d in getattr(h, "defects", ()))
    return h

def addrs(name):
    h = header(name)
    return [a.addr_spec for a in h.addresses] if h is not None else []

to = header("to")
body_part = msg.get_body(("plain",))
body = body_part.get_content() if body_part is not None else ""
paragraphs = body.strip("\n").split("\n\n")
words = re.findall(rb"=\?[^?\s]+\?[bBqQ]\?[^?\s]*\?=", head)
facts = {
    "subject": str(header("subject") or ""),
    "from": str(header("from") or ""),
    "to": addrs("to"),
    "to_names": [a.display_name for a in to.addresses] if to is not None else [],
    "cc": addrs("cc"),
    "message_id": str(header("message-id") or ""),
    "in_reply_to": str(header("in-reply-to") or ""),
    "references": str(header("references") or "").split(),
    "date": str(header("date") or ""),
    "content_type": msg.get_content_type(),
    "charset": msg.get_content_charset(),
    "cte": str(msg["content-transfer-encoding"] or ""),
    "body": body,
    "first_paragraph": " ".join(paragraphs[0].split()) if paragraphs else "",
    "max_body_columns": max((len(l) for l in body.splitlines()), default=0),
    "defects": defects,
    "longest_encoded_word": max((len(w) for w in words), default=0),
    "longest_header_line": max((len(l.rstrip(b"\r")) for l in head.split(b"\n")), default=0),
    "raw_8bit": any(b > 127 for b in raw),
}
json.dump(facts, sys.stdout, ensure_ascii=False)
print()
