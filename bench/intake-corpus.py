#!/usr/bin/env python3
"""bench/intake-corpus.py - Patchwork's parser corpus through locklab's intake.

Called by bench/bench-intake-corpus.sh with a running server (URL), its
Maildir source (MAILDIR) and psql's environment.  Every file of
PATCHWORK_DIR/patchwork/tests/data/{mail,series} goes three ways:

  api   the whole file POSTed as {"mbox": ...} (one series per request)
  all   every mail of the file dropped into the Maildir at once
  one   the mails dropped one at a time, each after the intake took the last

Each way gets its own Message-IDs (a prefix per way and file), so the three
never meet.  What locklab made is compared with EXPECT below, written from
Patchwork's own assertions (tests/unit/test_series.py counts and
assertSerialized; tests/unit/test_parser.py: pull request, patch, comment).
"""
import json
import os
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request

# file -> what Patchwork makes of it.
#   "vV:C+N"  a series of version V, C cover letters (0 or 1), N patches;
#             several separated by spaces, oldest first
#   "!"       after one: the series is incomplete (Patchwork records it;
#             locklab cannot test it and gives it up naming the parts)
#   "pull"    a pull request;  "comment"  a comment (no patch)
#   "part"    a patch of a longer series the file does not hold (Patchwork's
#             parser test reads its diff only; locklab keeps it waiting and
#             gives the series up naming the missing parts)
# A third field, when there is one, is where locklab deliberately differs
# and why; the second is what it does instead ("|" between alternatives),
# and the file counts as agreeing when it does that.
EXPECT = {
    "mail/0001-git-pull-request.mbox": ("pull",),
    "mail/0002-git-pull-request-wrapped.mbox": ("pull",),
    "mail/0003-git-pull-request-with-diff.mbox": ("pull",),
    "mail/0004-git-pull-request-git+ssh.mbox": ("pull",),
    "mail/0005-git-pull-request-ssh.mbox": ("pull",),
    "mail/0006-git-pull-request-http.mbox": ("pull",),
    "mail/0007-cvs-format-diff.mbox": ("v1:0+1",),
    "mail/0008-git-rename.mbox": ("part",),
    "mail/0009-git-rename-with-diff.mbox": ("part",),
    "mail/0010-invalid-charset.mbox": ("v1:0+1",),
    "mail/0011-no-newline-at-end-of-file.mbox": ("part",),
    "mail/0012-invalid-header-char.mbox": ("v1:0+1",),
    "mail/0013-with-utf8-body.mbox": ("v1:0+1",),
    "mail/0014-with-unencoded-utf8-headers.mbox": ("v1:0+1",),
    "mail/0015-with-invalid-utf8-headers.mbox": ("v1:0+1",),
    "mail/0016-no-subject.mbox": ("v1:0+1",),
    "mail/0017-git-pull-request-git-2-14-3.mbox": ("pull",),
    "mail/0019-multipart-patch.mbox": ("v1:0+1",),
    "mail/0020-multipart-comment.mbox": ("comment",),
    "mail/0021-git-empty-new-file.mbox": ("part",),
    "mail/0022-git-mode-change.mbox": ("v1:0+1",),
    "mail/0023-git-pull-request-newline-in-url.mbox": ("pull",),
    "mail/0024-git-pull-request-trailing-space.mbox": ("pull",),
    "mail/0025-git-add-binary-file.mbox": ("v1:0+1",),
    "mail/0026-git-add-mixed-binary-text-files.mbox": ("v1:0+1",),
    "mail/0027-git-modify-binary-file.mbox": ("v1:0+1",),
    "series/base-cover-letter.mbox": ("v1:1+2",),
    "series/base-deep-threaded.mbox": ("v1:1+2",),
    "series/base-different-versions.mbox": ("v3:1+4",),
    "series/base-extra-patches.mbox": ("v1:1+3", "v1:1+2",
                                       "part 3/2 is set aside (logged), parts 1..2 tested"),
    "series/base-incomplete.mbox": ("v1:1+1!",),
    "series/base-no-cover-letter.mbox": ("v1:0+2",),
    "series/base-no-references-no-cover.mbox": ("v1:1+2",),
    "series/base-no-references.mbox": ("v2:0+2",),
    "series/base-out-of-order.mbox": ("v1:1+2",),
    "series/base-single-patch.mbox": ("v1:0+1",),
    "series/bugs-mixed-versions.mbox": ("v1:0+1! v2:0+1!",),
    "series/bugs-multiple-content-types.mbox": ("v1:0+1",),
    "series/bugs-multiple-references.mbox": ("v2:1+4",),
    "series/bugs-nocover-noversion.mbox": ("v1:0+2 v1:0+2",),
    "series/bugs-nocover.mbox": ("v1:0+2 v2:0+2",),
    "series/bugs-spamming.mbox": ("v2:0+1! v2:0+1! v2:0+1!",),
    "series/bugs-unnumbered.mbox": ("v1:1+1! v1:0+1",),
    "series/dependency-base-patch.mbox": ("v1:1+2",),
    "series/dependency-multi-2.mbox.template": ("v1:1+2",),
    "series/dependency-multi.mbox.template": ("v1:1+2",),
    "series/dependency-one-cover.mbox.template": ("v1:1+2",),
    "series/dependency-one-first-patch.mbox.template": ("v1:1+2",),
    "series/mercurial-cover-letter.mbox": ("v1:1+2",),
    "series/mercurial-no-cover-letter.mbox": ("v1:0+2",),
    "series/revision-basic.mbox": ("v1:1+2 v2:1+2",),
    "series/revision-no-cover-letter.mbox": ("v1:1+2 v2:0+2",),
    "series/revision-out-of-order.mbox": ("v1:1+2 v2:1+2",),
    "series/revision-threaded-to-cover.mbox": ("v1:1+2 v2:1+2",),
    "series/revision-threaded-to-patch.mbox": ("v1:1+2 v2:1+2",),
    "series/revision-threaded-to-single-patch.mbox": ("v1:0+1 v2:0+1",),
    "series/revision-unlabeled-noreferences.mbox": ("v2:0+2 v2:0+2",),
    "series/revision-unlabeled.mbox": ("v1:1+2 v1:1+2",),
}
# the templates' placeholders (Depends-on: trailers naming other series)
TEMPLATE_VALUES = {"depends_token": "<20240610210912.161735-3-ahassick@iol.unh.edu>",
                   "depends_token_1": "<20240610210912.161735-1-ahassick@iol.unh.edu>",
                   "depends_token_2": "https://patchwork.example.org/series/1/"}
