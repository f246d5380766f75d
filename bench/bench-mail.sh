#!/usr/bin/env bash
# bench/bench-mail.sh - `make bench-mail`: how fast mail comes in, on
# this machine, database on the same machine.
#
#   parse:   build/bench-mbox: messages parsed per CPU second (one core) for
#            typical patch mails (goal >= 2,000/s)
#   intake:  MAILS patch mails (series of a cover letter and 4 patches)
#            dropped into a Maildir at once; messages per second from the
#            drop until the last series is submitted (parse, store, group,
#            submit), wall clock
#   latency: SERIES times, one series of a cover and 5 patches delivered;
#            seconds from the last mail's arrival in new/ to its submission
#            row (goal <= 2 s), with the intake polling every POLL seconds
#
# Needs build/locklab-server, build/bench-mbox, PostgreSQL 15, python3.
set -uo pipefail
MAILS=${MAILS:-2000}
SERIES=${SERIES:-10}
POLL=${POLL:-0.5}
source "$(dirname "$0")/../tests/lib/tap.sh"
source "$TOP/tests/lib/pg.sh"
source "$TOP/tests/lib/server.sh"
source "$TOP/tests/lib/mail.sh"

"$BIN/bench-mbox" 20000 || exit 1

pg_start || exit 1
mkdir -p "$T/Maildir/new" "$T/Maildir/cur" "$T/Maildir/tmp" "$T/gen"
cat >"$T/mail.json" <<EOF
{"sources": [{"name": "bench", "maildir": "$T/Maildir"}], "poll_seconds": $POLL, "wait_seconds": 600}
EOF
server_start --mail-config "$T/mail.json" || exit 1

# gen DIR TAG NSERIES PATCHES: NSERIES threaded series of a cover and PATCHES
# patches (~3 KB each), one file per mail, named in delivery order
gen() {
  python3 - "$@" <<'PY'
import os, sys
d, tag, nseries, npatches = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
os.makedirs(d, exist_ok=True)
diff = "".join("-\tatomic_long_set(&lock->owner, o%d);\n+\tatomic_long_set_release(&lock->owner, o%d);\n"
               % (i, i) for i in range(20))
for s in range(nseries):
    cover = "<%s.s%d.p0@bench.example.org>" % (tag, s)
    for k in range(npatches + 1):
        h = ("From: Dev %d <dev%d@example.org>\nTo: locking@vger.example.org\n"
             "Date: Mon, 30 Nov 2026 10:00:00 +0000\n"
             "Subject: [PATCH %d/%d] locking/%s%d: part %d\n"
             "Message-ID: <%s.s%d.p%d@bench.example.org>\n" % (s, s, k, npatches, tag, s, k, tag, s, k))
        if k:
            h += "In-Reply-To: %s\nReferences: %s\n" % (cover, cover)
        h += "MIME-Version: 1.0\nContent-Type: text/plain; charset=UTF-8\n\n"
        if k == 0:
            body = "This series hands the lock to the top waiter.\n"
        else:
            body = ("Hand the lock to the top waiter.\n\nSigned-off-by: Dev <dev@example.org>\n---\n"
                    " kernel/locking/m.c | 40 ++++----\n\n"
                    "diff --git a/kernel/locking/m.c b/kernel/locking/m.c\n--- a/kernel/locking/m.c\n"
                    "+++ b/kernel/locking/m.c\n@@ -1,20 +1,20 @@\n" + diff + "-- \n2.39.5\n")
        with open("%s/%06d.eml" % (d, s * (npatches + 1) + k), "w") as f:
            f.write(h + body)
PY
}
now() { date +%s.%N; }

# intake rate: every mail dropped at once (renamed into new/ in one go)
nseries=$(((MAILS + 4) / 5))
gen "$T/gen/rate" rate "$nseries" 4
for f in "$T"/gen/rate/*.eml; do cp "$f" "$T/Maildir/tmp/rate.$(basename "$f")"; done
start=$(now)
python3 -c '
import os, sys
d = sys.argv[1]
for n in sorted(os.listdir(d + "/tmp")):
    os.rename(d + "/tmp/" + n, d + "/new/" + n)' "$T/Maildir"
for ((i = 0; i < 6000; i++)); do
  [[ $(sql "SELECT count(*) FROM submissions") -ge $nseries ]] && break
  sleep 0.1
done
end=$(now)
got=$(sql "SELECT count(*) FROM submissions")
python3 - "$start" "$end" "$((nseries * 5))" "$got" "$nseries" <<'PY'
import sys
start, end, mails, got, want = float(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
print("intake: %d mails (%d series) from Maildir to submissions in %.1f s = %.0f messages/s, wall clock "
      "(%d of %d series submitted; goal >= 2000/s)" % (mails, want, end - start, mails / (end - start), got, want))
PY

# arrival to submission: the last mail of a series lands, the series is submitted
gen "$T/gen/lat" lat "$SERIES" 5
: >"$T/lat"
for ((s = 0; s < SERIES; s++)); do
  before=$(sql "SELECT count(*) FROM submissions")
  for ((k = 0; k < 6; k++)); do
    f=$T/gen/lat/$(printf '%06d' $((s * 6 + k))).eml
    cp "$f" "$T/Maildir/tmp/lat.$s.$k" && mv "$T/Maildir/tmp/lat.$s.$k" "$T/Maildir/new/lat.$s.$k"
  done
  t0=$(now)
  for ((i = 0; i < 600; i++)); do
    [[ $(sql "SELECT count(*) FROM submissions") -gt $before ]] && break
    sleep 0.02
  done
  echo "$t0 $(now)" >>"$T/lat"
  sleep "$(python3 -c "import random; print(random.uniform(0, $POLL))")"
done
python3 - "$T/lat" "$POLL" <<'PY'
import sys
t = sorted(float(b) - float(a) for a, b in (l.split() for l in open(sys.argv[1]) if l.strip()))
print("arrival to submission: %d series of 6 mails, median %.2f s, max %.2f s, polling every %s s "
      "(goal <= 2 s)" % (len(t), t[len(t) // 2], t[-1], sys.argv[2]))
PY
