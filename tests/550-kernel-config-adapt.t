#!/usr/bin/env bash
# lockbench kernel build on a tree of another version: an option of the
# config fragment that this kernel does not know is dropped, and the build
# says which (stderr, the build log, the result document) and goes on; an
# option the tree knows but cannot enable says that instead.  Incremental
# from the cached base build (the configuration comes out the same).
# run-tests: group kernel (one base build and qemu guests whose lockup detectors want their CPUs)
. "$(dirname "$0")/lib/tap.sh"
. "$TOP/tests/lib/kernel.sh"
LB="$BIN/lockbench"
J="$TOP/scripts/lbjson.pl"

kernel_base
"$TOP/scripts/kernel-source.sh" --copy "$T/other" >/dev/null 2>"$T/copy.err"
ok $? "a copy of the tree" || diag "$(cat "$T/copy.err")"

# CONFIG_LOCKLAB_NOT_IN_6_1 exists in no kernel; CONFIG_KASAN_INLINE exists
# in 6.1 but depends on KASAN, which the fragment does not ask for
grep -qE '^\s*config KASAN_INLINE\s*$' "$tree/lib/Kconfig.kasan"
ok $? "6.1 declares KASAN_INLINE (the known option below)"
! grep -rqs --include='Kconfig*' -E '^\s*config LOCKLAB_NOT_IN_6_1\s*$' "$tree"
ok $? "and no Kconfig declares LOCKLAB_NOT_IN_6_1"
{ cat "$TOP/lockbench/kernel/locklab.config"; echo "CONFIG_LOCKLAB_NOT_IN_6_1=y"; echo "CONFIG_KASAN_INLINE=y"; } >"$T/frag.config"
"$LB" kernel build --tree "$T/other" --reuse "$tree/locklab-out" --config "$T/frag.config" \
  --variant patched --json "$T/build.json" >"$T/out" 2>"$T/err"
rc=$?
is $rc 0 "the build goes on without the unknown option" || diag "$(tail -n 20 "$T/err")"
err=$(cat "$T/err")
like "$err" "config: dropped CONFIG_LOCKLAB_NOT_IN_6_1=y \(this kernel version has no such option\)" \
  "stderr names the unknown option and why it was dropped"
like "$err" "config: dropped CONFIG_KASAN_INLINE=y \(its dependencies are not met in this tree\)" \
  "and tells a known option whose dependencies are not met apart"
unlike "$err" "dropped CONFIG_(LOCK_TORTURE_TEST|SMP|PREEMPT)=" "the options 6.1 has are kept"
log="$T/other/locklab-out/locklab-build.log"
like "$(cat "$log")" "locklab: config: dropped CONFIG_LOCKLAB_NOT_IN_6_1=y" "the build log says it too"
rows=$("$J" "$T/build.json")
like "$rows" $'^kernbench\tkernel\t[^\t]*config_dropped=CONFIG_LOCKLAB_NOT_IN_6_1,CONFIG_KASAN_INLINE' \
  "the result document lists the dropped options on the build's run"
[[ -f "$T/other/locklab-out/arch/x86/boot/bzImage" ]]; ok $? "and a bzImage is built"
n=$(grep -cE '^ +CC +[^/ ][^ ]*\.o$' "$log")
[[ $n -le 10 ]]; ok $? "incrementally: the configuration came out as the base's ($n objects compiled)"
done_testing
