#!/usr/bin/env bash
# make bench-aa: what a harmless patch to kmutex gets back, from real runs on
# this machine.  N A/A comparisons (the same binary on both sides) of the
# smoke suite narrowed to kmutex with pthread as the untouched control, under
# the policy tests/300-agent-e2e.t gives the server (10 rounds first, at most 30, a change
# found confirmed on as many again: bench/verdict-policy.sh).  This is the
# comment-only series of tests/300-agent-e2e.t and tests/600-web-e2e.t without the server around it.
# Prints each comparison's verdict and rounds, then the false regressions
# and improvements.  N=20 MIN_ROUNDS=10 MAX_ROUNDS=30 may be overridden.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
LB="$top/${BUILD:-build}/lockbench"
N=${N:-20}
MIN_ROUNDS=${MIN_ROUNDS:-10}
MAX_ROUNDS=${MAX_ROUNDS:-30}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
. "$top/bench/verdict-policy.sh"
side() { # side VARIANT ROUND OUT
  "$LB" run --suite smoke --locks pthread,kmutex --controls pthread --variant "$1" --round "$2" \
    --json "$3" --quiet
}
reg=0 imp=0 same=0 inc=0 rounds=0 found=0
for ((i = 1; i <= N; i++)); do
  read -r v r f < <(policy_verdict side "$tmp")
  if ((f)); then
    found=$((found + 1))
    echo "A/A $i: $v after $r rounds a side (rounds 0-$((f - 1)) found a change, confirmed from $f on)"
  else
    echo "A/A $i: $v after $r rounds a side"
  fi
  rounds=$((rounds + r))
  case $v in regression) reg=$((reg + 1)) ;; improvement) imp=$((imp + 1)) ;;
    inconclusive) inc=$((inc + 1)) ;; *) same=$((same + 1)) ;; esac
done
printf 'smoke A/A, kmutex with pthread as control, %d comparisons: %d found a change (what the verdict would have been without confirmation); final: %d regression, %d improvement, %d no-change, %d inconclusive; %.1f rounds a side on average\n' \
  "$N" "$found" "$reg" "$imp" "$same" "$inc" "$(echo "$rounds $N" | awk '{ print $1 / $2 }')"
