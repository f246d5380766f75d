#!/usr/bin/env bash
# make bench-kernel: one patch through the whole kernel path, timed.
#   base build (cold, from tinyconfig), incremental patched build (from the
#   base objects), every boot and run of the kernel suite for base and
#   patched, total.  Goal: the quick suite end to end under 10 minutes on
#   2 cores.
# Environment: SUITE=quick|smoke [quick], PATCH=FILE (a -p1 patch for the
# kernel tree) [a comment-only change to kernel/locking/mutex.c],
# WARM=1 reuses the cached base build instead of timing a cold one.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
LB="$top/${BUILD:-build}/lockbench"
suite=${SUITE:-quick}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
t_start=$(now)

tree=$("$top/scripts/kernel-source.sh")
t_src=$(now)
out="$tree/locklab-out"
if [[ ${WARM:-0} != 1 ]]; then
  out="$tree/locklab-bench-out"   # a direct child of the tree, like the default
  rm -rf "$out"
  trap 'rm -rf "$tmp" "$out"' EXIT
fi
t0=$(now)
"$LB" kernel build --tree "$tree" --out "$out" --json "$tmp/base-build.json" >"$tmp/base-build.out" 2>&1 ||
  { cat "$tmp/base-build.out" >&2; exit 1; }
t_base=$(now)

"$top/scripts/kernel-source.sh" --copy "$tmp/patched" >/dev/null
if [[ -n ${PATCH:-} ]]; then
  (cd "$tmp/patched" && git apply) <"$PATCH"
else
  sed -i '5s/$/ (locklab bench: comment-only change)/' "$tmp/patched/kernel/locking/mutex.c"
fi
t1=$(now)
"$LB" kernel build --tree "$tmp/patched" --reuse "$out" --variant patched \
  --json "$tmp/patched-build.json" >"$tmp/patched-build.out" 2>&1 ||
  { cat "$tmp/patched-build.out" >&2; exit 1; }
t_patched=$(now)
ncc=$(grep -cE '^ +CC +[^/ ][^ ]*\.o$' "$tmp/patched/locklab-out/locklab-build.log" || true)

echo "machine: $(hostname), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
printf '%-44s %8s s\n' "kernel source ready" "$(secs "$t_start" "$t_src")"
printf '%-44s %8s s\n' "base build$([[ ${WARM:-0} == 1 ]] && echo ' (warm: cached objects)' || echo ' (cold, tinyconfig + fragment)')" "$(secs "$t0" "$t_base")"
printf '%-44s %8s s\n' "patched build (incremental, $ncc objects)" "$(secs "$t1" "$t_patched")"

for v in base patched; do
  img="$out/arch/x86/boot/bzImage"
  [[ $v == patched ]] && img="$tmp/patched/locklab-out/arch/x86/boot/bzImage"
  tb=$(now)
  rc=0
  "$LB" kernel run --kernel "$img" --suite "$suite" --variant $v --json "$tmp/$v.json" >"$tmp/$v.out" 2>"$tmp/$v.err" || rc=$?
  te=$(now)
  echo
  echo "== $v: $suite suite, exit $rc, $(secs "$tb" "$te") s"
  sed 's/^/  /' "$tmp/$v.out"
  [[ -s "$tmp/$v.err" ]] && sed 's/^/  stderr: /' "$tmp/$v.err"
done
echo
"$LB" compare "$tmp/base.json" "$tmp/patched.json" --format text || true
echo
printf '%-44s %8s s\n' "total" "$(secs "$t_start" "$(now)")"
