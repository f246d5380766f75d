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
jq -Rs '{mbox: ., suites: ["quick", "smoke"], notify: "Waiman <WAIMAN@example.org>"}' "$T/s/series.mbox" >"$T/req.json"
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

# the versions of a series: the page embeds the newest 20, newest first, and
# the total; .../versions pages through all of them, older by ?before=ID
sql "INSERT INTO submissions (state, source, suites, subject, version, mail_series, reason)
  SELECT 'failed', 'mbox', '{smoke}', 'v' || g, g, mail_series, 'test: a version made in SQL'
  FROM submissions, generate_series(3, 44) g WHERE id = $sub" >/dev/null
all_ids=$(sql "SELECT string_agg(v.id::text, ',' ORDER BY v.version DESC, v.id DESC) FROM submissions v
  JOIN submissions s ON s.mail_series = v.mail_series WHERE s.id = $sub")
is "$(tr ',' '\n' <<<"$all_ids" | wc -l)" 45 "the series of the first submission has 45 versions"
api GET "/api/v1/submissions/$sub"
detail=$BODY
# the first submission is an old version: its page holds it too, after the newest 20
is "$(jq -r '[(.versions | length), .versions_total] | join(" ")' <<<"$detail")" "21 45" \
  "the page of an old version embeds the newest 20 and itself, and says there are 45"
is "$(jq -r '[.versions[0].version, .versions[19].version] | join(" ")' <<<"$detail")" "44 25" "the newest, newest first"
is "$(jq -r '.versions[20] | [.id, .version, .current, (.patches | length)] | join(" ")' <<<"$detail")" \
  "$sub $(sql "SELECT version FROM submissions WHERE id = $sub") true 3" "then its own version, marked current, with its patches"
is "$(jq -r '[.versions[] | select(.current)] | length' <<<"$detail")" 1 "only that one is current"
is "$(jq -r '.versions[0].patches | length' <<<"$detail")" 0 "each with its patches (none for the ones made in SQL)"
api GET "/api/v1/submissions/$sub/versions"
is "$CODE" 200 "the versions are served"
is "$(jq -c '.versions' <<<"$BODY")" "$(jq -c '.versions[:20]' <<<"$detail")" "the first page is the newest 20 the page embeds"
is "$(jq -r '.total' <<<"$BODY")" 45 "with the total"
next=$(jq -r .next_before <<<"$BODY")
is "$next" "$(jq -r '.versions[19].id' <<<"$detail")" "next_before is the oldest version of the page"
got=$(jq -r '[.versions[].id] | join(",")' <<<"$BODY")
api GET "/api/v1/submissions/$sub/versions?limit=20&before=$next"
is "$(jq -r '[(.versions | length), .versions[0].version, .versions[19].version] | join(" ")' <<<"$BODY")" "20 24 5" \
  "?before=ID gives the next 20, older than ID"
got="$got,$(jq -r '[.versions[].id] | join(",")' <<<"$BODY")"
next=$(jq -r .next_before <<<"$BODY")
api GET "/api/v1/submissions/$sub/versions?before=$next&limit=100"
is "$(jq -r '[(.versions | length), .next_before] | join(" ")' <<<"$BODY")" "5 " "the last page holds the 5 left and no next_before"
is "$(jq -r '[.versions[].patches | length] | join(",")' <<<"$BODY")" "0,0,3,3,3" "the posted versions with their patches"
got="$got,$(jq -r '[.versions[].id] | join(",")' <<<"$BODY")"
is "$got" "$all_ids" "the pages hold every version once, newest first"
new_id=$(cut -d, -f1 <<<"$all_ids") mid_id=$(cut -d, -f10 <<<"$all_ids")
api GET "/api/v1/submissions/$mid_id"
is "$(jq -r '[(.versions | length), .versions_total, ([.versions[] | select(.current) | .id] | join(","))] | join(" ")' <<<"$BODY")" \
  "20 45 $mid_id" "a version among the newest 20 is embedded once, marked current"
api GET "/api/v1/submissions/$new_id"
newest=$(jq -c '.versions' <<<"$BODY")
api GET "/api/v1/submissions/$new_id/versions"
is "$(jq -c '.versions' <<<"$BODY")" "$newest" "the first page of the newest version is what its page embeds"
for bad in limit=0 limit=101 limit=abc limit= 'limit=+5' before=0 before=-3 before=abc "before=$g" "before=999999"; do
  api GET "/api/v1/submissions/$sub/versions?$bad"
  is "$CODE" 400 "versions?$bad is refused with 400"
  like "$(jq -r .detail <<<"$BODY")" "^${bad%%=*}: " "and the detail names ${bad%%=*}"
done
api GET "/api/v1/submissions/999999/versions"
is "$CODE" 404 "the versions of an unknown submission are 404"
api GET "/api/v1/submissions/$g/versions"
is "$(jq -c '[.total, .versions, .next_before]' <<<"$BODY")" '[0,[],null]' "a submission not in a series has no versions"

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
