#!/usr/bin/env bash
# Run every cmocka unit test binary given as arguments and every TAP script
# under tests/ with prove (the binaries beside the scripts, the scripts
# several at a time: below).  Prints one closing line "N passed, N failed, N
# skipped" and exits non-zero when anything failed.  A skipped check ("ok N -
# ... # SKIP why", or a whole script's "1..0 # SKIP why") is counted as
# skipped, never as passed.  Output of each part is kept under test-output/
# (RUN_TESTS_OUT) for a failing CI run; RUN_TESTS_TAP names the TAP scripts
# instead of tests/*.t.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
out=${RUN_TESTS_OUT:-$top/test-output}
mkdir -p "$out"
passed=0
failed=0
skipped=0

# A sanitized build (make asan): every report of every process, daemons
# included (a server's leaks show only when it exits), goes to a file under
# test-output/sanitizer/, and each report is one failure.
san="$out/sanitizer"
if [[ -n ${SANITIZED:-} ]]; then
  rm -rf "$san"; mkdir -p "$san"
  export ASAN_OPTIONS="log_path=$san/asan:detect_leaks=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
  export UBSAN_OPTIONS="log_path=$san/ubsan:print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
fi

# The TAP scripts run RUN_TESTS_JOBS at a time (default: one more than the
# CPUs: a scenario script waits on its server, agents and git much of the
# time; alone, tests/343 left this 2-vCPU machine's CPUs 32-95% idle in
# 5 s samples), the longest first: the seconds each took in the last run
# here ($out/times), else tests/lib/costs (a fresh machine's), else 60.  A
# script that says "# run-tests: alone" in its first 30 lines (it judges
# timings, so it wants an idle machine) runs after the others, with nothing
# beside it; of the scripts that say "# run-tests: group NAME" (they share
# something: the kernel builds and qemu's CPUs) one runs at a time.  Each script's prove
# output goes to $out/tap/NAME.log; prove.log is all of them in file order.
# tap_rc[SCRIPT] is each one's prove exit status.
declare -A tap_rc tap_group group_busy
tap_cost() {
  local name=$1 f c
  for f in "$out/times" "$top/tests/lib/costs"; do
    [[ -f $f ]] && c=$(awk -v n="$name" '$1 == n { print $2; exit }' "$f") && [[ -n $c ]] && break
  done
  echo "${c:-60}"
}
tap_start() {
  local t=$1
  (
    s=$(date +%s)
    BUILD="${BUILD:-build}" TEST_OUTPUT="$out" prove -v --timer "$t" >"$out/tap/$(basename "$t").log" 2>&1
    rc=$?
    echo "$(basename "$t") $(($(date +%s) - s)) $rc" >>"$out/times.new"
    exit $rc
  ) &
  tap_pid[$!]=$t
  [[ -z ${tap_group[$t]:-} ]] || group_busy[${tap_group[$t]}]=1
}
# tap_reap: wait for one running script; record its exit status
tap_reap() {
  local pid rc
  wait -n -p pid "${!tap_pid[@]}"
  rc=$?
  tap_rc[${tap_pid[$pid]}]=$rc
  [[ -z ${tap_group[${tap_pid[$pid]}]:-} ]] || unset "group_busy[${tap_group[${tap_pid[$pid]}]}]"
  unset "tap_pid[$pid]"
}
run_tap() {
  local jobs=${RUN_TESTS_JOBS:-$(($(nproc) + 1))} t name i pick
  local -a together=() alone=()
  declare -gA tap_pid=()
  rm -rf "$out/tap"; mkdir -p "$out/tap"; : >"$out/times.new"
  for t in $(for t in "$@"; do echo "$(tap_cost "$(basename "$t")") $t"; done | sort -k1,1nr -s | cut -d' ' -f2); do
    tap_group[$t]=$(head -n 30 "$t" | sed -n 's/^# run-tests: group \([A-Za-z0-9_-]*\).*/\1/p' | head -n 1)
    if head -n 30 "$t" | grep -q '^# run-tests: alone'; then alone+=("$t"); else together+=("$t"); fi
  done
  ((jobs >= 1)) || jobs=1
  # the longest script that may start: none of its group is running
  while ((${#together[@]})); do
    while ((${#tap_pid[@]} >= jobs)); do tap_reap; done
    pick=-1
    for i in "${!together[@]}"; do
      t=${together[$i]}
      if [[ -z ${tap_group[$t]} || -z ${group_busy[${tap_group[$t]}]:-} ]]; then pick=$i; break; fi
    done
    if ((pick < 0)); then tap_reap; continue; fi
    tap_start "${together[$pick]}"
    unset "together[$pick]"; together=("${together[@]}")
  done
  while ((${#tap_pid[@]})); do tap_reap; done
  for t in "${alone[@]}"; do
    tap_start "$t"; tap_reap
  done
  : >"$out/prove.log"; : >"$out/tap.summary"
  for t in "$@"; do
    name=$(basename "$t")
    cat "$out/tap/$name.log" >>"$out/prove.log"
    printf '    %-4s %5s s  %s\n' "$( ((tap_rc[$t] == 0)) && echo ok || echo FAIL)" \
      "$(awk -v n="$name" '$1 == n { print $2 }' "$out/times.new")" "$t" >>"$out/tap.summary"
  done
  # keep the times of scripts that did not run this time
  [[ -f $out/times ]] || : >"$out/times"
  awk 'NR == FNR { seen[$1] = 1; print $1, $2; next } !($1 in seen)' "$out/times.new" "$out/times" >"$out/times.tmp"
  mv "$out/times.tmp" "$out/times"; rm -f "$out/times.new"
}

# The cmocka binaries run one after the other beside the TAP scripts (they
# mostly wait on deadlines); what they print and their counts come out
# first, as before.
run_units() {
  local t name log rc p f passed=0 failed=0
  for t in "$@"; do
    name=$(basename "$t")
    log="$out/$name.log"
    CMOCKA_MESSAGE_OUTPUT=stdout "$t" >"$log" 2>&1
    rc=$?
    p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -n 1)
    f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -n 1)
    p=${p:-0}; f=${f:-0}
    if [[ $rc -ne 0 && $f -eq 0 ]]; then f=1; fi   # crashed before its summary
    passed=$((passed + p)); failed=$((failed + f))
    if [[ $f -ne 0 ]]; then
      echo "FAIL $name ($f failed, log: test-output/$name.log)"
      grep -E '^\[  (FAILED|  ERROR)|^\[  ERROR|error|Error' "$log" | head -n 20 | sed 's/^/    /'
    else
      echo "ok   $name ($p tests)"
    fi
  done
  echo "$passed $failed" >"$out/units.counts"
}
run_units "$@" >"$out/units.report" &
units_pid=$!

shopt -s nullglob
if [[ -n ${RUN_TESTS_TAP:-} ]]; then read -ra tap <<<"$RUN_TESTS_TAP"; else tap=(tests/*.t); fi
if [[ ${#tap[@]} -gt 0 ]]; then
  # one initdb for the run (unless the run inside a test has its caller's):
  # each test's cluster is a copy (tests/lib/pg.sh); under /tmp, where the
  # postgres user can reach it when we are root
  if [[ -z ${LOCKLAB_PG_TEMPLATE:-} ]]; then
    pgt=$(mktemp -d "${TMPDIR:-/tmp}/locklab-pg-template.XXXXXX") && chmod 755 "$pgt"
    trap 'rm -rf "$pgt"' EXIT
    if [[ $(id -u) -eq 0 ]]; then chown postgres: "$pgt"; fi
    if (. tests/lib/pg.sh && pg_initdb "$pgt/data") >"$out/pg-template.log" 2>&1; then
      export LOCKLAB_PG_TEMPLATE=$pgt/data
    else
      echo "note: no template cluster (log: test-output/pg-template.log); each test runs initdb"
    fi
  fi
  # one base lockbench cache for the run's agents (agents/build.c): every
  # test's native tree is a clone of this commit, so each base builds once
  if [[ -z ${LOCKLAB_BASE_CACHE:-} ]]; then
    bct=$(mktemp -d "${TMPDIR:-/tmp}/locklab-base-cache.XXXXXX") && chmod 755 "$bct" &&
      export LOCKLAB_BASE_CACHE=$bct
    trap 'rm -rf "${pgt:-}" "${bct:-}"' EXIT
  fi
  run_tap "${tap[@]}"
fi
wait "$units_pid"
cat "$out/units.report"
read -r p f <"$out/units.counts"
passed=$((passed + p)); failed=$((failed + f))
if [[ ${#tap[@]} -gt 0 ]]; then
  log="$out/prove.log"
  cat "$out/tap.summary"
  s=$(grep -cE '^ok [0-9]+.*# *SKIP' "$log")
  s=$((s + $(grep -cE '^1\.\.0 *# *SKIP|\.t \.+ skipped:' "$log")))
  p=$(($(grep -cE '^ok [0-9]+' "$log") - $(grep -cE '^ok [0-9]+.*# *SKIP' "$log")))
  f=$(grep -cE '^not ok [0-9]+' "$log")
  # a script whose prove failed without a failing check (it died) is one failure
  for t in "${!tap_rc[@]}"; do
    if [[ ${tap_rc[$t]} -ne 0 ]] && ! grep -qE '^not ok [0-9]+' "$out/tap/$(basename "$t").log"; then
      f=$((f + 1)); echo "FAIL $t: prove exited ${tap_rc[$t]} without a failing test (died?)"
    fi
  done
  if [[ $f -ne 0 ]]; then
    echo "failing TAP tests (log: test-output/prove.log):"
    grep -E '^not ok|^#' "$log" | grep -v '^# *$' | grep -B1 -A6 '^not ok' | head -n 60 | sed 's/^/    /'
  fi
  passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + s))
  if ((s)); then
    echo "skipped (not passed):"
    grep -E '^ok [0-9]+.*# *SKIP|^1\.\.0 *# *SKIP|\.t \.+ skipped:' "$log" | sed 's/^/    /'
  fi
fi

if [[ -n ${SANITIZED:-} ]]; then
  reports=("$san"/*)
  if [[ -e ${reports[0]:-} ]]; then
    echo "FAIL ${#reports[@]} sanitizer report(s) (test-output/sanitizer/):"
    for r in "${reports[@]}"; do
      echo "    $(basename "$r"):"; grep -m 8 -E 'ERROR|runtime error|#[0-9] ' "$r" | sed 's/^/      /'
    done
    failed=$((failed + ${#reports[@]}))
  else
    echo "ok   no sanitizer reports from any process"
    passed=$((passed + 1))
  fi
fi

echo "$passed passed, $failed failed, $skipped skipped"
[[ $failed -eq 0 && $((passed + failed)) -gt 0 ]]
