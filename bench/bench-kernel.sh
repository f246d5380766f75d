#!/usr/bin/env bash
# make bench-kernel: one patch through the whole kernel path, timed, for the
# measuring kernel and the debug (lockdep) one.
#   base builds (measuring and debug: the cached ones, or COLD=1 cold ones
#   from tinyconfig into an empty output folder, ccache off), incremental
#   patched builds (from the base objects), the
#   kernel suite's boots for base and patched on both kernels, and (USERS_SUITE=1)
#   the users suite on the base kernel at AIM7's bands' user counts: the
#   largest user count each workload reached, with its figure.
# Goals: patch -> kernel verdict <= 8 min on 2 cores without the
# debug variant, <= 15 min with it; "patch -> verdict" counts what a patch
# costs once the base builds and base runs are cached: the patched builds,
# the patched runs, and the base runs (the server needs both sides' rounds).
# Environment: SUITE=quick|smoke [quick], PATCH=FILE (a -p1 patch for the
# kernel tree) [a comment-only change to kernel/locking/mutex.c], COLD=1
# times cold base builds (about 18-20 minutes each on 2 cores at load 14-18,
# 3 on a quiet machine, so not by default; WARM=1, the old switch, is now the default), DEBUG=0 skips
# the debug variant, USERS_SUITE=0 (old name SEEDS=0) skips the users suite,
# USERS=10,...,2000 [the suite's].
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
LB="$top/${BUILD:-build}/lockbench"
suite=${SUITE:-quick}
tmp=$(mktemp -d)
cleanup=("$tmp")
trap 'rm -rf "${cleanup[@]}"' EXIT
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
line() { printf '%-58s %8s s%s\n' "$1" "$2" "${3:+  $3}"; }
load() { cut -d' ' -f1-3 /proc/loadavg; }
cold=${COLD:-0}
[[ ${WARM:-} == 0 ]] && cold=1   # the old switch: WARM=0 asked for cold builds
# a cold build compiles every object: no compiler cache may serve it
if command -v ccache >/dev/null; then
  export CCACHE_DISABLE=1
  ccache_word="ccache off (CCACHE_DISABLE=1)"
else
  ccache_word="no ccache installed"
fi
load_start=$(load)
t_start=$(now)

tree=$("$top/scripts/kernel-source.sh")
t_src=$(now)
variants=(measuring)
[[ ${DEBUG:-1} == 1 ]] && variants+=(debug)
declare -A out t_basebuild t_pbuild ncc t_run rc_run load_build

"$top/scripts/kernel-source.sh" --copy "$tmp/patched" >/dev/null
if [[ -n ${PATCH:-} ]]; then
  (cd "$tmp/patched" && git apply) <"$PATCH"
else
  sed -i '5s/$/ (locklab bench: comment-only change)/' "$tmp/patched/kernel/locking/mutex.c"
fi

for k in "${variants[@]}"; do
  flag=(); [[ $k == debug ]] && flag=(--debug)
  name=locklab-out; [[ $k == debug ]] && name=locklab-debug-out
  out[$k]="$tree/$name"
  if [[ $cold == 1 ]]; then
    out[$k]="$tree/locklab-bench-$k-out"   # a direct child of the tree, like the default
    rm -rf "${out[$k]}"
    cleanup+=("${out[$k]}")
  fi
  load_build[$k]=$(load)
  t0=$(now)
  "$LB" kernel build --tree "$tree" "${flag[@]}" --out "${out[$k]}" --json "$tmp/$k-base-build.json" \
    >"$tmp/$k-base-build.out" 2>&1 || { cat "$tmp/$k-base-build.out" >&2; exit 1; }
  t_basebuild[$k]=$(secs "$t0" "$(now)")
  t0=$(now)
  "$LB" kernel build --tree "$tmp/patched" "${flag[@]}" --reuse "${out[$k]}" --variant patched \
    --json "$tmp/$k-patched-build.json" >"$tmp/$k-patched-build.out" 2>&1 ||
    { cat "$tmp/$k-patched-build.out" >&2; exit 1; }
  t_pbuild[$k]=$(secs "$t0" "$(now)")
  ncc[$k]=$(grep -cE '^ +CC +[^/ ][^ ]*\.o$' "$tmp/patched/$name/locklab-build.log" || true)
  for v in base patched; do
    img="${out[$k]}/arch/x86/boot/bzImage"
    [[ $v == patched ]] && img="$tmp/patched/$name/arch/x86/boot/bzImage"
    tb=$(now)
    rc=0
    "$LB" kernel run --kernel "$img" "${flag[@]}" --suite "$suite" --variant $v --json "$tmp/$k-$v.json" \
      >"$tmp/$k-$v.out" 2>"$tmp/$k-$v.err" || rc=$?
    t_run[$k-$v]=$(secs "$tb" "$(now)")
    rc_run[$k-$v]=$rc
  done
