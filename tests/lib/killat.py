#!/usr/bin/env python3
"""killat.py PID REGEX SECONDS: kill -9 PID the moment one of its descendant
processes has a command line (arguments joined by spaces) matching REGEX,
then kill -9 the descendants it had (the dead agent's git, make or bwrap).
Prints the matched command line.  Exit 0 when it killed, 1 when PID ended or
SECONDS passed first.  Polls /proc every 5 ms: a phase that lasts longer than
that is caught."""
import os
import re
import signal
import sys
import time

root, pat, secs = int(sys.argv[1]), re.compile(sys.argv[2]), float(sys.argv[3])


def table():
    kids, cmd = {}, {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            with open("/proc/%s/cmdline" % d, "rb") as f:
                cmd[int(d)] = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
        except (OSError, IndexError, ValueError):
            continue
        kids.setdefault(ppid, []).append(int(d))
    return kids, cmd


def descendants(kids, pid):
    out, todo = [], list(kids.get(pid, []))
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(kids.get(p, []))
    return out


end = time.monotonic() + secs
while time.monotonic() < end:
    if not os.path.exists("/proc/%d" % root):
        sys.exit(1)
    kids, cmd = table()
    below = descendants(kids, root)
    hit = [p for p in below if pat.search(cmd.get(p, ""))]
    if hit:
        os.kill(root, signal.SIGKILL)
        for p in below:
            try:
                os.kill(p, signal.SIGKILL)
            except OSError:
                pass
        print(cmd[hit[0]])
        sys.exit(0)
    time.sleep(0.005)
sys.exit(1)
