#!/usr/bin/env bash
# lockbench kernel: a patch that does not compile is a build failure with
# the compiler's error lines; bad usage is refused with a clear message.
# run-tests: group kernel (one base build and qemu guests whose lockup detectors want their CPUs)
. "$(dirname "$0")/lib/tap.sh"
LB="$BIN/lockbench"

out=$("$LB" kernel 2>&1); is $? 2 "kernel without a subcommand is a usage error"
out=$("$LB" kernel frob 2>&1); is $? 2 "an unknown subcommand is a usage error"
like "$out" "unknown subcommand 'frob' \(valid: build, run\)" "and says which ones exist"
out=$("$LB" kernel build 2>&1); is $? 2 "build without --tree is a usage error"
out=$("$LB" kernel build --tree "$T" 2>&1); is $? 1 "a folder that is no kernel tree is refused"
like "$out" "is not a kernel source tree" "with the reason"
out=$("$LB" kernel run --kernel "$T/nope" 2>&1); is $? 1 "a missing kernel image is refused"
like "$out" "no kernel image at" "with the reason"
echo "not a kernel" >"$T/junk"
out=$("$LB" kernel run --kernel "$T/junk" --accel tcg --no-lockbench --types spin_lock 2>&1); is $? 1 "an image qemu cannot boot is a failure, not a lockup"
like "$out" "qemu-system-x86_64 \(-accel [a-z]+\) exited with status [0-9]+: qemu: " "with qemu's own message"
out=$("$LB" kernel run --kernel "$T/nope" --types mutex_lock,frob_lock 2>&1); is $? 2 "an unknown locktorture type is a usage error"
out=$("$LB" kernel run --kernel "$T/nope" --writers 0 2>&1); is $? 2 "zero writers is a usage error"
out=$("$LB" --help); like "$out" "kernel build\|run" "lockbench --help lists the kernel command"

tree=$("$TOP/scripts/kernel-source.sh" 2>"$T/src.err")
ok $? "the kernel source is cached" || { diag "$(cat "$T/src.err")"; done_testing; exit 1; }
"$LB" kernel build --tree "$tree" >"$T/build.out" 2>&1
ok $? "the base kernel builds (or is up to date)" || diag "$(tail -n 20 "$T/build.out")"
"$TOP/scripts/kernel-source.sh" --copy "$T/patched" >/dev/null
(cd "$T/patched" && git apply) <<'PATCH'
--- a/kernel/locking/mutex.c
+++ b/kernel/locking/mutex.c
@@ -948,7 +948,7 @@
 
 	raw_spin_unlock(&lock->wait_lock);
 
-	wake_up_q(&wake_q);
+	wake_up_q(&wake_queue_that_does_not_exist);
 }
 
 #ifndef CONFIG_DEBUG_LOCK_ALLOC
PATCH
ok $? "the patch that does not compile applies"
"$LB" kernel build --tree "$T/patched" --reuse "$tree/locklab-out" --variant patched \
  --json "$T/patched-build.json" >"$T/out" 2>"$T/err"
is $? 1 "the build fails with exit 1"
err=$(cat "$T/err")
like "$err" "kernel build failed after [0-9.]+ s \(log: .*locklab-build.log\)" "stderr says the build failed and where the log is"
like "$err" "kernel/locking/mutex.c:[0-9]+:[0-9]+: error: .wake_queue_that_does_not_exist. undeclared" \
  "stderr has the compiler's error line"
n=$(grep -c . <<<"$err"); [[ $n -le 22 ]]; ok $? "and not the whole log ($n lines)"
[[ ! -e "$T/patched-build.json" ]]; ok $? "no result document is written for a failed build"
done_testing
