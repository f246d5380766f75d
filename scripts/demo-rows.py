#!/usr/bin/env python3
"""demo-rows.py MAX < reply.eml - the rows of a reply's tables that decided.

The reply mail holds one %change table per comparison (server/reply_table.c): a
header line, then one line per row (a long name on a line of its own
first), a blank line at the end.  A row whose %change carries a '*' is
significant; those rows, at most MAX of them, are printed under the
header, with a line saying how many more the reply holds, and the reply's
line saying what the '*' means.
"""
import email
import sys
from email import policy


def rows_of(text):
    """Yield (header, [(name_line or None, line)]) per table."""
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        if "%change" in lines[i] and lines[i].rstrip().endswith("metric"):
            header, rows, name = lines[i], [], None
            i += 1
            while i < len(lines) and lines[i].strip():
                if lines[i].startswith("  ") and lines[i][2:3].isalpha():
                    name = lines[i]
                else:
                    rows.append((name, lines[i]))
                    name = None
                i += 1
            yield header, rows
        i += 1


def main():
    limit = int(sys.argv[1]) if len(sys.argv) > 1 else 8
    msg = email.message_from_string(sys.stdin.read(), policy=policy.default)
    body = msg.get_body(("plain",))
    text = body.get_content() if body is not None else ""
    legend = next((ln for ln in text.splitlines() if ln.startswith("*: significant")), "")
    shown = more = tables = 0
    for header, rows in rows_of(text):
        tables += 1
        decided = [r for r in rows if "*" in r[1][:38]]
        if not decided:
            continue
        print(header)
        for name, line in decided:
            if shown >= limit:
                more += 1
                continue
            if name:
                print(name)
            print(line)
            shown += 1
    if tables == 0:
        print("  the reply has no table")
        return 1
    if shown == 0:
        print("  no row changed significantly (every row is in the reply)")
    if more:
        print(f"  ... and {more} more in the reply")
    if legend and shown:
        print("  " + legend)
    return 0


sys.exit(main())
