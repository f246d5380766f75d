#!/usr/bin/env bash
# Database errors say whose fault they were: a value the database refuses
# (SQLSTATE class 22, a check) is 422, a unique violation 409, the database
# gone 503 with Retry-After and no libpq text in the body; the server
# survives the database going away and coming back without a restart, on
# new and on kept-alive connections, and /healthz says which.
source "$(dirname "$0")/lib/tap.sh"
source "$TOP/tests/lib/pg.sh"
source "$TOP/tests/lib/server.sh"

server_setup
jq -Rs '{mbox: .}' "$T/s/series.mbox" >"$T/ok.json"
register_agent
A=$AGENT_TOKEN

# the database's own refusals, made deterministic by test-only constraints
sql "ALTER TABLE agents ALTER COLUMN name TYPE varchar(8)" >/dev/null
api POST /api/v1/agents/register -H "Authorization: Bearer $ADMIN_TOKEN" -d '{"name": "a-long-agent-name"}'
is "$CODE" 422 "a value the database refuses (22001, too long) is 422"
is "$(jq -r .error <<<"$BODY")" invalid "error: invalid"
like "$(jq -r .detail <<<"$BODY")" 'cannot store the agent: the database refused a value: value too long' \
  "the detail says what and the database's reason"
sql "CREATE UNIQUE INDEX agents_twin ON agents (name) WHERE name = 'twin'" >/dev/null
api POST /api/v1/agents/register -H "Authorization: Bearer $ADMIN_TOKEN" -d '{"name": "twin"}'
is "$CODE" 201 "the first twin is registered"
api POST /api/v1/agents/register -H "Authorization: Bearer $ADMIN_TOKEN" -d '{"name": "twin"}'
is "$CODE" 409 "a unique violation (23505) is 409"
is "$(jq -r .error <<<"$BODY")" conflict "error: conflict"
sql "ALTER TABLE agents ADD CONSTRAINT agents_no_x CHECK (name <> 'x')" >/dev/null
api POST /api/v1/agents/register -H "Authorization: Bearer $ADMIN_TOKEN" -d '{"name": "x"}'
is "$CODE" 422 "a check violation (23514) is 422"
is "$(sql "SELECT count(*) FROM agents WHERE name IN ('x', 'a-long-agent-name')")" 0 "nothing is stored for them"
# bytes that are not UTF-8, decoded out of a quoted-printable mail with no
# charset: read as Latin-1 (mbox.c) and stored as UTF-8, never a 503
python3 - "$T/s/single.patch" >"$T/qp.json" <<'PY2'
import json, sys
mail = open(sys.argv[1]).read()
head, body = mail.split("\n\n", 1)
head += "\nContent-Transfer-Encoding: quoted-printable"
body = body.replace("Hand the lock", "Hand the =FF=FE lock", 1) if "Hand the lock" in body else "=FF=FE\n" + body
print(json.dumps({"mbox": head + "\n\n" + body}))
PY2
before=$(sql "SELECT count(*) FROM submissions")
api POST /api/v1/submissions -d @"$T/qp.json"
is "$CODE" 202 "a mail whose quoted-printable decodes to bytes that are not UTF-8 is taken (as Latin-1), not 503"
is "$(sql "SELECT count(*) FROM submissions")" "$((before + 1))" "and stored once"
like "$(sql "SELECT body FROM patches WHERE submission_id = $(jq -r .id <<<"$BODY") AND NOT is_cover")" "ÿþ" \
  "its body is UTF-8 text of the Latin-1 bytes"

# a keep-alive client: one connection, the database restarted in between
python3 - "$URL" "$TOP/tests/lib/pg.sh" "$PG_DIR" >"$T/keepalive.out" 2>&1 <<'PY'
import http.client, subprocess, sys, urllib.parse
u = urllib.parse.urlsplit(sys.argv[1])
c = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
def get(path):
    c.request("GET", path)
    r = c.getresponse()
    r.read()
    return r.status
first = get("/api/v1/submissions")
port = c.sock.getsockname()[1]
restart = 'source "$1"; PG_DIR="$2"; pg_down fast && pg_up'
subprocess.run(["bash", "-c", restart, "-", sys.argv[2], sys.argv[3]], check=True)
second = get("/api/v1/submissions")
print(first, second, "same-connection" if c.sock and c.sock.getsockname()[1] == port else "new-connection")
PY
is "$(cat "$T/keepalive.out")" "200 200 same-connection" \
  "a kept-alive connection is served right after the database restarted (its thread's session is renewed)"

# the database gone
pg_down fast
api GET /healthz -D "$T/h"
is "$CODE" 503 "/healthz is 503 with the database down"
is "$(jq -r '.status + "," + .database' <<<"$BODY")" "unavailable,unavailable" "and says the database is unavailable"
like "$(cat "$T/h")" '^Retry-After: [0-9]+' "with Retry-After"
check_503() {
  local name=$1
  shift
  api "$@" -D "$T/h"
  is "$CODE" 503 "$name: 503"
  like "$(tr -d '\r' <"$T/h")" '^Retry-After: 5$' "$name: Retry-After: 5"
  is "$(jq -r .error <<<"$BODY")" database "$name: error database"
  unlike "$BODY" 'server closed|connection to server|socket|FATAL|ERROR|PGSQL|postgres|No such file|terminat' \
    "$name: no libpq text ($(jq -r .detail <<<"$BODY"))"
}
check_503 "a list" GET /api/v1/submissions
check_503 "a submission" POST /api/v1/submissions -d @"$T/ok.json"
check_503 "a claim" POST /api/v1/jobs/claim -H "Authorization: Bearer $A"
check_503 "a tree" POST /api/v1/trees -H "Authorization: Bearer $ADMIN_TOKEN" -d '{"name": "t", "url": "https://h/t.git"}'
check_503 "the trees" GET /api/v1/trees
pg_up || { echo "Bail out! postgres did not come back"; exit 1; }
api GET /healthz
is "$CODE:$(jq -r .database <<<"$BODY")" "200:ok" "/healthz says ok once it is back, without a server restart"
api POST /api/v1/submissions -d @"$T/ok.json"
is "$CODE" 202 "a submission is stored again"
claim "$A"
like "$JOB" '^[0-9]+$' "and a job claimed"
[[ $JOB =~ ^[0-9]+$ ]] || diag "the claim answered $CODE: $BODY"
kill -0 "$SERVER_PID"
ok $? "the same server process served all of it"

done_testing
