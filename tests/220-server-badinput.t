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
refused 400 "a URL with credentials" POST /api/v1/submissions -d "{\"url\": \"http://user:secret@127.0.0.1:$dead/x.mbox\"}"
like "$(jq -r .detail <<<"$BODY")" 'credentials in a URL are refused' "the reason says credentials are refused"
unlike "$BODY" 'secret' "and does not repeat them"
refused 400 "a URL with a token as user name" POST /api/v1/submissions -d '{"url": "https://ghp_token@127.0.0.1/x.mbox"}'
refused 400 "a git URL with credentials" POST /api/v1/submissions -d '{"git": {"url": "https://u:p@h/r.git", "ref": "main"}}'
refused 400 "an ssh git URL with a password" POST /api/v1/submissions -d '{"git": {"url": "ssh://git:pw@h/r.git", "ref": "main"}}'
refused 400 "a URL with a space" POST /api/v1/submissions -d '{"url": "http://127.0.0.1/a b"}'
big_url="https://h/$(head -c 3000 /dev/zero | tr '\0' a)"
refused 400 "a URL over 2048 bytes" POST /api/v1/submissions -d "{\"git\": {\"url\": \"$big_url\", \"ref\": \"main\"}}"
refused 400 "a tree name over 64 bytes" POST /api/v1/submissions -d "{\"mbox\": \"x\", \"tree\": \"$(head -c 65 /dev/zero | tr '\0' t)\"}"
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
python3 -c 'import json; print(json.dumps({"reason": "x" * 16385}))' >"$T/reason.json"
refused 400 "a fail reason over 16 KiB" POST "/api/v1/jobs/$job/fail" -H "Authorization: Bearer $A" -d @"$T/reason.json"
is "$(sql "SELECT state FROM jobs WHERE id = $job")" running "the job is still running"
jq '. + {notify: ("n" * 1025)}' "$T/ok.json" >"$T/notify.json"
refused 400 "a notify over 1024 bytes" POST /api/v1/submissions -d @"$T/notify.json"
refused 401 "a tree without a token" POST /api/v1/trees -d '{"name": "linux", "url": "https://h/l.git"}'
refused 403 "a tree with an agent token" POST /api/v1/trees -H "Authorization: Bearer $A" \
  -d '{"name": "linux", "url": "https://h/l.git"}'
refused 400 "a tree of an unknown kind" POST /api/v1/trees -H "Authorization: Bearer $ADMIN_TOKEN" \
  -d '{"name": "linux", "url": "https://h/l.git", "kind": "bsd"}'
for t in '{"name": "fs", "url": "file:///srv/linux"}' '{"name": "fs", "url": "/srv/linux"}' \
  '{"name": "fs", "url": "ssh://git:pw@h/l.git"}' '{"name": "fs", "url": "https://u:pw@h/l.git"}' \
  '{"name": "fs", "url": "https://h/l.git", "branch": "--upload-pack=touch /tmp/x"}' \
  '{"name": "a/b", "url": "https://h/l.git"}' '{"name": "", "url": "https://h/l.git"}' \
  "{\"name\": \"$(head -c 65 /dev/zero | tr '\0' n)\", \"url\": \"https://h/l.git\"}"; do
  refused 400 "a tree $(head -c 90 <<<"$t")" POST /api/v1/trees -H "Authorization: Bearer $ADMIN_TOKEN" -d "$t"
done
api POST /api/v1/trees -H "Authorization: Bearer $ADMIN_TOKEN" -d '{"name": "fs", "url": "/srv/linux"}'
like "$(jq -r .detail <<<"$BODY")" 'local trees need --allow-local-trees' "a local path is refused with the flag that allows it named"
api POST /api/v1/trees -H "Authorization: Bearer $ADMIN_TOKEN" -d '{"name": "linux-git", "url": "git://h/l.git"}'
is "$CODE" 201 "a git:// tree is added"
api POST /api/v1/trees -H "Authorization: Bearer $ADMIN_TOKEN" -d '{"name": "linux-ssh", "url": "ssh://git@h/l.git"}'
is "$CODE" 201 "an ssh:// tree with a user name alone is added (its fetch is held to the checked address)"
api POST /api/v1/trees -H "Authorization: Bearer $ADMIN_TOKEN" -d '{"name": "linux", "url": "https://h/l.git", "kind": "kernel"}'
is "$CODE" 201 "the admin adds a tree"
refused 409 "a second tree of the same name" POST /api/v1/trees -H "Authorization: Bearer $ADMIN_TOKEN" \
  -d '{"name": "linux", "url": "https://h/other.git"}'
api GET /api/v1/trees
is "$(jq -r '.trees[] | select(.name == "linux") | [.name, .kind] | join(",")' <<<"$BODY")" "linux,kernel" "trees are listed"

# credentials stored before they were refused are not shown
sql "INSERT INTO trees (name, url) VALUES ('old', 'https://olduser:oldsecret@h/o.git')" >/dev/null
o=$(sql "INSERT INTO submissions (source, url, git_url, git_ref, suites, tree_id) VALUES ('git', 'https://u:oldsecret@h/x', 'https://tok:oldsecret@h/r.git', 'main', '{quick}', (SELECT id FROM trees WHERE name = 'old')) RETURNING id")
api GET /api/v1/trees
is "$(jq -r '.trees[] | select(.name == "old") | .url' <<<"$BODY")" "https://h/o.git" "an old tree's URL is listed without its userinfo"
api GET /api/v1/submissions
unlike "$BODY" 'oldsecret|olduser' "the submission list shows no old credentials"
api GET "/api/v1/submissions/$o"
is "$(jq -r '[.url, .git.url, .tree.url] | join(" ")' <<<"$BODY")" "https://h/x https://h/r.git https://h/o.git" \
  "nor does the submission's detail"
sql "DELETE FROM submissions WHERE id = $o; DELETE FROM trees WHERE name = 'old'" >/dev/null

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
api POST /api/v1/submissions -H "Authorization: Bearer $ADMIN_TOKEN" -d @"$T/evil.json"
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
server_start --submit-token-required --allow-local-trees || { echo "Bail out! no second server"; exit 1; }
api POST /api/v1/trees -H "Authorization: Bearer $ADMIN_TOKEN" -d '{"name": "local", "url": "/srv/linux"}'
is "$CODE" 201 "--allow-local-trees lets a tree name a local path"
refused 401 "a submission without a token when tokens are required" POST /api/v1/submissions -d @"$T/ok.json"
refused 403 "a submission with an agent token" POST /api/v1/submissions -H "Authorization: Bearer $A" -d @"$T/ok.json"
register_agent '{"role": "submitter"}'
S=$AGENT_TOKEN
api POST /api/v1/submissions -H "Authorization: Bearer $S" -d @"$T/ok.json"
is "$CODE" 202 "a submitter token may submit"
refused 403 "a submitter token cannot claim" POST /api/v1/jobs/claim -H "Authorization: Bearer $S"

done_testing
