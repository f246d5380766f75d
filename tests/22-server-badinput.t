#!/usr/bin/env bash
# Bad input gets the right 4xx with a reason and leaves the database as it
# was; strings that look like SQL are stored verbatim.
source "$(dirname "$0")/lib/tap.sh"
source "$TOP/tests/lib/pg.sh"
source "$TOP/tests/lib/server.sh"

pg_start || { echo "Bail out! no postgres"; exit 1; }
dead=$(free_port)
server_start --max-body 65536 --fetch-allow "127.0.0.1:$dead" || { echo "Bail out! no server"; exit 1; }
make_series "$T/s" || { echo "Bail out! git format-patch failed"; exit 1; }

counts() {
  sql "SELECT (SELECT count(*) FROM submissions) || ',' || (SELECT count(*) FROM patches) || ',' ||
    (SELECT count(*) FROM jobs) || ',' || (SELECT count(*) FROM results) || ',' ||
    (SELECT count(*) FROM agents) || ',' || (SELECT count(*) FROM trees)"
}
# refused STATUS NAME [api args]: the call gets STATUS, an error JSON, and
# changes nothing
refused() {
  local want=$1 name=$2 before
  shift 2
  before=$(counts)
  api "$@"
  is "$CODE" "$want" "$name: $want"
  like "$(jq -r '.error + ": " + .detail' <<<"$BODY" 2>/dev/null)" '^[a-z-]+: .+' "$name: says why"
  is "$(counts)" "$before" "$name: database unchanged"
}

register_agent
A=$AGENT_TOKEN
submit_mbox "$T/s/series.mbox"
claim "$A"
job=$JOB
register_agent
B=$AGENT_TOKEN
jq -Rs '{mbox: .}' "$T/s/series.mbox" >"$T/ok.json"

refused 400 "malformed JSON" POST /api/v1/submissions -d '{"mbox": "x",'
refused 400 "duplicate keys" POST /api/v1/submissions -d '{"url": "http://a/x", "url": "http://b/y"}'
refused 400 "an unknown field" POST /api/v1/submissions -d '{"mbox": "x", "priority": 1}'
refused 400 "a field of the wrong type" POST /api/v1/submissions -d '{"mbox": 42}'
refused 400 "two sources" POST /api/v1/submissions -d '{"mbox": "x", "url": "http://a/b"}'
refused 400 "no source" POST /api/v1/submissions -d '{"suites": ["quick"]}'
refused 400 "a JSON array" POST /api/v1/submissions -d '[]'
refused 400 "an empty body" POST /api/v1/submissions
refused 400 "a file:// URL" POST /api/v1/submissions -d '{"url": "file:///etc/passwd"}'
refused 400 "a gopher:// URL" POST /api/v1/submissions -d '{"url": "gopher://127.0.0.1:70/1"}'
refused 400 "an ftp:// URL" POST /api/v1/submissions -d '{"url": "ftp://127.0.0.1/x.mbox"}'
refused 400 "a git file:// URL" POST /api/v1/submissions -d '{"git": {"url": "file:///srv/linux", "ref": "main"}}'
refused 400 "a git ref that is an option" POST /api/v1/submissions -d '{"git": {"url": "https://h/r.git", "ref": "--upload-pack=touch /tmp/x"}}'
refused 400 "a git object without ref" POST /api/v1/submissions -d '{"git": {"url": "https://h/r.git"}}'
refused 400 "a suite name with a slash" POST /api/v1/submissions -d '{"mbox": "x", "suites": ["../etc"]}'
refused 422 "an mbox without a patch" POST /api/v1/submissions \
  -d '{"mbox": "From: a@b.c\nSubject: hello\n\njust words, no diff\n"}'
like "$(jq -r .detail <<<"$BODY")" 'no patch found' "the reason says no patch was found"
refused 422 "a reply that only quotes a diff" POST /api/v1/submissions \
  -d '{"mbox": "From: a@b.c\nSubject: Re: [PATCH] x\n\n> diff --git a/x b/x\n> --- a/x\n> +++ b/x\n"}'
refused 422 "a URL nobody answers" POST /api/v1/submissions -d "{\"url\": \"http://127.0.0.1:$dead/x.mbox\"}"
is "$(jq -r .error <<<"$BODY")" fetch-failed "it is allowed, so it fails on the connection"
jq '. + {tree: "no-such-tree"}' "$T/ok.json" >"$T/tree.json"
refused 422 "an unknown tree" POST /api/v1/submissions -d @"$T/tree.json"

# the body cap
head -c 100000 /dev/zero | tr '\0' 'a' | jq -Rs '{mbox: .}' >"$T/big.json"
refused 413 "a body over --max-body" POST /api/v1/submissions -d @"$T/big.json"
refused 413 "a chunked body over --max-body" POST /api/v1/submissions -H 'Transfer-Encoding: chunked' -d @"$T/big.json"
api POST /api/v1/submissions -d @"$T/ok.json"
is "$CODE" 202 "a body under the cap still works after them"