ID_HEADERS = ("message-id", "in-reply-to", "references")


def wants(f):
    """What Patchwork makes of f, then what locklab deliberately does instead."""
    return [EXPECT[f][0]] + (EXPECT[f][1].split("|") if len(EXPECT[f]) > 2 else [])


def split_mbox(data):
    """The messages of an mbox (bytes), without their From_ lines."""
    lines = data.split(b"\n")
    msgs, cur = [], []
    for i, line in enumerate(lines):
        if line.startswith(b"From ") and (i == 0 or lines[i - 1] == b"") and cur:
            msgs.append(b"\n".join(cur))
            cur = []
            continue
        if line.startswith(b"From ") and i == 0:
            continue
        cur.append(line)
    if cur:
        msgs.append(b"\n".join(cur))
    return [m.rstrip(b"\n") + b"\n" for m in msgs if m.strip()]


def retag(msg, prefix, n):
    """msg with every Message-ID it names prefixed (one made when it has
    none) and its sender's address tagged with the prefix."""
    head, sep, body = msg.partition(b"\n\n")
    out, cur, has_id = [], None, False
    for line in head.split(b"\n"):
        if line[:1] in (b" ", b"\t"):
            pass
        else:
            cur = line.split(b":", 1)[0].strip().lower().decode("latin-1")
        if cur == "from" and line[:1] not in (b" ", b"\t"):
            # the files share authors; each is its own world, as each of
            # Patchwork's tests has a database of its own
            line = line.replace(b"@", b"+" + prefix.rstrip(b"-") + b"@", 1)
        if cur in ID_HEADERS:
            if cur == "message-id" and b"<" in line:
                has_id = True
            line = re.sub(rb"<([^<>\s]+)>", lambda m: b"<" + prefix + m.group(1) + b">", line)
        out.append(line)
    if not has_id:
        out = [l for l in out if not l.lower().startswith(b"message-id:")]
        out.append(b"Message-ID: <" + prefix + b"made-%d@corpus.example.org>" % n)
    return b"\n".join(out) + sep + body


