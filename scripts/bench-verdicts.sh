#!/usr/bin/env bash
# make bench-verdicts: how often the verdict code is wrong, from real lockbench
# runs on this machine.  50 A/A comparisons (the same binary and settings on
# both sides) and 50 A/B comparisons with a real, calibrated 5% slowdown of one
# lock (delay-pthread, test build: LOCKBENCH_DELAY_LOOPS of extra work in
# lock()), on the uncontended workload.  Each comparison follows the server's
# policy (scripts/verdict-policy.sh): interleaved rounds (ABBA), 5 rounds
# first; a change found is confirmed on as many rounds again; otherwise 5 more
# while any point is inconclusive, at most 20; the verdicts from compare_results - the
# code the server calls - through `lockbench compare --format json`.
# Prints the false-regression rate (goal <= 2%) and the detection rate (goal
# >= 90%).  Each round gives REPEAT samples a side, as the suites do (3).
# N=50 MIN_ROUNDS=5 MAX_ROUNDS=20 TARGET=0.05 REPEAT=3 may be overridden.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
LB="$top/${BUILD:-build}/lockbench-test"
N=${N:-50}
MIN_ROUNDS=${MIN_ROUNDS:-5}
MAX_ROUNDS=${MAX_ROUNDS:-20}
TARGET=${TARGET:-0.05}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
. "$top/scripts/verdict-policy.sh"
run1() { # run1 DELAY VARIANT ROUND OUT
  LOCKBENCH_DELAY_LOOPS=$1 "$LB" run --locks delay-pthread --workloads uncontended \
    --duration-ms 30 --repeat "${REPEAT:-3}" --variant "$2" --round "$3" --json "$4" --quiet
}
value() { perl -MJSON::PP -0777 -ne 'print decode_json($_)->{runs}[0]{metrics}{ns_per_pair}' "$1"; }

# calibrate: the delay (in loops) that makes a lock/unlock pair 5% slower,
# from interleaved runs so that drift hits both sides
ratio_at() { # ratio_at LOOPS -> median ratio of 9 interleaved pairs
  local i a b
  for i in 1 2 3 4 5 6 7 8 9; do
    run1 0 base 0 "$tmp/c0.json"; a=$(value "$tmp/c0.json")
    run1 "$1" base 0 "$tmp/c1.json"; b=$(value "$tmp/c1.json")
    echo "$b $a" | awk '{ print $1 / $2 }'
  done | sort -g | sed -n 5p
}
lo=0 hi=64
while [[ $(ratio_at $hi | awk -v t="$TARGET" '{ print ($1 < 1 + t) }') == 1 && $hi -lt 65536 ]]; do hi=$((hi * 2)); done
for _ in 1 2 3 4 5 6 7; do
  mid=$(((lo + hi) / 2))
  if [[ $(ratio_at $mid | awk -v t="$TARGET" '{ print ($1 < 1 + t) }') == 1 ]]; then lo=$mid; else hi=$mid; fi
done
DELAY=$hi
echo "calibration: $DELAY loops of extra work make delay-pthread $(ratio_at "$DELAY" | awk '{ printf "%+.1f%%", ($1 - 1) * 100 }') slower per uncontended lock/unlock pair (median of 9 interleaved pairs)"

# one side of a round: the A side runs DELAY_A loops of delay, the B side DELAY_B
side() { # side VARIANT ROUND OUT
  if [[ $1 == base ]]; then run1 "$DELAY_A" base "$2" "$3"; else run1 "$DELAY_B" patched "$2" "$3"; fi
}
compare() { # compare DELAY_A DELAY_B -> "verdict rounds"
  DELAY_A=$1 DELAY_B=$2 policy_verdict side "$tmp"
}

tally() { # tally LABEL DELAY_A DELAY_B
  local i v r f reg=0 imp=0 inc=0 same=0 rounds=0 found=0
  for ((i = 1; i <= N; i++)); do
    read -r v r f < <(compare "$2" "$3")
    rounds=$((rounds + r))
    ((f)) && found=$((found + 1))
    case $v in regression) reg=$((reg + 1)) ;; improvement) imp=$((imp + 1)) ;;
      inconclusive) inc=$((inc + 1)) ;; *) same=$((same + 1)) ;; esac
  done
  printf '%-4s %3d comparisons: %3d found a change and went on to confirm it; final: %3d regression, %3d improvement, %3d no-change, %3d inconclusive; %.1f rounds a side on average\n' \
    "$1" "$N" "$found" "$reg" "$imp" "$same" "$inc" "$(echo "$rounds $N" | awk '{ print $1 / $2 }')"
  eval "${1}_REG=$reg"
}
tally AA 0 0
tally AB 0 "$DELAY"
awk -v a="$AA_REG" -v b="$AB_REG" -v n="$N" 'BEGIN {
  printf "false regressions on A/A: %.1f%% (goal <= 2%%)\n", 100 * a / n
  printf "calibrated slowdowns caught (see calibration above): %.1f%% (goal >= 90%% of 5%%)\n", 100 * b / n }'
