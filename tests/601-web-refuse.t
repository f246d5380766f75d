#!/usr/bin/env bash
# The dashboard in a real browser (web/test/refuse.mjs): refused submissions
# show the server's reason verbatim, API errors are shown, pages are keyboard
# reachable, and no request leaves the origin.  Needs `npm ci` in web/ and
# /usr/bin/chromium.
. "$(dirname "$0")/lib/tap.sh"
. "$(dirname "$0")/lib/pg.sh"
. "$(dirname "$0")/lib/server.sh"

[[ -x ${CHROMIUM:-/usr/bin/chromium} ]] || { echo "Bail out! no chromium (apt-get install chromium)"; exit 1; }
[[ -d $TOP/web/node_modules/playwright-core && -f $TOP/web/vendor/uPlot.esm.js ]] ||
  { echo "Bail out! web/node_modules or web/vendor missing (cd web && npm ci)"; exit 1; }
export TEST_OUTPUT=${TEST_OUTPUT:-$TOP/test-output}
mkdir -p "$TEST_OUTPUT"

pg_start || { echo "Bail out! postgres"; exit 1; }
server_start || { echo "Bail out! server"; exit 1; }

cd "$TOP/web" && node test/refuse.mjs "$URL"
