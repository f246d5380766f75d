#!/usr/bin/env bash
# The dashboard's layout at 1280 px wide, in a real browser (Debian's
# chromium driven by playwright-core, web/test/layout.mjs): the submission
# page of a smoke-suite series fits two screens (its document at most
# 2,000 px tall), and no page scrolls sideways (scrollWidth <= clientWidth on
# every page, the Alerts page with a bisected alert's chart open included).
# The series is a real one, run by a real agent; the Alerts page gets its
# alerts from a fixture the browser serves (tracking a branch to an alert
# is tests/344-track-force.t's).  Screenshots go to $TEST_OUTPUT/layout-*.png.
. "$(dirname "$0")/lib/tap.sh"
. "$(dirname "$0")/lib/pg.sh"
. "$(dirname "$0")/lib/server.sh"
. "$(dirname "$0")/lib/agent.sh"

[[ -x ${CHROMIUM:-/usr/bin/chromium} ]] || bail_out "no chromium (apt-get install chromium)"
[[ -d $TOP/web/node_modules/playwright-core && -f $TOP/web/vendor/uPlot.esm.js ]] ||
  bail_out "web/node_modules or web/vendor missing (cd web && npm ci)"
export TEST_OUTPUT=${TEST_OUTPUT:-$TOP/test-output}
mkdir -p "$TEST_OUTPUT"

pg_start || bail_out "no postgres"
server_start --min-rounds 3 --max-rounds 3 || bail_out "no server"
register_agent '{"name": "lab1"}'
tree_init
make_series layout "sed -i '1s|^|/* kmutex: a comment only */\\n|' lockbench/locks/kmutex.c"
agent_spawn lab1
submit_mbox "$T/layout.mbox" smoke
sub=$SUB
wait_state "$sub" done failed 1200
[[ $(sub_state "$sub") == done ]] || bail_out "the smoke-suite submission did not finish: $(tail -n 5 "$T/agent-lab1.log")"
if [[ ${HOLD:-0} == 1 ]]; then
  echo "# holding: $URL/#/submissions/$sub (kill $$ to end)"
  echo "$URL $sub" >"${HOLD_FILE:-/tmp/layout-hold}"
  sleep 100000
fi

cd "$TOP/web" && node test/layout.mjs "$URL" "$sub"
rc=$?
[[ $rc -eq 0 ]] || diag "server log:" "$(tail -n 20 "$SERVER_LOG")"
exit $rc