done

if [[ ${USERS_SUITE:-${SEEDS:-1}} == 1 ]]; then
  tb=$(now)
  rc=0
  "$LB" kernel run --kernel "${out[measuring]}/arch/x86/boot/bzImage" --suite users --no-torture \
    ${USERS:+--users "$USERS"} --json "$tmp/users.json" >"$tmp/users.out" 2>"$tmp/users.err" || rc=$?
  t_users=$(secs "$tb" "$(now)")
fi

echo "machine: $(hostname), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')," \
  "load average $load_start at the start, $(load) at the end"
line "kernel source ready" "$(secs "$t_start" "$t_src")"
for k in "${variants[@]}"; do
  if [[ $cold == 1 ]]; then
    line "$k: base build (cold: empty output folder, $ccache_word)" "${t_basebuild[$k]}" \
      "load at its start ${load_build[$k]}"
  else
    line "$k: base build (warm: the cached objects; COLD=1 times a cold one)" "${t_basebuild[$k]}"
  fi
  line "$k: patched build (incremental, ${ncc[$k]} objects)" "${t_pbuild[$k]}"
  for v in base patched; do
    line "$k: $v boots, $suite suite (exit ${rc_run[$k-$v]})" "${t_run[$k-$v]}"
  done
done
for k in "${variants[@]}"; do
  for v in base patched; do
    echo
    echo "== $k kernel, $v: $suite suite, exit ${rc_run[$k-$v]}, ${t_run[$k-$v]} s"
    sed 's/^/  /' "$tmp/$k-$v.out"
    [[ -s "$tmp/$k-$v.err" ]] && sed 's/^/  stderr: /' "$tmp/$k-$v.err"
  done
done
echo
"$LB" compare "$tmp/measuring-base.json" "$tmp/measuring-patched.json" --format text || true

if [[ ${USERS_SUITE:-${SEEDS:-1}} == 1 ]]; then
  echo
  echo "== users suite on the base kernel (a boot per band unless USERS is set; exit $rc), $t_users s"
  sed 's/^/  /' "$tmp/users.out"
  [[ -s "$tmp/users.err" ]] && sed 's/^/  stderr: /' "$tmp/users.err"
  perl -MJSON::PP -0777 -ne '
    my $d = decode_json($_); my %best;
    for my $r (@{$d->{runs}}) {
      my $u = $r->{params}{users} // next;
      next if $r->{lockup};
      my ($m) = sort keys %{$r->{metrics}}; next unless $m;
      $best{$r->{workload}} = [$u, $r->{metrics}{$m}, $r->{units}{$m}]
        if !$best{$r->{workload}} || $u > $best{$r->{workload}}[0];
    }
    printf "  %-12s %5d users  %12.0f %s\n", $_, @{$best{$_}} for sort keys %best;
    print "  (no workload completed a point)\n" unless %best;' "$tmp/users.json" || true
fi

# patch -> verdict: the patched builds and both sides' runs (base builds cached)
m=$(awk -v a="${t_pbuild[measuring]}" -v b="${t_run[measuring-base]}" -v c="${t_run[measuring-patched]}" 'BEGIN { printf "%.1f", a + b + c }')
echo
line "patch -> verdict, measuring kernel (goal <= 480 s)" "$m" "$(awk -v m="$m" 'BEGIN { print (m <= 480 ? "met" : "MISSED") }')"
if [[ ${DEBUG:-1} == 1 ]]; then
  d=$(awk -v m="$m" -v a="${t_pbuild[debug]}" -v b="${t_run[debug-base]}" -v c="${t_run[debug-patched]}" 'BEGIN { printf "%.1f", m + a + b + c }')
  line "patch -> verdict, with the debug kernel (goal <= 900 s)" "$d" "$(awk -v d="$d" 'BEGIN { print (d <= 900 ? "met" : "MISSED") }')"
fi
line "total" "$(secs "$t_start" "$(now)")"
