#!/usr/bin/env bash
# Run every cmocka unit test binary given as arguments, then every TAP script
# under tests/ with prove.  Prints one closing line "N passed, N failed, N
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

shopt -s nullglob
if [[ -n ${RUN_TESTS_TAP:-} ]]; then read -ra tap <<<"$RUN_TESTS_TAP"; else tap=(tests/*.t); fi
if [[ ${#tap[@]} -gt 0 ]]; then
  log="$out/prove.log"
  BUILD="${BUILD:-build}" TEST_OUTPUT="$out" prove -v --timer "${tap[@]}" >"$log" 2>&1
  rc=$?
  s=$(grep -cE '^ok [0-9]+.*# *SKIP' "$log")
  s=$((s + $(grep -cE '^1\.\.0 *# *SKIP|\.t \.+ skipped:' "$log")))
  p=$(($(grep -cE '^ok [0-9]+' "$log") - $(grep -cE '^ok [0-9]+.*# *SKIP' "$log")))
  f=$(grep -cE '^not ok [0-9]+' "$log")
  grep -E '^tests/.*\.t \.+|^Result:' "$log" | sed 's/^/    /'
  if [[ $rc -ne 0 && $f -eq 0 ]]; then f=1; echo "FAIL prove exited $rc without a failing test (died?)"; fi
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
