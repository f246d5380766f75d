#!/usr/bin/env bash
# A lock that loses wakeups (test build only) is a lockup: the run stops,
# stacks are captured, the JSON records it, and the rest of the suite goes on.
. "$(dirname "$0")/lib/tap.sh"
LB="$BIN/lockbench-test"
J="$TOP/scripts/lbjson.pl"

out=$("$LB" list); like "$out" "broken-lostwake .*\[test build only\]" "the test build lists the broken lock"
"$LB" run --workloads hot --locks broken-lostwake,pthread --threads 4 --duration-ms 2000 --repeat 1 \
  --stall-ms 500 --json "$T/r.json" >"$T/out" 2>"$T/err"
is $? 3 "a run with a lockup exits 3"
out=$(cat "$T/out")
like "$out" "^hot +broken-lostwake .*LOCKUP \(stall\): no thread made progress" "the table names the lock, workload and stall"
like "$out" "^hot +pthread .*ops_per_sec" "the suite went on to pthread after the lockup"
rows=$("$J" "$T/r.json")
like "$rows" $'^hot\tbroken-lostwake\t.*threads=4.*\tLOCKUP\tstall' "the JSON records the lockup at 4 threads"
like "$rows" $'^hot\tpthread\t.*\tops_per_sec\t' "and pthread's figures"
stacks=$(perl -MJSON::PP -0777 -ne 'my $d = decode_json($_); for (@{$d->{runs}}) { print $_->{lockup}{stacks} if $_->{lockup} }' "$T/r.json")
like "$stacks" "futex" "the captured stacks show threads asleep on a futex"
like "$stacks" "lock_thread|broken" "gdb's backtrace names the benchmark's frames"
n=$(grep -c '^Thread ' <<<"$stacks"); [[ $n -ge 4 ]]; ok $? "every thread's stack is there ($n threads)"
out=$("$LB" validate --locks broken-lostwake --stall-ms 500 2>&1); rc=$?
is "$rc" 3 "validate fails the broken lock"
like "$out" "FAIL broken-lostwake +stall" "and says it stalled"
# this test's runs only (their --json is under $T): other runs on a shared machine are not ours
pgrep -f -- "--json $T/" >/dev/null; is $? 1 "no benchmark process is left behind"

# a benchmark process killed from outside (what the OOM killer does) is the
# machine's failure: an error naming the signal, no lockup, the suite goes on
"$LB" run --workloads hot --locks pthread,ttas --threads 2 --duration-ms 4000 --repeat 1 \
  --json "$T/k.json" >"$T/kout" 2>"$T/kerr" &
lb=$!
child=""
for ((i = 0; i < 100; i++)); do
  sleep 0.1
  child=$(pgrep -P $lb | head -n 1)
  [[ -n $child ]] && break
done
[[ -n $child ]] && kill -KILL "$child"
wait $lb
is $? 1 "a point killed from outside fails the run (exit 1), it is no lockup (exit 3)"
like "$(cat "$T/kerr")" "killed from outside by signal 9 \(Killed; the OOM killer\?\): a failure of the machine, not a lockup" \
  "stderr names the signal and says it is the machine's failure"
rows=$("$J" "$T/k.json")
unlike "$rows" $'\tLOCKUP\t' "the JSON records no lockup"
like "$rows" $'^hot\tttas\t.*\tops_per_sec\t' "the suite went on to the next lock"
done_testing