# tokens
refused 401 "claim without a token" POST /api/v1/jobs/claim
refused 401 "claim with a wrong token" POST /api/v1/jobs/claim -H 'Authorization: Bearer nope'
refused 401 "results without a token" POST "/api/v1/jobs/$job/results" -d '{}'
result_doc base 0 1 >"$T/r.json"
refused 403 "results for another agent's job" POST "/api/v1/jobs/$job/results" \
  -H "Authorization: Bearer $B" -H 'Idempotency-Key: b-0' -d @"$T/r.json"
refused 403 "a heartbeat for another agent's job" POST "/api/v1/jobs/$job/heartbeat" -H "Authorization: Bearer $B"
refused 404 "results for a job that does not exist" POST /api/v1/jobs/999999/results \
  -H "Authorization: Bearer $A" -H 'Idempotency-Key: x-0' -d @"$T/r.json"
jq '{result: ., idempotency_key: "k", extra: 1}' "$T/r.json" >"$T/w.json"
refused 400 "a result wrapper with an unknown field" POST "/api/v1/jobs/$job/results" \
  -H "Authorization: Bearer $A" -d @"$T/w.json"
jq '.round = -1' "$T/r.json" >"$T/neg.json"
refused 422 "a negative round" POST "/api/v1/jobs/$job/results" -H "Authorization: Bearer $A" \
  -H 'Idempotency-Key: neg' -d @"$T/neg.json"
jq '.suite = "full"' "$T/r.json" >"$T/suite.json"
refused 422 "a document of another suite" POST "/api/v1/jobs/$job/results" -H "Authorization: Bearer $A" \
  -H 'Idempotency-Key: suite' -d @"$T/suite.json"
refused 401 "a tree without a token" POST /api/v1/trees -d '{"name": "linux", "url": "https://h/l.git"}'
refused 403 "a tree with an agent token" POST /api/v1/trees -H "Authorization: Bearer $A" \
  -d '{"name": "linux", "url": "https://h/l.git"}'
refused 400 "a tree of an unknown kind" POST /api/v1/trees -H "Authorization: Bearer $ADMIN_TOKEN" \
  -d '{"name": "linux", "url": "https://h/l.git", "kind": "bsd"}'
api POST /api/v1/trees -H "Authorization: Bearer $ADMIN_TOKEN" -d '{"name": "linux", "url": "https://h/l.git", "kind": "kernel"}'
is "$CODE" 201 "the admin adds a tree"
refused 409 "a second tree of the same name" POST /api/v1/trees -H "Authorization: Bearer $ADMIN_TOKEN" \
  -d '{"name": "linux", "url": "https://h/other.git"}'
api GET /api/v1/trees
is "$(jq -r '.trees[0] | [.name, .kind] | join(",")' <<<"$BODY")" "linux,kernel" "trees are listed"

# paths
refused 404 "an unknown endpoint" GET /api/v1/nothing
refused 405 "a wrong method" DELETE /api/v1/submissions
refused 404 "a non-numeric id" GET /api/v1/submissions/1%20OR%201=1
api GET /../../../etc/passwd --path-as-is
unlike "$BODY" 'root:' "path traversal does not leave the web root"
ok $((CODE == 200)) "path traversal is refused ($CODE)"

# SQL-looking strings are data
evil="Robert'); DROP TABLE submissions; --"
sed "s/locking\/mutex: add handoff/$evil/; s/^From: .*/From: \"O'Brien; DELETE FROM agents\" <ob@example.org>/" \
  "$T/s/out/v2-0001-locking-mutex-add-handoff.patch" >"$T/evil.patch"
sed 's/\[PATCH v2 1\/2\]/[PATCH]/' -i "$T/evil.patch"
jq -Rs --arg n "x'; DELETE FROM jobs; --" '{mbox: ., notify: $n, suites: ["quick"]}' "$T/evil.patch" >"$T/evil.json"
api POST /api/v1/submissions -d @"$T/evil.json"
is "$CODE" 202 "a patch with SQL in its subject is accepted"
e=$(jq -r .id <<<"$BODY")
is "$(sql "SELECT subject FROM patches WHERE submission_id = $e")" "[PATCH] $evil" "the subject is stored verbatim"
is "$(sql "SELECT author FROM patches WHERE submission_id = $e")" "\"O'Brien; DELETE FROM agents\" <ob@example.org>" \
  "the author is stored verbatim"
is "$(sql "SELECT notify FROM submissions WHERE id = $e")" "x'; DELETE FROM jobs; --" "notify is stored verbatim"
api GET "/api/v1/submissions/$e"
is "$(jq -r '.patches[0].subject' <<<"$BODY")" "[PATCH] $evil" "and served back verbatim"
ok $(($(sql "SELECT count(*) FROM agents") == 0)) "no table was touched by them"

# submitter tokens, when required
server_start --submit-token-required || { echo "Bail out! no second server"; exit 1; }
refused 401 "a submission without a token when tokens are required" POST /api/v1/submissions -d @"$T/ok.json"
refused 403 "a submission with an agent token" POST /api/v1/submissions -H "Authorization: Bearer $A" -d @"$T/ok.json"
register_agent '{"role": "submitter"}'
S=$AGENT_TOKEN
api POST /api/v1/submissions -H "Authorization: Bearer $S" -d @"$T/ok.json"
is "$CODE" 202 "a submitter token may submit"
refused 403 "a submitter token cannot claim" POST /api/v1/jobs/claim -H "Authorization: Bearer $S"

done_testing
