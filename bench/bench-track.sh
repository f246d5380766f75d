#!/usr/bin/env bash
# make bench-track: minutes from a push to the alert naming its first bad
# commit, through the real server, PostgreSQL, an agent and a git daemon on
# loopback (tests/349-track-push-step.t, one run per case, its "# bench:"
# line).  The cases, as "commits:step" (CASES="8:5 20:13 8:1 8:8" by
# default; goals: 8 commits <= 15 min, 20 commits <= 25 min on a 2-core
# machine).  The step is a global atomic counter added to futex3's lock path
# (SLOWDOWN=atomic, about +30% uncontended; SLOWDOWN=spin for a busy loop of
# several hundred ns, tests/lib/track.sh).  The server samples as it does by
# default (--track-samples 3); sampling waits while the alert is bisected.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
CASES=${CASES:-"8:5 20:13 8:1 8:8"}
SLOWDOWN=${SLOWDOWN:-atomic}
. "$top/bench/bench-machine.sh"
bench_machine_header
echo "commit: $(git -C "$top" rev-parse --short HEAD)"
for c in $CASES; do
  n=${c%%:*} k=${c##*:}
  log=$(mktemp)
  t0=$(date +%s)
  (cd "$top" && BUILD=${BUILD:-build} TRACK_COMMITS=$n TRACK_STEP=$k TRACK_COMMENTS=0 \
    TRACK_SAMPLES=3 TRACK_SLOWDOWN=$SLOWDOWN bash tests/349-track-push-step.t) >"$log" 2>&1
  rc=$?
  line=$(grep -m1 '^# bench:' "$log" | sed 's/^# bench: //')
  echo "push of $n commits, step ($SLOWDOWN) at $k: ${line:-no alert named a commit} (test $([[ $rc == 0 ]] && echo passed || echo FAILED), $(($(date +%s) - t0)) s in all)"
  grep '^not ok' "$log" || true
  rm -f "$log"
done
echo "load average now $(cut -d' ' -f1-3 /proc/loadavg)"
