#!/usr/bin/env bash
# make bench-abba: the A/A spread of the single-thread point (uncontended,
# ns_per_pair) on this machine under two ways of pairing base and patched,
# the same binary on both sides:
#   round  one side's whole run after the other's, the order alternating by
#          round (what the agent does by default);
#   abba   both started together and taking turns per sample (~0.1 s), A B B A
#          (lockbench run --abba-side 0|1 --start-at; the agent's --abba on),
#          which side goes first alternating by round.
# Disturbed samples are recorded only (--disturb-limit 0) in both.  Prints,
# per lock and mode, the CoV of each side's per-round means and the sd of
# the paired per-round differences, which is what the paired test of a
# verdict sees (bench-rows-spread.pl).
# ROUNDS=12 LOCKS=pthread,ticket,kmutex LB=path/to/lockbench OUT=DIR may be overridden.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
LB=${LB:-"$top/${BUILD:-build}/lockbench"}
ROUNDS=${ROUNDS:-12}
LOCKS=${LOCKS:-pthread,ticket,kmutex}
if [[ -n ${OUT:-} ]]; then tmp=$OUT; mkdir -p "$tmp"; else tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT; fi
. "$top/bench/bench-machine.sh"
bench_machine_header
echo "uncontended (quick suite: 3 samples of 80 ms a side a round), locks $LOCKS, $ROUNDS rounds a mode"
run() { # run MODE VARIANT ROUND [extra args]
  local mode=$1 variant=$2 round=$3
  shift 3
  "$LB" run --suite quick --workloads uncontended --locks "$LOCKS" --no-instructions \
    --disturb-limit 0 --variant "$variant" --round "$round" --json "$tmp/$mode-$variant-$round.json" --quiet "$@"
}
for ((r = 0; r < ROUNDS; r++)); do
  if (((r % 4) == 0 || (r % 4) == 3)); then first=base second=patched; else first=patched second=base; fi
  run round "$first" "$r"
  run round "$second" "$r"
  at=$(($(date +%s%N) + 300000000))
  # each side's slots and start times go to abba.log, not to the table
  run abba base "$r" --abba-side $((r % 2)) --start-at "$at" 2>>"$tmp/abba.log" &
  run abba patched "$r" --abba-side $(((r + 1) % 2)) --start-at "$at" 2>>"$tmp/abba.log"
  wait
done
bench_machine_header | sed 's/^/after: /'
perl "$top/bench/bench-rows-spread.pl" "$tmp" "$ROUNDS" ns_per_pair round abba
