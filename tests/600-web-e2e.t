#!/usr/bin/env bash
# The dashboard in a real browser (Debian's chromium driven by
# playwright-core, web/test/e2e.mjs): a two-patch comment-only series to
# kmutex is submitted through the form against server + agent + PostgreSQL,
# followed to its verdict, and its table, charts, reports and reply read;
# screenshots go to $TEST_OUTPUT/web-*.png.  Needs `npm ci` in web/ and
# /usr/bin/chromium.
. "$(dirname "$0")/lib/tap.sh"
. "$(dirname "$0")/lib/pg.sh"
. "$(dirname "$0")/lib/server.sh"
. "$(dirname "$0")/lib/agent.sh"

web_ready() {
  [[ -x ${CHROMIUM:-/usr/bin/chromium} ]] || { echo "Bail out! no chromium (apt-get install chromium)"; exit 1; }
  [[ -d $TOP/web/node_modules/playwright-core && -f $TOP/web/vendor/uPlot.esm.js ]] ||
    { echo "Bail out! web/node_modules or web/vendor missing (cd web && npm ci)"; exit 1; }
}
web_ready
export TEST_OUTPUT=${TEST_OUTPUT:-$TOP/test-output}
mkdir -p "$TEST_OUTPUT"

pg_start || { echo "Bail out! postgres"; exit 1; }
server_start --min-rounds 3 --max-rounds 3 || { echo "Bail out! server"; exit 1; }
register_agent '{"name": "lab1"}'
tree_init
make_series web \
  "sed -i '1s|^|/* kmutex: the owner word is read by spinners */\\n|' lockbench/locks/kmutex.c" \
  "sed -i '2s|^|/* kmutex: HANDOFF is set by the top waiter */\\n|' lockbench/locks/kmutex.c"
# threaded, as a list would carry it: the reply has a Message-ID to answer
git -C "$T/work-web" format-patch -q --stdout --thread --cover-letter -2 >"$T/web.mbox"
sed -i 's/\*\*\* SUBJECT HERE \*\*\*/locking\/kmutex: comments on owner and handoff/; s/\*\*\* BLURB HERE \*\*\*/Comments only: nothing should change./' "$T/web.mbox"
grep -q 'Subject: \[PATCH 2/2\]' "$T/web.mbox" || { echo "Bail out! the series was not made"; exit 1; }
agent_spawn lab1

cd "$TOP/web" && node test/e2e.mjs "$URL" "$T/web.mbox"
rc=$?
[[ $rc -eq 0 ]] || diag "agent log:" "$(tail -n 30 "$T/agent-lab1.log")" "server log:" "$(tail -n 30 "$SERVER_LOG")"
exit $rc
