#!/usr/bin/env bash
# lockbench kernel run when qemu itself fails: a qemu that aborts under KVM
# (as qemu 7.2 does on some hosts: "failed to set MSR 0x10a", an assertion),
# one whose KVM guest hangs silently, and one that cannot run at all.  The
# accelerator probe falls back to TCG once and keeps it for the run; a qemu
# failure is a failed run with qemu's own words, never a lockup.
#
# qemu-system-x86_64 is a wrapper on PATH here that plays the broken qemu and
# hands everything else to the real one.  LOCKLAB_KVM_DEVICE=/dev/null makes
# the probe try KVM on hosts without /dev/kvm too.
# run-tests: group kernel (one base build and qemu guests whose lockup detectors want their CPUs)
. "$(dirname "$0")/lib/tap.sh"
LB="$BIN/lockbench"
J="$TOP/scripts/lbjson.pl"
real=$(command -v qemu-system-x86_64) || { echo "1..0 # SKIP qemu-system-x86_64 is not installed"; exit 0; }

tree=$("$TOP/scripts/kernel-source.sh" 2>"$T/src.err")
ok $? "the kernel source is cached" || { diag "$(cat "$T/src.err")"; done_testing; exit 1; }
"$LB" kernel build --tree "$tree" >"$T/build.out" 2>&1
ok $? "the base kernel builds (or is up to date)" || { diag "$(tail -n 20 "$T/build.out")"; done_testing; exit 1; }
base="$tree/locklab-out/arch/x86/boot/bzImage"

# wrapper MODE: kvm-abort (abort under KVM only), kvm-hang, all-abort, exit1
wrapper() {
  mkdir -p "$T/$1"
  cat >"$T/$1/qemu-system-x86_64" <<EOF
#!/bin/bash
echo "\$*" >>"$T/$1/calls"
mode=$1
case " \$* " in *" -accel kvm "*) kvm=1 ;; *) kvm=0 ;; esac
if [[ \$mode == all-abort || ( \$mode == kvm-abort && \$kvm == 1 ) ]]; then
  echo "qemu-system-x86_64: error: failed to set MSR 0x10a to 0x69" >&2
  echo "qemu-system-x86_64: ../../target/i386/kvm/kvm.c:3183: kvm_buf_set_msrs: Assertion failed." >&2
  kill -ABRT \$\$
fi
if [[ \$mode == kvm-hang && \$kvm == 1 ]]; then exec sleep 120; fi
if [[ \$mode == exit1 ]]; then echo "qemu: could not load kernel '\${@: -3:1}'" >&2; exit 1; fi
exec "$real" "\$@"
EOF
  chmod +x "$T/$1/qemu-system-x86_64"
  : >"$T/$1/calls"
}
kvm_calls() { grep -c -- '-accel kvm' "$T/$1/calls"; }
tcg_calls() { grep -c -- '-accel tcg' "$T/$1/calls"; }
# run MODE ARGS...: lockbench kernel run under the wrapper; sets rc, out, err
run() {
  local mode=$1; shift
  PATH="$T/$mode:$PATH" LOCKLAB_KVM_DEVICE=/dev/null "$LB" kernel run --kernel "$base" \
    --json "$T/$mode.json" "$@" >"$T/$mode.out" 2>"$T/$mode.err"
  rc=$?
  out=$(cat "$T/$mode.out")
  err=$(cat "$T/$mode.err")
}

# 1. qemu aborts under KVM: TCG for the rest of the run, the base boots clean
wrapper kvm-abort
run kvm-abort --types mutex_lock --writers 1,2 --no-lockbench
is $rc 0 "kvm aborts: the run still succeeds (exit 0)" || diag "$err" "$out"
like "$out" "accel: kvm unusable \(qemu-system-x86_64 \(-accel kvm\) was killed by signal 6.*failed to set MSR 0x10a" \
  "it says kvm is unusable, in qemu's words"
is "$(grep -c '^accel:' <<<"$out")" 1 "and says it once"
is "$(kvm_calls kvm-abort)" 1 "kvm is probed once per run"
is "$(tcg_calls kvm-abort)" 2 "both boots run under tcg"
rows=$("$J" "$T/kvm-abort.json")
like "$rows" $'^locktorture\tmutex_lock\twriters=1\twrites_per_sec\t[1-9]' "the base gives locktorture figures at 1 writer"
like "$rows" $'^locktorture\tmutex_lock\twriters=2\twrites_per_sec\t[1-9]' "and at 2 writers"
unlike "$rows" $'\tLOCKUP\t' "no lockup is recorded"
like "$(perl -MJSON::PP -0777 -ne 'print decode_json($_)->{machine}{model}' "$T/kvm-abort.json")" \
  "^QEMU TCG guest on " "the document says the guest ran under TCG"

# 2. a KVM guest that hangs without a word: the probe gives up and uses TCG
wrapper kvm-hang
run kvm-hang --types mutex_lock --writers 2 --no-lockbench
is $rc 0 "kvm hangs: the run still succeeds" || diag "$err" "$out"
like "$out" "accel: kvm guest printed nothing in [0-9]+ s: using tcg" "it says the kvm guest was silent"
unlike "$("$J" "$T/kvm-hang.json")" $'\tLOCKUP\t' "no lockup is recorded"
is "$(pgrep -fc "sleep 120" || true)" 0 "the hung qemu was ended"

# 3. TCG fails too: a failed run with qemu's message, no lockup anywhere
wrapper all-abort
run all-abort
is $rc 1 "qemu aborts under kvm and tcg: the run fails (exit 1)"
like "$err" "killed by signal 6 \(Aborted\): qemu-system-x86_64: error: failed to set MSR" "stderr gives qemu's own words"
like "$err" "not of the kernel under test" "and says it is qemu's failure, not the kernel's"
like "$err" "trying once more" "a failed boot is tried once more"
is "$(tcg_calls all-abort)" 2 "once more, and no further boots after two failures"
like "$out" "qemu failed twice: [0-9]+ planned boots not run" "the boots not run are counted"
unlike "$out" "LOCKUP" "the table shows no lockup"
is "$(perl -MJSON::PP -0777 -ne 'print scalar @{decode_json($_)->{runs}}' "$T/all-abort.json")" 0 \
  "the document holds no run at all, so no lockup"

# 4. the guest lockbench boot alone, qemu unable to load the kernel
wrapper exit1
run exit1 --no-torture --accel tcg
is $rc 1 "qemu exits 1: the run fails"
like "$err" "exited with status 1: qemu: could not load kernel" "with qemu's message"
is "$(perl -MJSON::PP -0777 -ne 'print scalar @{decode_json($_)->{runs}}' "$T/exit1.json")" 0 \
  "and no lockbench-guest lockup"
done_testing