def sql(q):
    return subprocess.run(["psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", q],
                          check=True, capture_output=True, text=True).stdout.strip()


def parse_expect(text):
    if text in ("pull", "comment", "part"):
        return text
    return sorted(text.split())


def got_series(prefix):
    """locklab's submissions holding mails of prefix, as sorted vV:C+N."""
    rows = sql("SELECT s.version, s.git_url IS NOT NULL, count(*) FILTER (WHERE p.seq = 0), "
               "count(*) FILTER (WHERE p.seq > 0) FROM submissions s JOIN patches p "
               "ON p.submission_id = s.id WHERE p.message_id LIKE '<%s%%' GROUP BY s.id "
               "ORDER BY s.id" % prefix)
    out = []
    for r in rows.splitlines():
        v, pull, c, n = r.split("|")
        out.append("pull" if pull == "t" else "v%s:%s+%s" % (v, c, n))
    return out


def mail_states(prefix):
    rows = sql("SELECT state, coalesce(reason, '') FROM mail_messages WHERE message_id LIKE '<%s%%'"
               % prefix)
    return [tuple(r.split("|", 1)) for r in rows.splitlines()]


def judge(want, got, gave_up, stored):
    """Does what locklab did (series got, whether a part was given up,
    how many mails it kept) agree with want?"""
    if want == "pull":
        return got == ["pull"]
    if want == "comment":
        return got == [] and stored == 0
    if want == "part":
        return got == [] and gave_up
    full = sorted(w for w in want if not w.endswith("!"))
    incomplete = [w for w in want if w.endswith("!")]
    return sorted(got) == full and (gave_up or not incomplete)


def judge_api(want, code, body, got):
    if want == "pull":
        return code == 202 and got == ["pull"]
    if want == "comment":
        return code == 422 and "no patch" in body
    if want == "part":
        return code == 422 and "incomplete" in body
    full = [w for w in want if not w.endswith("!")]
    if not full:
        return code == 422 and "incomplete" in body
    # one POST gives one series: the newest Patchwork makes
    newest = max(full, key=lambda w: int(w[1:].split(":")[0]))
    return code == 202 and got == [newest]


