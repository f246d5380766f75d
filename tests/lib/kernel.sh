# Kernel tests' common start (source after tap.sh).

# kernel_base: $tree, the cached kernel source (scripts/kernel-source.sh), and
# $base, its base bzImage, built or found up to date; two checks, and the
# script ends when there is no source
kernel_base() {
  tree=$("$TOP/scripts/kernel-source.sh" 2>"$T/src.err")
  ok $? "the kernel source is cached" || { diag "$(cat "$T/src.err")"; done_testing; exit 1; }
  "$BIN/lockbench" kernel build --tree "$tree" >"$T/build.out" 2>&1
  ok $? "the base kernel builds (or is up to date)" || diag "$(tail -n 20 "$T/build.out")"
  base="$tree/locklab-out/arch/x86/boot/bzImage"
}
