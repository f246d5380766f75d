#!/usr/bin/env bash
# bench/bench-intake-corpus.sh - `PATCHWORK_DIR=... make bench-intake-corpus`:
# Patchwork's parser corpus (a checkout of the public getpatchwork/patchwork;
# its mails are read from there, never copied here) through locklab's API and
# its Maildir intake, all at once and one mail at a time, compared with what
# Patchwork makes of each file (the table in bench/intake-corpus.py).
# Prints a row per file and the files agreeing per path.
#
# Needs build/locklab-server, PostgreSQL 15, python3.
set -uo pipefail
WAIT=${WAIT:-20}
source "$(dirname "$0")/../tests/lib/tap.sh"
source "$TOP/tests/lib/pg.sh"
source "$TOP/tests/lib/server.sh"

[[ -n ${PATCHWORK_DIR:-} && -d ${PATCHWORK_DIR}/patchwork/tests/data ]] || {
  echo "bench-intake-corpus: set PATCHWORK_DIR to a checkout of getpatchwork/patchwork" >&2
  exit 2
}
pg_start || exit 1
mkdir -p "$T/Maildir/new" "$T/Maildir/cur" "$T/Maildir/tmp"
cat >"$T/mail.json" <<JSON
{"sources": [{"name": "corpus", "maildir": "$T/Maildir"}], "poll_seconds": 0.2, "wait_seconds": $WAIT}
JSON
server_start --mail-config "$T/mail.json" || exit 1
python3 "$TOP/bench/intake-corpus.py" "$PATCHWORK_DIR" "$URL" "$T/Maildir" "$WAIT"
rc=$?
grep -E 'mail (corpus|series): (skipped|gave up)|submission [0-9]+: part' "$SERVER_LOG" | sed 's/^/  log: /' | head -40
exit $rc
