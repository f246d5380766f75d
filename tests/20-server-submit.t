#!/usr/bin/env bash
# Submissions by mbox, by URL (plain, gzip, a single patch) and by git ref:
# what is stored is the series as the developer sent it.
source "$(dirname "$0")/lib/tap.sh"
source "$TOP/tests/lib/pg.sh"
source "$TOP/tests/lib/server.sh"

mkdir -p "$T/www"
file_server "$T/www" || bail_out "no file server"
# the fixture is on loopback, which the fetch policy refuses unless allowed
server_setup --fetch-allow "127.0.0.1:$FILES_PORT"

# by mbox
jq -Rs '{mbox: ., suites: ["quick", "smoke"], notify: "dev@example.org"}' "$T/s/series.mbox" >"$T/req.json"
api POST /api/v1/submissions -H 'Content-Type: application/json' -d @"$T/req.json"
body=$BODY
is "$CODE" 202 "mbox submission is accepted with 202"
is "$(jq -r .state <<<"$body")" queued "a new submission is queued"
sub=$(jq -r .id <<<"$body")
is "$(jq -r .patches <<<"$body")" 2 "both patches of the series are counted"
is "$(sql "SELECT string_agg(seq || ':' || subject, '|' ORDER BY seq) FROM patches WHERE submission_id = $sub")" \
  "0:[PATCH v2 0/2] *** SUBJECT HERE ***|1:[PATCH v2 1/2] locking/mutex: add handoff|2:[PATCH v2 2/2] locking/mutex: add pickup" \
  "cover letter and patches are stored in series order"
is "$(sql "SELECT DISTINCT author FROM patches WHERE submission_id = $sub")" "Waiman Løng <waiman@example.org>" \
  "the RFC 2047 encoded author is decoded"
