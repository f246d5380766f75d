#!/usr/bin/env bash
# bench/verdict-rejudge.sh DIR... - judge again the round documents that
# `make bench-verdicts` kept (KEEP_DIR=DIR: DIR/CASE-I/r-bN.json and
# r-pN.json, and DIR/plan.json when the case was planned), with this tree's
# `lockbench compare` under the server's round policy
# (bench/verdict-policy.sh with REUSE=1): nothing is measured.  A
# comparison whose policy asks for a round that was not kept is counted as
# "ran-out".  Prints a line per comparison (DIR/CASE-I, verdict, rounds a
# side, the round from which a found change was confirmed or 0), then per
# case over every DIR: N, flagged (regression or improvement), no-change,
# inconclusive, ran-out.  Several DIRs (runs of one version) count together.
# TEST (log), MIN_ROUNDS (5) and MAX_ROUNDS (20) as bench-verdicts; each
# DIR's plan.json is its comparisons' PLAN (NOPLAN=1: none).  Exit 2 on bad
# input (no DIR, a DIR without kept comparisons).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
LB=${LB:-$top/${BUILD:-build}/lockbench}
MIN_ROUNDS=${MIN_ROUNDS:-5}
MAX_ROUNDS=${MAX_ROUNDS:-20}
TEST=${TEST:-log}
export LB MIN_ROUNDS MAX_ROUNDS TEST
# shellcheck source=verdict-policy.sh
source "$top/bench/verdict-policy.sh"

(($# > 0)) || { echo "usage: $0 DIR... (directories bench-verdicts kept: KEEP_DIR)" >&2; exit 2; }
[[ -x $LB ]] || { echo "verdict-rejudge: no $LB (make all)" >&2; exit 2; }
# the runner of a round that was not kept: the comparison ran out
kept_only() { echo "ran-out $2 0"; exit 0; }

declare -A N FLAG SAME INC OUT
for dir in "$@"; do
  compgen -G "$dir/*-[0-9]*/r-b0.json" >/dev/null ||
    { echo "verdict-rejudge: $dir holds no kept comparison (CASE-I/r-b0.json)" >&2; exit 2; }
  plan=
  [[ ${NOPLAN:-0} != 1 && -s $dir/plan.json ]] && plan=$dir/plan.json
  for cmp in $(ls -d "$dir"/*-[0-9]* | sort -V); do
    c=$(basename "$cmp")
    c=${c%-*}
    read -r v r f < <(PLAN=$plan REUSE=1 policy_verdict kept_only "$cmp")
    echo "$cmp $v $r $f"
    N[$c]=$((${N[$c]:-0} + 1))
    case $v in
    regression | improvement) FLAG[$c]=$((${FLAG[$c]:-0} + 1)) ;;
    no-change) SAME[$c]=$((${SAME[$c]:-0} + 1)) ;;
    ran-out) OUT[$c]=$((${OUT[$c]:-0} + 1)) ;;
    *) INC[$c]=$((${INC[$c]:-0} + 1)) ;;
    esac
  done
done
printf '%-8s %4s %8s %10s %13s %8s\n' case N flagged no-change inconclusive ran-out
for c in $(printf '%s\n' "${!N[@]}" | sort); do
  printf '%-8s %4d %8d %10d %13d %8d\n' "$c" "${N[$c]}" "${FLAG[$c]:-0}" "${SAME[$c]:-0}" "${INC[$c]:-0}" "${OUT[$c]:-0}"
done
