#!/usr/bin/env bash
# The verdict policy, simulated at a small N (bench/verdict_sim.c; make
# bench-verdict-sim runs every case at 10,000 jobs): synthetic rounds with
# this machine kind's noise shapes go through the server's own compare,
# futility and look code, and the rates a maintainer relies on must hold.
# Each bound comes from the binomial at N = 6000 jobs a case, so that the
# policy as it is passes with room (a bound 3.5 standard deviations or
# more above its rate at 10,000 jobs, docs/measured/2026-12-05-verdict-sim.md)
# and a policy that doubles the false Tested-by rate at the margin (0.78% ->
# 1.56%: 47 -> 94 of 6000, sd 6.8 and 9.6) fails.  Doubling the level
# no-change is judged at (compare_eq_level) did: 55 -> 130 at seed 1.
source "$(dirname "$0")/lib/tap.sh"

SIM=$BIN/verdict-sim
[[ -x $SIM ]] || bail_out "no $SIM (make $BUILD/verdict-sim)"
N=6000
out=$("$SIM" -n $N -s 1 -c hot8-aa,hot8-margin,hot8-margin1.5,nop,worst2-aa,worst2-starve)
ok $? "verdict-sim runs six cases of $N jobs"
count() { # CASE FIELD
  sed -n "s/^RESULT case=$1 .* $2=\([0-9]*\).*/\1/p" <<<"$out"
}
diag "$(grep -v '^RESULT' <<<"$out")"

# A/A: 0 <= k <= 44 of 6000 keeps the upper 95% Clopper-Pearson bound at or
# under 1% (the goal); the policy's rate is about 0.34% (20, sd 4.5)
aa=$(( $(count hot8-aa regression) + $(count hot8-aa improvement) ))
ok $((aa > 44)) "A/A on hot kmutex at 8 threads: $aa of $N regression or improvement (<= 44: upper bound <= 1%)"
# at exactly the margin: 0.78% get a Tested-by (47); 72 is 3.7 sd above it
# and 2.3 sd below the doubled rate (the goal is <= 5%, 300)
tm=$(count hot8-margin tested-by)
ok $((tm > 72)) "hot at 8 threads 10% worse, exactly its margin: $tm of $N Tested-by (<= 72)"
# at 1.5 times the margin: the goal's upper bound of 1% (<= 44); about 0.09% (5)
t15=$(count hot8-margin1.5 tested-by)
ok $((t15 > 44)) "hot at 8 threads 15% worse, 1.5x its margin: $t15 of $N Tested-by (<= 44: upper bound <= 1%)"
# a nop: +1 instruction a pair and no time: its count decides nothing alone,
# so it is a regression no more often than an A/A (the policy: about 0.3%)
nop=$(count nop regression)
ok $((nop > 44)) "a nop (+1 instruction a pair, 30 -> 31): $nop of $N regression (<= 44)"
# and, paired as the agent pairs uncontended (lockstep: per-round paired sd
# 0.19%), it gets a Tested-by in every job (10,000 of 10,000 at full N);
# >= 5900 (98.3%) leaves room and fails a policy that lets the note decide
nt=$(count nop tested-by)
ok $((nt < 5900)) "a nop: $nt of $N Tested-by (>= 5900)"
# the simulated uncontended row takes as many samples a round as the quick
# suite does (lockbench/src/suite.c): its nop rate rests on that
want=$("$BIN/lockbench" run --suite quick --workloads uncontended --locks kmutex --no-instructions \
  --duration-ms 1 --json - --quiet 2>/dev/null | perl -MJSON::PP -0777 -ne 'print scalar @{ decode_json($_)->{runs}[0]{samples}{ns_per_pair} }')
got=$(sed -n 's/^row unc .* \([0-9]*\) samples\{0,1\} a round.*/\1/p' <<<"$out")
is "$got" "$want" "the simulated uncontended row takes the quick suite's samples a round ($want)"
# the worst wait of a sleeping lock's waiter (long-hold, wait_worst_us, a
# tail: per-round paired sd 29%, margin 75%): an A/A is flagged no more
# often than the other rows (about 0.2%, 11 at seed 1; <= 44), and a lock
# whose woken waiter never asks for a handoff (x1.59, as kmutex-woken-steal
# measured) is a regression in 91.3% (5480, sd 22; >= 5400, the goal's 90%)
# and gets a Tested-by in 1.3% (78, sd 9; <= 120)
wa=$(( $(count worst2-aa regression) + $(count worst2-aa improvement) ))
ok $((wa > 44)) "A/A on kmutex's worst wait under a long hold: $wa of $N regression or improvement (<= 44)"
ws=$(count worst2-starve regression)
ok $((ws < 5400)) "a woken waiter that never asks for a handoff: $ws of $N regression (>= 5400: 90%)"
wt=$(count worst2-starve tested-by)
ok $((wt > 120)) "and $wt of $N Tested-by (<= 120)"
done_testing