want_ids=$(grep -hi '^Message-ID:' "$T"/s/out/*.patch | sed 's/^Message-ID: //I' | paste -sd'|')
is "$(sql "SELECT string_agg(message_id, '|' ORDER BY seq) FROM patches WHERE submission_id = $sub")" \
  "$want_ids" "each mail's Message-ID is kept"
like "$(sql "SELECT diff FROM patches WHERE submission_id = $sub AND seq = 1")" '^diff --git a/mutex.c b/mutex.c' \
  "the diff of patch 1 is stored"
unlike "$(sql "SELECT diff FROM patches WHERE submission_id = $sub AND seq = 1")" '^-- $' \
  "the format-patch signature is not part of the diff"
is "$(sql "SELECT body FROM patches WHERE submission_id = $sub AND seq = 1")" "Hand the lock to the top waiter." \
  "the commit message is stored apart from the diff"
is "$(sql "SELECT string_agg(suite || '/' || state, ',' ORDER BY suite) FROM jobs WHERE submission_id = $sub")" \
  "quick/queued,smoke/queued" "one queued job per suite"
api GET "/api/v1/submissions/$sub"
detail=$BODY
is "$CODE" 200 "the submission detail is served"
is "$(jq -r '.patches | length' <<<"$detail")" 3 "the detail lists cover letter and patches"
is "$(jq -r .message_id <<<"$detail")" "$(grep -hi '^Message-ID:' "$T"/s/out/v2-0000-*.patch | sed 's/^Message-ID: //I')" \
  "the reply threads to the cover letter"

# by URL: the series as one mbox, gzip'd like lore's t.mbox.gz, and one patch
cp "$T/s/series.mbox" "$T/www/t.mbox"
gzip -c "$T/s/series.mbox" >"$T/www/t.mbox.gz"
cp "$T/s/single.patch" "$T/www/raw"
cp "$T"/s/out/v2-0001-*.patch "$T/www/part1"
api POST /api/v1/submissions -d "{\"url\": \"$FILES_URL/t.mbox\"}"
body=$BODY
is "$CODE" 202 "URL submission is fetched and accepted"
is "$(jq -r .patches <<<"$body")" 2 "the fetched series has two patches"
is "$(sql "SELECT url FROM submissions WHERE id = $(jq -r .id <<<"$body")")" "$FILES_URL/t.mbox" "the URL is stored"
api POST /api/v1/submissions -d "{\"url\": \"$FILES_URL/t.mbox.gz\"}"
body=$BODY
is "$CODE" 202 "a gzip'd mbox (t.mbox.gz) is unpacked"
is "$(jq -r .patches <<<"$body")" 2 "the gzip'd series has two patches"
api POST /api/v1/submissions -d "{\"url\": \"$FILES_URL/raw\"}"
body=$BODY
is "$CODE" 202 "a single unnumbered patch is accepted"
one=$(jq -r .id <<<"$body")
is "$(sql "SELECT count(*) || ':' || min(seq) || ':' || min(subject) FROM patches WHERE submission_id = $one")" \
  "1:1:[PATCH] locking/mutex: add pickup" "it is stored as patch 1 of 1"
msgid=$(grep -hi '^Message-ID:' "$T/s/single.patch" | sed 's/^Message-ID: //I')
like "$msgid" '^<.+>$' "the single patch has a Message-ID"
is "$(sql "SELECT reply_to_msgid FROM submissions WHERE id = $one")" "$msgid" "the reply threads to that patch"
before=$(sql "SELECT count(*) FROM submissions")
api POST /api/v1/submissions -d "{\"url\": \"$FILES_URL/part1\"}"
is "$CODE" 422 "patch 1/2 alone is a series with a missing part"
like "$(jq -r .detail <<<"$BODY")" 'patch 2/2 is missing' "the reason names the missing patch"
is "$(sql "SELECT count(*) FROM submissions")" "$before" "nothing is stored for it"

# a URL that fails is a 4xx with the reason and stores nothing
before=$(sql "SELECT count(*) FROM submissions")
api POST /api/v1/submissions -d "{\"url\": \"$FILES_URL/missing.mbox\"}"
body=$BODY
is "$CODE" 422 "a URL answering 404 is refused"
like "$(jq -r .detail <<<"$body")" 'HTTP status 404' "the reason names the HTTP status"
is "$(sql "SELECT count(*) FROM submissions")" "$before" "nothing is stored for it"

# by git ref
api POST /api/v1/submissions -d '{"git": {"url": "https://git.example.org/linux.git", "ref": "locking/core", "base": "v6.1"}, "suites": ["kernel"]}'
body=$BODY
is "$CODE" 202 "git ref submission is accepted"
g=$(jq -r .id <<<"$body")
is "$(sql "SELECT source || '|' || git_url || '|' || git_ref || '|' || git_base FROM submissions WHERE id = $g")" \
  "git|https://git.example.org/linux.git|locking/core|v6.1" "git url, ref and base are stored"
is "$(sql "SELECT suite FROM jobs WHERE submission_id = $g")" kernel "the git submission gets its job"

# listing by state
api GET '/api/v1/submissions?state=queued'
list=$BODY
is "$CODE" 200 "submissions can be listed by state"
is "$(jq -r '[.submissions[].state] | unique | join(",")' <<<"$list")" queued "only queued ones are listed"
is "$(jq -r '.submissions | length' <<<"$list")" "$(sql "SELECT count(*) FROM submissions WHERE state = 'queued'")" \
  "every queued submission is listed"
api GET '/api/v1/submissions?state=bogus'
is "$CODE" 400 "an unknown state is refused"
api GET '/api/v1/submissions/999999'
is "$CODE" 404 "an unknown submission is 404"

# the command-line client
out=$("$BIN/locklab" submit "$T/s/series.mbox" --server "$URL" 2>&1)
ok $? "locklab submit FILE succeeds"
like "$out" '^submission [0-9]+ queued' "it prints the new submission"
out=$(LOCKLAB_SERVER="$URL" "$BIN/locklab" submit "$FILES_URL/t.mbox.gz" 2>&1)
ok $? "locklab submit URL succeeds (LOCKLAB_SERVER)"
out=$(LOCKLAB_SERVER="$URL" "$BIN/locklab" status "$sub" 2>&1)
ok $? "locklab status ID succeeds"
like "$out" "submission $sub: queued" "it shows the state"
out=$(LOCKLAB_SERVER="$URL" "$BIN/locklab" submit "$T/nonexistent" 2>&1)
isnt_rc=$?
ok $((isnt_rc == 0)) "locklab submit of a missing file fails"
like "$out" 'nonexistent' "and names the file"
out=$(LOCKLAB_SERVER="http://127.0.0.1:1" "$BIN/locklab" status 2>&1)
ok $(($? == 0)) "locklab fails when the server is down"

done_testing
