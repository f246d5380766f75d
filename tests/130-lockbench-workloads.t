#!/usr/bin/env bash
# Each workload runs and reports the metrics DESIGN.md names, with directions.
. "$(dirname "$0")/lib/tap.sh"
LB="$BIN/lockbench"
J="$TOP/scripts/lbjson.pl"
run() { "$LB" run --quiet --duration-ms 60 --repeat 2 --json "$T/w.json" "$@" && "$J" "$T/w.json"; }

rows=$(run --workloads cs-sweep --locks ttas --threads 2 --cs-loops 0,200 --outside-loops 50)
like "$rows" $'^cs-sweep\tttas\tcs_loops=0,.*outside_loops=50.*\tops_per_sec' "cs-sweep: critical section 0"
like "$rows" $'^cs-sweep\tttas\tcs_loops=200,.*\tops_per_sec' "cs-sweep: critical section 200"
rows=$(run --workloads many-locks --locks mcs --threads 3 --nlocks 7)
like "$rows" $'^many-locks\tmcs\t.*nlocks=7.*threads=3\tops_per_sec' "many-locks: ops/s with 7 locks"
rows=$(run --workloads oversub --locks futex3 --threads 8)
like "$rows" $'^oversub\tfutex3\t.*threads=8\tcpu_ns_per_op' "oversub: CPU time per op"
rows=$(run --workloads long-hold --locks kmutex --threads 3 --hold-us 50 --duration-ms 100)
for m in wait_p50_us wait_p99_us wait_max_us cpu_us_per_acq fairness; do
  like "$rows" $'^long-hold\tkmutex\t.*hold_us=50.*\t'"$m"$'\t' "long-hold: $m"
done
# the worst wait of any thread: for a lock whose waiters sleep, at more than one thread
for m in wait_worst_us wait_p999_worst_us; do
  like "$rows" $'^long-hold\tkmutex\t.*threads=3\t'"$m"$'\t' "long-hold: $m of a sleeping lock"
done
rows=$(run --workloads long-hold --locks tas,kmutex --threads 1,2 --hold-us 50)
unlike "$rows" $'^long-hold\ttas\t.*\twait_(p999_)?worst_us\t' "none for a spin lock (no woken waiter to steal from)"
unlike "$rows" $'^long-hold\tkmutex\t.*threads=1\twait_(p999_)?worst_us\t' "none at one thread"
# wake-latency: a waiter that slept on the held lock, timed from the unlock to its lock() returning
rows=$(run --workloads wake-latency --locks futex3,tas)
for m in wakeup_p50_us wakeup_p99_us; do
  like "$rows" $'^wake-latency\tfutex3\tduration_ms=60,hold_us=100,threads=2\t'"$m"$'\t[0-9.e+-]+\t2$' "wake-latency: $m, a sample a repetition"
done
slept=$(awk -F'\t' '$1 == "wake-latency" && $2 == "futex3" && $4 == "slept_pct" { print $5 }' <<<"$rows")
ok "$(awk -v v="$slept" 'BEGIN { exit !(v > 50) }'; echo $?)" "wake-latency: the waiter of a sleeping lock slept in most acquisitions ($slept%)"
ok "$(awk -F'\t' '$2 == "futex3" && $4 == "wakeup_p50_us" { p50 = $5 } $2 == "futex3" && $4 == "wakeup_p99_us" { p99 = $5 }
  END { exit !(p50 > 0 && p99 >= p50) }' <<<"$rows"; echo $?)" "wake-latency: 0 < p50 <= p99"
like "$rows" $'^wake-latency\ttas\t.*\tslept_pct\t0\t' "wake-latency: a spin lock's waiter never sleeps"
unlike "$rows" $'^wake-latency\ttas\t.*\twakeup_p' "and it has no wake-up to time"
if [[ -x "$BIN/lockbench-test" ]]; then
  # a lock that loses a wake-up leaves the waiter asleep: the watchdog calls it a lockup
  "$BIN/lockbench-test" run --workloads wake-latency --locks broken-lostwake --duration-ms 2000 --repeat 1 \
    --stall-ms 300 --no-stacks --quiet --json "$T/lost.json"
  rows=$("$J" "$T/lost.json")
  like "$rows" $'^wake-latency\tbroken-lostwake\t.*\tLOCKUP\tstall' "wake-latency: a lost wake-up is a lockup"
else
  skip "wake-latency: a lost wake-up is a lockup" "no build/lockbench-test"
fi
rows=$(run --workloads futex-wake --threads 16 --wake-batch 4)
like "$rows" $'^futex-wake\tkernel\tthreads=16,wake_batch=4\twake_ms\t[0-9.e-]+\t2$' "futex-wake: ms to wake 16, 4 at a time"
rows=$(run --workloads futex-hash --threads 2 --futexes 64)
like "$rows" $'^futex-hash\tkernel\t.*futexes=64.*\tops_per_sec' "futex-hash: ops/s"
is "$(jq -r '.runs[0].params.pinned' "$T/w.json")" 1 \
  "futex-hash: every thread ran bound to one CPU, as perf bench futex hash pins them"
rows=$(run --workloads vfs-creat-unlink --threads 2 --dir "$T")
like "$rows" $'^vfs-creat-unlink\tkernel\t.*threads=2\tops_per_sec' "vfs-creat-unlink: ops/s in the given directory"
is "$(ls "$T" | grep -c lockbench)" 0 "vfs-creat-unlink leaves no files behind"
rows=$(run --workloads aim7-mix --threads 1,3 --duration-ms 200)
like "$rows" $'^aim7-mix\tkernel\tduration_ms=200,users=3\tjpm\t[0-9.e+]+\t2' "aim7-mix: JPM at 3 users"
grep -q '"jpm": "JPM"' "$T/w.json"; ok $? "aim7-mix: the unit is JPM"
out=$("$LB" run --workloads vfs-creat-unlink --dir /nonexistent/x 2>&1); is $? 2 "an unusable --dir exits 2"
done_testing