def post_raw(url, data):
    """POST the mbox bytes as they are (JSON strings must be UTF-8: bytes
    that are not are sent as Latin-1 characters, as a mail client would)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("latin-1")
    req = urllib.request.Request(url + "/api/v1/submissions", method="POST",
                                 data=json.dumps({"mbox": text}).encode(),
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def deliver(maildir, name, data):
    tmp = os.path.join(maildir, "tmp", name)
    with open(tmp, "wb") as f:
        f.write(data)
    os.rename(tmp, os.path.join(maildir, "new", name))


def drained(maildir):
    return not os.listdir(os.path.join(maildir, "new"))


def settle(prefixes, limit):
    """Wait until no mail of prefixes is pending, at most limit seconds."""
    end = time.time() + limit
    cond = " OR ".join("message_id LIKE '<%s%%'" % p for p in prefixes)
    while time.time() < end:
        if sql("SELECT count(*) FROM mail_messages WHERE state = 'pending' AND (%s)" % cond) == "0":
            return True
        time.sleep(0.5)
    return False


def main():
    pw, url, maildir, wait = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
    data_dir = os.path.join(pw, "patchwork", "tests", "data")
    files = sorted(EXPECT)
    missing = [f for f in files if not os.path.exists(os.path.join(data_dir, f))]
    if missing:
        print("bench-intake-corpus: not in %s: %s" % (data_dir, ", ".join(missing)), file=sys.stderr)
        return 1
    mails = {}
    for i, f in enumerate(files):
        raw = open(os.path.join(data_dir, f), "rb").read()
        if f.endswith(".template"):
            raw = raw.decode().format(**TEMPLATE_VALUES).encode()
        mails[f] = (i, split_mbox(raw))

    def pfx(way, f):
        return "%s%02d-" % (way, mails[f][0])

    res = {f: {} for f in files}
    # api: the whole file, one POST
    for f in files:
        i, msgs = mails[f]
        mbox = b"".join(b"From corpus@example.org Mon Jan  1 00:00:00 2001\n" + retag(m, pfx("a", f).encode(), k)
                        .replace(b"\nFrom ", b"\n>From ") + b"\n" for k, m in enumerate(msgs))
        code, body = post_raw(url, mbox)
        got = got_series(pfx("a", f)) if code == 202 else []
        res[f]["api"] = (any(judge_api(parse_expect(e), code, body, got) for e in wants(f)),
                         "%d %s" % (code, " ".join(got) if code == 202 else
                                    json.loads(body).get("detail", body)[:60] if body.startswith("{") else body[:60]))
    # all: every mail of every file at once
    n = 0
    for f in files:
        for k, m in enumerate(mails[f][1]):
            n += 1
            deliver(maildir, "%d.all%05d.corpus" % (int(time.time()), n), retag(m, pfx("m", f).encode(), k))
    settle([pfx("m", f) for f in files], wait + 30)
    # one: the k-th mail of every file, once the intake took the (k-1)-th
    rounds = max(len(mails[f][1]) for f in files)
    for k in range(rounds):
        for f in files:
            if k < len(mails[f][1]):
                n += 1
                deliver(maildir, "%d.one%05d.corpus" % (int(time.time()), n),
                        retag(mails[f][1][k], pfx("o", f).encode(), k))
        for _ in range(200):
            if drained(maildir):
                break
            time.sleep(0.1)
        time.sleep(1.0)
    settle([pfx("o", f) for f in files], wait + 30)
    for f in files:
        for way, p in (("all", "m"), ("one", "o")):
            got = got_series(pfx(p, f))
            states = mail_states(pfx(p, f))
            gave_up = any(s == "given-up" for s, _ in states)
            ok = any(judge(parse_expect(e), got, gave_up, len(states)) for e in wants(f))
            note = " ".join(got) or "-"
            if gave_up:
                note += " given-up(%s)" % next(r for s, r in states if s == "given-up")
            res[f][way] = (ok, "%s [%d kept]" % (note, len(states)))

    print("%-48s %-22s %-4s %-4s %-4s  %s" % ("file", "Patchwork", "api", "all", "one", "locklab (api | all | one)"))
    tot = {"api": 0, "all": 0, "one": 0}
    for f in files:
        row = res[f]
        for w in tot:
            tot[w] += row[w][0]
        print("%-48s %-22s %-4s %-4s %-4s  %s | %s | %s" % (
            f, EXPECT[f][0], *("yes" if row[w][0] else "NO" for w in ("api", "all", "one")),
            row["api"][1], row["all"][1], row["one"][1]))
        if len(EXPECT[f]) > 2:
            print("%-48s   deliberately %s: %s" % ("", EXPECT[f][1], EXPECT[f][2]))
    print()
    print("files agreeing with Patchwork (of %d): api %d, maildir all at once %d, one at a time %d"
          % (len(files), tot["api"], tot["all"], tot["one"]))
    same = sum(1 for f in files if res[f]["api"][0] == res[f]["all"][0] == res[f]["one"][0])
    print("files where api, all and one agree with each other: %d" % same)
    return 0


if __name__ == "__main__":
    sys.exit(main())
