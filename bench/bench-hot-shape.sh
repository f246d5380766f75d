#!/usr/bin/env bash
# make bench-hot-shape: the A/A spread of quick's hot point past 2 threads a
# CPU (kmutex, and glibc's pthread mutex as the peer), one lockbench both
# sides, for several sample shapes and pairings, rounds interleaved so that
# every shape sees the same stretch of this shared machine.  Prints, per
# shape, the rounds, the median seconds a round took (both sides) and the sd
# of the per-round log(A/B) of the mean ops/s.  A measurement to choose a
# shape by, not a test (docs/measured/verdicts.md, 2026-12-02).
#
# SHAPES: space-separated DURATION_MS:REPEAT[:seq] (seq: one side after the
# other, no lockstep) [100:3 25:12 100:3:seq]; ROUNDS [10]; THREADS [8].
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-build}
LB=$top/$BUILD/lockbench
ROUNDS=${ROUNDS:-10}
SHAPES=${SHAPES:-100:3 25:12 100:3:seq}
THREADS=${THREADS:-8}
. "$top/bench/bench-machine.sh"
for shape in $SHAPES; do
  [[ $shape =~ ^[0-9]+:[0-9]+(:seq)?$ ]] || {
    echo "bench-hot-shape: a shape is DURATION_MS:REPEAT or DURATION_MS:REPEAT:seq, not '$shape'" >&2
    exit 2
  }
done
[[ $ROUNDS =~ ^[0-9]+$ && $ROUNDS -ge 3 ]] || { echo "bench-hot-shape: ROUNDS is at least 3" >&2; exit 2; }
[[ $THREADS =~ ^[0-9]+$ && $THREADS -ge 1 ]] || { echo "bench-hot-shape: THREADS is a positive count" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bench_machine_header
echo "hot, $THREADS threads, kmutex and pthread, one binary both sides, $ROUNDS rounds a shape, interleaved"

# one side: side A|B DURATION REPEAT [lockstep options]
side() {
  local out=$1 d=$2 k=$3
  shift 3
  "$LB" run --suite quick --locks pthread,kmutex --workloads hot --threads "$THREADS" \
    --duration-ms "$d" --repeat "$k" --quiet --json "$tmp/$out.json" "$@"
}
: >"$tmp/lines"
for ((r = 0; r < ROUNDS; r++)); do
  for shape in $SHAPES; do
    IFS=: read -r d k mode <<<"$shape"
    t0=$(date +%s.%N)
    if [[ ${mode:-} == seq ]]; then
      side a "$d" "$k"
      side b "$d" "$k"
    else
      rm -f "$tmp/turn"
      side a "$d" "$k" --lockstep "$tmp/turn" --lockstep-side $((r % 2)) &
      side b "$d" "$k" --lockstep "$tmp/turn" --lockstep-side $((1 - r % 2))
      wait $!
    fi
    t1=$(date +%s.%N)
    python3 - "$tmp/a.json" "$tmp/b.json" "$shape" "$t0" "$t1" >>"$tmp/lines" <<'PY'
import json, math, sys
a, b, shape, t0, t1 = sys.argv[1:]
def means(f):
    return {r["lock"]: sum(r["samples"]["ops_per_sec"]) / len(r["samples"]["ops_per_sec"])
            for r in json.load(open(f))["runs"]}
A, B = means(a), means(b)
print(shape, "%.2f" % (float(t1) - float(t0)),
      " ".join("%s %.6f" % (l, math.log(A[l] / B[l])) for l in sorted(A)))
PY
  done
done
python3 - "$tmp/lines" <<'PY'
import collections, math, sys
secs, ratios = collections.defaultdict(list), collections.defaultdict(lambda: collections.defaultdict(list))
order = []
for line in open(sys.argv[1]):
    f = line.split()
    if f[0] not in order:
        order.append(f[0])
    secs[f[0]].append(float(f[1]))
    for i in range(2, len(f), 2):
        ratios[f[0]][f[i]].append(float(f[i + 1]))
def sd(x):
    m = sum(x) / len(x)
    return math.sqrt(sum((v - m) ** 2 for v in x) / (len(x) - 1))
print("%-14s %6s %11s  %s" % ("shape", "rounds", "s a round", "sd of per-round log(A/B)"))
for s in order:
    t = sorted(secs[s])
    print("%-14s %6d %11.1f  %s" % (s, len(t), t[len(t) // 2],
          ", ".join("%s %.1f%%" % (l, 100 * sd(v)) for l, v in sorted(ratios[s].items()))))
PY
