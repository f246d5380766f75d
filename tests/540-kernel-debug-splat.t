#!/usr/bin/env bash
# lockbench kernel, the debug variant (lockdep, DEBUG_MUTEXES,
# DEBUG_ATOMIC_SLEEP): a patch that takes two mutexes in opposite orders on
# two paths (serialised by a gate, so no hang) gives lockdep's "possible
# circular locking dependency detected", and a patch that takes a mutex with
# a spinlock held gives might_sleep's "sleeping function called from invalid
# context"; `lockbench compare` calls each a splat, with the kernel's words
# and call trace; the base debug kernel is clean.  Both patches are to
# kernel/locking/locktorture.c's torture_mutex_lock (tests/kernel-patches/),
# which every locktorture mutex_lock boot runs.  The builds are incremental
# from the cached debug base (about 20 s each; the first run builds the base,
# about 7 minutes on 2 cores).
# run-tests: group kernel (one base build and qemu guests whose lockup detectors want their CPUs)
. "$(dirname "$0")/lib/tap.sh"
LB="$BIN/lockbench"

tree=$("$TOP/scripts/kernel-source.sh" 2>"$T/src.err")
ok $? "the kernel source is cached" || { diag "$(cat "$T/src.err")"; done_testing; exit 1; }
"$LB" kernel build --debug --tree "$tree" >"$T/build.out" 2>&1
ok $? "the base debug kernel builds (or is up to date)" || diag "$(tail -n 20 "$T/build.out")"
like "$(cat "$T/build.out")" "kernel base \(debug\) built in .*locklab-debug-out/arch/x86/boot/bzImage" \
  "into its own folder beside the measuring build"
config="$tree/locklab-debug-out/.config"
for opt in PROVE_LOCKING DEBUG_MUTEXES DEBUG_ATOMIC_SLEEP LOCKDEP; do
  grep -qx "CONFIG_$opt=y" "$config"; ok $? "the debug kernel has CONFIG_$opt"
done
# the measuring build is another test's (or an agent's): on a fresh machine
# it may not exist yet, and the debug build must not have made it
if [[ -f $tree/locklab-out/.config ]]; then
  grep -q "CONFIG_PROVE_LOCKING=y" "$tree/locklab-out/.config"; is $? 1 "the measuring kernel has no lockdep"
else
  skip "the measuring kernel has no lockdep" "not built on this machine yet (the debug build did not create it)"
fi

run() { # run NAME VARIANT IMAGE: locktorture on mutexes, 2 writers, debug
  "$LB" kernel run --debug --kernel "$3" --variant "$2" --accel tcg --types mutex_lock --writers 2 \
    --no-lockbench --timeout-s 90 --console-dir "$T/console-$1" --json "$T/$1.json" \
    >"$T/$1.out" 2>"$T/$1.err"
}
splat_keys() { perl -MJSON::PP -0777 -ne 'my $d = decode_json($_); print "$_->{key}\n" for @{$d->{splats} || []}' "$1"; }

run base base "$tree/locklab-debug-out/arch/x86/boot/bzImage"
is $? 0 "base debug: locktorture mutex_lock runs clean" || diag "$(cat "$T/base.out" "$T/base.err")"
is "$(splat_keys "$T/base.json")" "" "base debug: no splat on the console"
like "$(cat "$T/base.out")" "1 boots, 1 runs, 0 locked up, 0 splats, 0 failed" "and the table says so"
like "$(cat "$T/base.out")" "emulated: timing from an emulated CPU \(QEMU TCG\)" "the table marks TCG timing as emulated"
perl -MJSON::PP -0777 -ne 'my $d = decode_json($_); my $n = 0; $n += keys %{$_->{metrics}} for @{$d->{runs}}; exit($n ? 1 : 0)' "$T/base.json"
ok $? "a debug run records no figures to compare"

check_patch() { # check_patch NAME KEY WORDS
  local name=$1 key=$2 words=$3
  "$TOP/scripts/kernel-source.sh" --copy "$T/$name" >/dev/null
  (cd "$T/$name" && git apply) <"$TOP/tests/kernel-patches/$name.patch"
  ok $? "$name: the patch applies"
  start=$(date +%s)
  "$LB" kernel build --debug --tree "$T/$name" --reuse "$tree/locklab-debug-out" --variant patched \
    >"$T/$name.build" 2>&1
  ok $? "$name: the debug kernel builds incrementally ($(($(date +%s) - start)) s)" ||
    diag "$(tail -n 20 "$T/$name.build")"
  run "$name" patched "$T/$name/locklab-debug-out/arch/x86/boot/bzImage"
  is $? 0 "$name: no lockup, no hang (a splat is not a lockup)" || diag "$(cat "$T/$name.out" "$T/$name.err")"
  like "$(splat_keys "$T/$name.json")" "^$key\$" "$name: the document has the splat $key"
  like "$(cat "$T/$name.out")" "SPLAT $key: $words" "$name: the table says it in the kernel's words"
  "$LB" compare "$T/base.json" "$T/$name.json" --format text >"$T/$name.cmp" 2>&1
  out=$(cat "$T/$name.cmp")
  like "$out" "overall: splat" "$name: compare's verdict is splat"
  like "$out" "the patched kernel reported $key in 1 of 1 runs at locktorture mutex_lock writers=2, the base in none: $words" \
    "$name: named in a sentence with the kernel's first line"
  like "$out" " +:1 +100% +1:1 +dmesg\\.$key  \\(splat: new in patched\\)" "$name: fail:runs, base against patched"
  like "$out" "Call Trace:" "$name: with the call trace"
  like "$out" "torture_mutex_lock" "$name: which shows the patched function"
  "$LB" compare "$T/base.json" "$T/$name.json" --format lkp >"$T/$name.lkp" 2>&1
  like "$(cat "$T/$name.lkp")" "dmesg\\.$key" "$name: the lkp report has the key too"
}
check_patch abba-mutex "WARNING:possible_circular_locking_dependency_detected" \
  "WARNING: possible circular locking dependency detected"
check_patch sleep-in-spinlock \
  "BUG:sleeping_function_called_from_invalid_context_at_kernel/locking/mutex.c" \
  "BUG: sleeping function called from invalid context at kernel/locking/mutex.c:[0-9]+"

"$LB" compare "$T/base.json" "$T/base.json" --format text >"$T/aa.cmp" 2>&1
unlike "$(cat "$T/aa.cmp")" "overall: splat" "base against itself: no splat"
pgrep -f "qemu-system-x86_64.*$T" >/dev/null; is $? 1 "no qemu is left behind"
done_testing
