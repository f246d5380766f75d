#!/usr/bin/env bash
# make bench-bisect: the tracker's two figures (issue 14).
#  1. False steps over noise-only histories: N histories (default 20) of P
#     commits (default 12), each point a real `lockbench run` of the smoke
#     suite narrowed to futex3 on this machine, one point of each history made
#     an outlier (ten times its value); `lockbench changepoint` (the tracker's
#     E-Divisive with its defaults) over futex3's uncontended ns per pair and
#     hot ops/s at 2 threads (bimodal on 2 vCPUs).  A history with a step
#     proposed counts as a false proposal; the tracker would then run an A/B
#     of the two commits, and only a regression verdict there is an alert, so
#     this is an upper bound of the false alerts.
#  2. Steps and wall time from a confirmed alert to the named commit: the
#     20-commit history of tests/34-track-bisect.t (real server, PostgreSQL,
#     git daemon and agents), its "# bench:" lines.  SKIP_E2E=1 leaves it out.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
LB="$top/${BUILD:-build}/lockbench"
N=${N:-20}
P=${P:-12}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

false_unc=0 false_hot=0
start=$(date +%s)
for ((h = 1; h <= N; h++)); do
  : >"$tmp/unc" && : >"$tmp/hot"
  out=$(((h * 5) % P))
  for ((k = 0; k < P; k++)); do
    "$LB" run --suite smoke --workloads uncontended,hot --locks futex3 --threads 1,2 --json "$tmp/r.json" \
      --quiet >/dev/null 2>&1
    u=$(jq '.runs[] | select(.workload == "uncontended") | .metrics.ns_per_pair' "$tmp/r.json")
    o=$(jq '.runs[] | select(.workload == "hot" and .params.threads == 2) | .metrics.ops_per_sec' "$tmp/r.json")
    if ((k == out)); then
      u=$(awk -v v="$u" 'BEGIN { print v * 10 }')
      o=$(awk -v v="$o" 'BEGIN { print v * 10 }')
    fi
    echo "$u" >>"$tmp/unc"
    echo "$o" >>"$tmp/hot"
  done
  su=$("$LB" changepoint "$tmp/unc" | tail -1)
  sh=$("$LB" changepoint "$tmp/hot" | tail -1)
  [[ $su == "0 step(s)"* ]] || false_unc=$((false_unc + 1))
  [[ $sh == "0 step(s)"* ]] || false_hot=$((false_hot + 1))
  echo "history $h (outlier at $out): uncontended: $su; hot: $sh"
done
echo "false proposals over $N noise-only histories of $P commits with one outlier each:" \
  "uncontended $false_unc, hot $false_hot ($(($(date +%s) - start)) s)"

if [[ ${SKIP_E2E:-0} != 1 ]]; then
  echo "end to end (tests/34-track-bisect.t, several minutes):"
  t0=$(date +%s)
  (cd "$top" && BUILD=${BUILD:-build} bash tests/34-track-bisect.t) >"$tmp/e2e.log" 2>&1 || true
  grep -E '^# bench:|^not ok' "$tmp/e2e.log" || echo "(no figures: see a run of tests/34)"
  echo "tests/34 took $(($(date +%s) - t0)) s"
fi
