#!/usr/bin/env bash
# lockbench kernel: the base kernel and a patch that only touches a comment
# in kernel/locking/mutex.c both build (the patched one incrementally, from
# the base objects), boot under qemu, give locktorture and guest lockbench
# figures, and neither locks up.  Uses Debian's linux-source-6.1, cached in
# /var/cache/locklab (or $LOCKLAB_CACHE) together with the base build.
# run-tests: group kernel (one base build and qemu guests whose lockup detectors want their CPUs)
. "$(dirname "$0")/lib/tap.sh"
LB="$BIN/lockbench"
J="$TOP/scripts/lbjson.pl"

tree=$("$TOP/scripts/kernel-source.sh" 2>"$T/src.err")
ok $? "the kernel source is cached" || { diag "$(cat "$T/src.err")"; done_testing; exit 1; }
"$LB" kernel build --tree "$tree" --json "$T/base-build.json" >"$T/build.out" 2>&1
ok $? "the base kernel builds (or is up to date)" || diag "$(tail -n 20 "$T/build.out")"
base="$tree/locklab-out/arch/x86/boot/bzImage"
rows=$("$J" "$T/base-build.json")
like "$rows" $'^kernbench\tkernel\tjobs=[0-9]+\tbuild_s\t[0-9.]+' "the build time is a kernbench build_s metric"

"$TOP/scripts/kernel-source.sh" --copy "$T/patched" >/dev/null 2>"$T/copy.err"
ok $? "a copy of the tree for the patched variant" || diag "$(cat "$T/copy.err")"
(cd "$T/patched" && git apply) <<'PATCH'
--- a/kernel/locking/mutex.c
+++ b/kernel/locking/mutex.c
@@ -2,7 +2,7 @@
 /*
  * kernel/locking/mutex.c
  *
- * Mutexes: blocking mutual exclusion locks
+ * Mutexes: blocking mutual exclusion locks (locklab: comment-only change)
  *
  * Started by Ingo Molnar:
  *
PATCH
ok $? "the comment patch applies"
cmp -s "$tree/kernel/locking/mutex.c" "$T/patched/kernel/locking/mutex.c"
is $? 1 "patching the copy left the cached tree alone"
"$LB" kernel build --tree "$T/patched" --reuse "$tree/locklab-out" --variant patched \
  --json "$T/patched-build.json" >"$T/pbuild.out" 2>&1
ok $? "the patched kernel builds" || diag "$(tail -n 20 "$T/pbuild.out")"
out=$(cat "$T/pbuild.out")
like "$out" "built in [0-9.]+ s \(incremental" "it says it reused the base objects"
log="$T/patched/locklab-out/locklab-build.log"
like "$(cat "$log")" "CC +kernel/locking/mutex.o" "mutex.c was recompiled"
n=$(grep -cE '^ +CC +[^/ ][^ ]*\.o$' "$log")  # objtool (absolute paths) is rebuilt, kernel objects are not
[[ $n -le 10 ]]; ok $? "and little else ($n objects compiled)"
patched="$T/patched/locklab-out/arch/x86/boot/bzImage"

for v in base patched; do
  img=$base; [[ $v == patched ]] && img=$patched
  "$LB" kernel run --kernel "$img" --variant $v --console-dir "$T/console-$v" \
    --json "$T/$v.json" >"$T/$v.out" 2>"$T/$v.err"
  rc=$?
  is $rc 0 "$v: the smoke suite runs clean (exit 0)" || diag "$(cat "$T/$v.err")" "$(tail -n 20 "$T/$v.out")"
  rows=$("$J" "$T/$v.json")
  for type in mutex_lock rwsem_lock spin_lock; do
    like "$rows" $'^locktorture\t'"$type"$'\twriters=2\twrites_per_sec\t[1-9][0-9.e+]*\t[1-9]' \
      "$v: locktorture $type gives writes/s with samples"
  done
  like "$rows" $'^locktorture\tmutex_lock\twriters=2\tfairness\t0?\\.[0-9]+|^locktorture\tmutex_lock\twriters=2\tfairness\t1' \
    "$v: and a fairness figure"
  for w in futex-wake futex-hash vfs-creat-unlink hot; do
    like "$rows" $'^'"$w"$'\t' "$v: the guest ran $w"
  done
  unlike "$rows" $'\tLOCKUP\t' "$v: no lockup"
  cpus=$(perl -MJSON::PP -0777 -ne 'my $d = decode_json($_); print "$d->{machine}{cpus} $d->{machine}{kernel} $d->{variant}"' "$T/$v.json")
  like "$cpus" "^2 6\.1\.[0-9]+[^ ]* $v\$" "$v: the document names the guest's 2 CPUs, its kernel and the variant"
done
out=$("$LB" compare "$T/base.json" "$T/patched.json" --format lkp 2>&1)
ok $? "lockbench compare reads both documents"
like "$out" "locktorture" "the comparison has the locktorture rows"
# (not "lockup" alone: the TCG legend says "lockups, splats ... are real")
unlike "$out" "\\(lockup\\)|locked up|fail:runs" "and no lockup"
done_testing
