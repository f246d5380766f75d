#!/usr/bin/env bash
# make bench: lockbench figures as ratios against a peer measured in the same
# script on the same machine (these machines are shared and noisy).
#  1. futex-wake against `perf bench futex wake`, same threads
#  2. uncontended ns per lock/unlock pair, every lock over pthread
#  3. hot at 2, 4, 8 threads: kmutex over pthread (throughput) and kmutex over
#     kmutex-2009 (fairness, min/max per-thread ops)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
LB="$top/${BUILD:-build}/lockbench"
J="$top/scripts/lbjson.pl"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cpus=$(nproc)
# ratio A B: A/B with two decimals, "inf" when B is 0
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0) print "inf"; else printf "%.2f", a / b }'; }
echo "machine: $(hostname), $cpus CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), kernel $(uname -r)"
echo

echo "== futex-wake: lockbench vs perf bench futex wake (ms to wake all, 1 at a time, 10 runs each)"
printf '%8s %14s %14s %8s\n' threads lockbench perf ratio
if perf bench futex wake -t 2 >/dev/null 2>&1; then
  for t in 2 8 32 128; do
    "$LB" run --workloads futex-wake --threads "$t" --repeat 10 --json "$tmp/fw.json" --quiet
    lb=$("$J" "$tmp/fw.json" | awk -F'\t' '$4=="wake_ms"{print $5}')
    pf=$(perf bench futex wake -t "$t" -w 1 2>/dev/null | sed -n 's/^Wokeup .* in \([0-9.]*\) ms.*/\1/p' | tail -n 1)
    printf '%8s %14.4f %14.4f %8s\n' "$t" "$lb" "$pf" "$(ratio "$lb" "$pf")"
  done
else
  echo "(perf bench futex wake cannot run here: $(perf bench futex wake -t 2 2>&1 | tail -n 1))"
fi
echo

echo "== uncontended: ns per lock/unlock pair, ratio to pthread (one thread, after a thread exists)"
"$LB" run --workloads uncontended --duration-ms 200 --repeat 5 --json "$tmp/unc.json" --quiet
base=$("$J" "$tmp/unc.json" | awk -F'\t' '$2=="pthread" && $4=="ns_per_pair"{print $5}')
printf '%-18s %10s %8s\n' lock ns/pair ratio
"$J" "$tmp/unc.json" | awk -F'\t' -v b="$base" '$4=="ns_per_pair"{printf "%-18s %10.2f %8.2f%s\n", $2, $5, $5/b, ($5/b > 1.5 ? "  (over 1.5x)" : "")}'
echo

echo "== hot: kmutex / pthread throughput and kmutex / kmutex-2009 fairness (min/max per-thread ops)"
"$LB" run --workloads hot --locks pthread,kmutex,kmutex-2009 --threads 2,4,8 --duration-ms 300 --repeat 5 --json "$tmp/hot.json" --quiet || true
printf '%8s %14s %14s %10s %12s %12s %10s\n' threads pthread kmutex ratio 'fair kmutex' 'fair k-2009' ratio
for t in 2 4 8; do
  get() { "$J" "$tmp/hot.json" | awk -F'\t' -v l="$1" -v m="$2" -v t="threads=$t" '$2==l && $4==m && $3 ~ ("(^|,)" t "(,|$)") {print $5}'; }
  p=$(get pthread ops_per_sec); k=$(get kmutex ops_per_sec)
  fk=$(get kmutex fairness); f9=$(get kmutex-2009 fairness)
  printf '%8s %14.0f %14.0f %10s %12.3f %12.3f %10s\n' "$t" "$p" "$k" "$(ratio "$k" "$p")" "$fk" "$f9" "$(ratio "$fk" "$f9")"
done
