# tests/lib/browser.sh - a dashboard check in a real browser (Debian's
# chromium driven by playwright-core, web/test/*.mjs); source after tap.sh.
#   browser_run WHAT SCRIPT ARGS...   run web/test/SCRIPT with ARGS and turn
#                                     its result lines into ok / not ok; when
#                                     chromium or web/node_modules is missing,
#                                     one check WHAT is reported skipped
browser_run() {
  local what=$1 script=$2 out line
  shift 2
  if [[ ! -x ${CHROMIUM:-/usr/bin/chromium} || ! -d $TOP/web/node_modules/playwright-core ||
    ! -f $TOP/web/vendor/uPlot.esm.js ]]; then
    skip "$what" "no chromium or web/node_modules (cd web && npm ci)"
    return
  fi
  export TEST_OUTPUT=${TEST_OUTPUT:-$TOP/test-output}
  mkdir -p "$TEST_OUTPUT"
  out=$(cd "$TOP/web" && node "test/$script" "$@" 2>&1)
  while IFS= read -r line; do
    case $line in
      "ok "*) ok 0 "${line#ok * - }" ;;
      "not ok "*) ok 1 "${line#not ok * - }" ;;
      "#"*) echo "$line" ;;
    esac
  done <<<"$out"
  grep -q '^ok ' <<<"$out" || { ok 1 "the browser test ran"; diag "$out"; }
}
