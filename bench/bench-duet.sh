#!/usr/bin/env bash
# make bench-duet: the A/A spread of the single-thread point (uncontended) on
# this machine under three ways of pairing base and patched, the same binary
# on both sides:
#   sequential  one side after the other, the order alternating by round
#               (ABBA), disturbed samples recorded only (--disturb-limit 0);
#   repeat      the same, and a sample whose thread lost more than LIMIT% of
#               its time (steal, run queue) is taken again (--disturb-limit);
#   duet        both sides at the same time, each pinned to its own CPU
#               (which side gets CPU 0 alternates by round), started at
#               one CLOCK_REALTIME instant (Bulej et al., Duet Benchmarking).
# For each lock and mode it prints the coefficient of variation of the
# per-round means of each side and the standard deviation of the paired
# per-round differences (patched / base - 1), which is what the paired
# test of a verdict sees: the smaller, the smaller the change it can find.
# ROUNDS=12 LOCKS=pthread,ticket,kmutex LIMIT=5 LB=path/to/lockbench may be overridden;
# OUT=DIR keeps the documents there.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
LB=${LB:-"$top/${BUILD:-build}/lockbench"}
ROUNDS=${ROUNDS:-12}
LOCKS=${LOCKS:-pthread,ticket,kmutex}
LIMIT=${LIMIT:-5}
if [[ -n ${OUT:-} ]]; then tmp=$OUT; mkdir -p "$tmp"; else tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT; fi
echo "machine: $(hostname), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), kernel $(uname -r)"
echo "load: $(cut -d' ' -f1-3 /proc/loadavg); steal so far $(awk '/^cpu /{t=0; for(i=2;i<=NF;i++) t+=$i; printf "%.1f%%", 100*$9/t}' /proc/stat) of CPU time since boot"
echo "uncontended (quick suite: 3 samples of 80 ms a side a round), locks $LOCKS, $ROUNDS rounds a mode"
run() { # run MODE VARIANT ROUND [extra args]
  local mode=$1 variant=$2 round=$3
  shift 3
  "$LB" run --suite quick --workloads uncontended --locks "$LOCKS" --variant "$variant" \
    --round "$round" --json "$tmp/$mode-$variant-$round.json" --quiet "$@"
}
now_ns() { date +%s%N; }
for ((r = 0; r < ROUNDS; r++)); do
  # ABBA: rounds 0, 3, 4, 7, ... run base first
  if (((r % 4) == 0 || (r % 4) == 3)); then first=base second=patched; else first=patched second=base; fi
  run sequential "$first" "$r" --disturb-limit 0
  run sequential "$second" "$r" --disturb-limit 0
  run repeat "$first" "$r" --disturb-limit "$LIMIT"
  run repeat "$second" "$r" --disturb-limit "$LIMIT"
  at=$(($(now_ns) + 300000000))
  if ((r % 2)); then bc=1 pc=0; else bc=0 pc=1; fi
  run duet base "$r" --disturb-limit 0 --cpus "$bc" --start-at "$at" &
  run duet patched "$r" --disturb-limit 0 --cpus "$pc" --start-at "$at"
  wait
done
perl "$top/bench/bench-duet-spread.pl" "$tmp" "$ROUNDS" sequential repeat duet
