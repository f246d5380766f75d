#!/usr/bin/env bash
# lockbench kernel: a mutex.c patch that never wakes the waiter it picked in
# __mutex_unlock_slowpath (the lost wakeup behind "locked up at 2000 users" in the
# mutex rewrite's review) is reported as a lockup of the patched kernel, with the kernel's
# "blocked for more than" lines and the call traces; the base stays clean.
# run-tests: group kernel (one base build and qemu guests whose lockup detectors want their CPUs)
. "$(dirname "$0")/lib/tap.sh"
LB="$BIN/lockbench"
J="$TOP/scripts/lbjson.pl"

tree=$("$TOP/scripts/kernel-source.sh" 2>"$T/src.err")
ok $? "the kernel source is cached" || { diag "$(cat "$T/src.err")"; done_testing; exit 1; }
"$LB" kernel build --tree "$tree" >"$T/build.out" 2>&1
ok $? "the base kernel builds (or is up to date)" || diag "$(tail -n 20 "$T/build.out")"

"$TOP/scripts/kernel-source.sh" --copy "$T/patched" >/dev/null
(cd "$T/patched" && git apply) <"$TOP/tests/kernel-patches/lost-wakeup-mutex.patch"
ok $? "the broken-unlock patch applies"
"$LB" kernel build --tree "$T/patched" --reuse "$tree/locklab-out" --variant patched >"$T/pbuild.out" 2>&1
ok $? "the broken kernel builds" || diag "$(tail -n 20 "$T/pbuild.out")"

run() { # run VARIANT IMAGE: locktorture on mutexes only, 2 and 4 writers
  "$LB" kernel run --kernel "$2" --variant "$1" --types mutex_lock --writers 2,4 --no-lockbench \
    --timeout-s 90 --console-dir "$T/console-$1" --json "$T/$1.json" >"$T/$1.out" 2>"$T/$1.err"
}
run base "$tree/locklab-out/arch/x86/boot/bzImage"
is $? 0 "base: locktorture mutex_lock runs clean" || diag "$(cat "$T/base.out" "$T/base.err")"
unlike "$("$J" "$T/base.json")" $'\tLOCKUP\t' "base: no lockup in the document"

start=$(date +%s)
run patched "$T/patched/locklab-out/arch/x86/boot/bzImage"
is $? 3 "patched: the run exits 3 (lockup)" || diag "$(cat "$T/patched.err")"
took=$(($(date +%s) - start))
[[ $took -lt 120 ]]; ok $? "the hung kernel was caught and stopped well before the deadlines (${took} s for two boots)"
out=$(cat "$T/patched.out")
like "$out" "locktorture +mutex_lock +writers=2 +LOCKUP \(hung-task\): INFO: task .* blocked for more than [0-9]+ seconds" \
  "the table names the writer count and the kernel's hung-task line"
rows=$("$J" "$T/patched.json")
like "$rows" $'^locktorture\tmutex_lock\twriters=2\tLOCKUP\thung-task' "the JSON records the lockup at 2 writers"
like "$rows" $'^locktorture\tmutex_lock\twriters=4\tLOCKUP\thung-task' "and at 4 writers"
lk=$(perl -MJSON::PP -0777 -ne 'my $d = decode_json($_); for (@{$d->{runs}}) { print "MSG $_->{lockup}{message}\n$_->{lockup}{stacks}\n" if $_->{lockup} }' "$T/patched.json")
# the first task the detector names: a locktorture writer, or the boot's own task
# (swapper/0:1 starting the writers) when the lost wakeup catches it first
like "$lk" "^MSG INFO: task (lock_torture_wr|swapper/[0-9]+):[0-9]+ blocked for more than [0-9]+ seconds" \
  "the message is the kernel's hung-task line, about a locktorture task"
like "$lk" "Call Trace:" "the stacks hold the call trace"
like "$lk" "mutex_lock" "which shows the task asleep in mutex_lock"
like "$(cat "$T/console-patched/locktorture-mutex_lock-w2.log")" "blocked for more than" "the console log is kept"
pgrep -f "qemu-system-x86_64.*$T" >/dev/null; is $? 1 "no qemu is left behind"
done_testing
