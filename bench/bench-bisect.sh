#!/usr/bin/env bash
# make bench-bisect: the tracker's two figures.
#  1. False steps over noise-only histories: N histories (default 20) of P
#     commits (default 12), each point a real `lockbench run` of the smoke
#     suite narrowed to futex3 on this machine, one point of each history made
#     an outlier (ten times its value); `lockbench changepoint` (the tracker's
#     E-Divisive with its defaults) over futex3's uncontended ns per pair and
#     hot ops/s at 2 threads (bimodal on 2 vCPUs).  A history with a step
#     proposed counts as a false proposal.  Then, as the tracker does, each
#     proposed step in the worse direction gets its confirming A/B: the two
#     commits of a noise-only history are the same code, so base and patched
#     are this build's lockbench, interleaved rounds of the same point judged
#     by `lockbench compare` (the verdict code) the way the server's results.c
#     asks for rounds: stages of MINR (5) up to MAXR (20) while inconclusive,
#     and a change found is confirmed by MINR more rounds on their own
#     (--confirm-from).  Only a `regression` there is an alert: the figure
#     against the goal (0 alerts in 20 histories).  A step in the better
#     direction would only ever close an alert, so it gets no A/B here.
#  2. Steps and wall time from a confirmed alert to the named commit: the
#     20-commit history of tests/343-track-bisect.t (real server, PostgreSQL,
#     git daemon and agents), its "# bench:" lines.  SKIP_E2E=1 leaves it out.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
LB="$top/${BUILD:-build}/lockbench"
N=${N:-20}
P=${P:-12}
MINR=${MINR:-5}
MAXR=${MAXR:-20}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$top/bench/bench-machine.sh"
bench_machine_header

# ab WORKLOAD JQ-ROW-FILTER: the verdict of an A/B of this lockbench against itself on one row
ab() {
  local wl=$1 row=$2 rounds=$MINR cf=0 r=0 v bases patched
  rm -f "$tmp"/ab-*.json
  while :; do
    for (( ; r < rounds; r++)); do
      "$LB" run --suite smoke --workloads "$wl" --locks futex3 --threads 1,2 --round $r \
        --json "$tmp/ab-b$r.json" --quiet >/dev/null 2>&1
      "$LB" run --suite smoke --workloads "$wl" --locks futex3 --threads 1,2 --variant patched \
        --round $r --json "$tmp/ab-p$r.json" --quiet >/dev/null 2>&1
    done
    bases=$(ls "$tmp"/ab-b*.json | sort -V | paste -sd,)
    patched=$(ls "$tmp"/ab-p*.json | sort -V | paste -sd,)
    v=$("$LB" compare --format json $( ((cf > 0)) && echo --confirm-from $cf) "$bases" "$patched" |
      jq -r "[.. | objects | select(has(\"verdict\") and .workload == \"$wl\" and .lock == \"futex3\") | $row | .verdict][0] // \"none\"")
    if ((cf == 0)) && [[ $v == regression || $v == improvement ]]; then
      cf=$rounds
      rounds=$((rounds + MINR))
    elif ((cf == 0)) && [[ $v == inconclusive ]] && ((rounds < MAXR)); then
      rounds=$((rounds + MINR))
    else
      echo "$v $rounds"
      return
    fi
  done
}
# worse STEPLINES SIGN: how many proposed steps go the worse way (+ for ns, - for ops/s)
worse() { grep -c "^step at .*(${2}[0-9]" <<<"$1" || true; }

false_unc=0 false_hot=0 abs=0 alerts=0 ab_secs=0
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
  cu=$("$LB" changepoint "$tmp/unc")
  ch=$("$LB" changepoint "$tmp/hot")
  su=$(tail -1 <<<"$cu")
  sh=$(tail -1 <<<"$ch")
  [[ $su == "0 step(s)"* ]] || false_unc=$((false_unc + 1))
  [[ $sh == "0 step(s)"* ]] || false_hot=$((false_hot + 1))
  echo "history $h (outlier at $out): uncontended: $su; hot: $sh"
  raised=0
  t0=$(date +%s)
  for ((k = 0; k < $(worse "$cu" +); k++)); do
    read -r v n <<<"$(ab uncontended 'select(.metric == "ns_per_pair")')"
    abs=$((abs + 1))
    echo "  confirming A/B, uncontended ns_per_pair: $v after $n rounds a side"
    [[ $v == regression ]] && raised=1
  done
  for ((k = 0; k < $(worse "$ch" -); k++)); do
    read -r v n <<<"$(ab hot 'select(.metric == "ops_per_sec" and (.params | test("threads=2")))')"
    abs=$((abs + 1))
    echo "  confirming A/B, hot ops_per_sec at 2 threads: $v after $n rounds a side"
    [[ $v == regression ]] && raised=1
  done
  ab_secs=$((ab_secs + $(date +%s) - t0))
  alerts=$((alerts + raised))
done
echo "false proposals over $N noise-only histories of $P commits with one outlier each:" \
  "uncontended $false_unc, hot $false_hot ($(($(date +%s) - start)) s)"
echo "alerts raised (a proposed worse step whose confirming A/B says regression): $alerts of $N" \
  "histories (goal 0); $abs proposed step(s) in the worse direction, each given its confirming A/B" \
  "(${ab_secs} s; steps in the better direction get none); load average now $(cut -d' ' -f1-3 /proc/loadavg)"

if [[ ${SKIP_E2E:-0} != 1 ]]; then
  echo "end to end (tests/343-track-bisect.t, several minutes):"
  t0=$(date +%s)
  (cd "$top" && BUILD=${BUILD:-build} bash tests/343-track-bisect.t) >"$tmp/e2e.log" 2>&1 || true
  grep -E '^# bench:|^not ok' "$tmp/e2e.log" || echo "(no figures: see a run of tests/343-track-bisect.t)"
  echo "tests/343-track-bisect.t took $(($(date +%s) - t0)) s"
fi
