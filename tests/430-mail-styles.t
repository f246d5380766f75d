#!/usr/bin/env bash
# Numbering styles the lists use, through the Maildir intake and the API: a
# versioned cover over unversioned parts ("[PATCH net-next v3 0/2]" over
# "[PATCH 1/2]"), Mercurial's "[PATCH 1 of 2]" delivered one mail at a time,
# a patch whose subject has no PATCH prefix, a stray part past the
# numbering (set aside, the rest tested), a part sent again while its
# series waits (the later copy tested); what is set aside is logged, kept
# and shown by the API, the client and the dashboard (web/test/setaside.mjs,
# skipped without chromium and web/node_modules); and the client given a
# header byte that is not UTF-8.
source "$(dirname "$0")/lib/tap.sh"
source "$TOP/tests/lib/pg.sh"
source "$TOP/tests/lib/server.sh"
source "$TOP/tests/lib/intake.sh"
source "$TOP/tests/lib/browser.sh"

pg_start || bail_out "no postgres"
locking_repo "$T/repo" &&
  git format-patch -q --cover-letter --thread -o "$T/fp" HEAD~2 && cd "$TOP" || bail_out "git format-patch failed"

# style TAG SED-SCRIPT: the series of $T/fp with Message-IDs tagged TAG and
# SED-SCRIPT applied, as $T/TAG/0000.eml ...
style() {
  local tag=$1 f n=0
  mkdir -p "$T/$tag"
  for f in "$T"/fp/*.patch; do
    sed "s/^\(Message-I[Dd]\|In-Reply-To\|References\): <\(.*\)>/\1: <$tag-\2>/I; $2" "$f" >"$T/$tag/000$n.eml"
    n=$((n + 1))
  done
}
style netdev 's/^Subject: \[PATCH 0\/2\]/Subject: [PATCH net-next v3 0\/2]/'
style hg 's/^Subject: \[PATCH \([0-9]\)\/2\]/Subject: [PATCH \1 of 2]/'
style stray ''
sed 's/^\(Message-I[Dd]\): <\(.*\)>/\1: <three-\2>/I; s/\[PATCH 2\/2\]/[PATCH 3\/2]/' "$T/stray/0002.eml" >"$T/stray/0003.eml"
style resend ''
sed 's/^\(Message-I[Dd]\): <\(.*\)>/\1: <again-\2>/I; s/^+int handoff;/+int handoff, spinner;/' "$T/resend/0001.eml" >"$T/resend/0003.eml"
sed -n '/^Subject:/!p; /^Subject:/s/.*/Subject: MAINTAINERS: add the locking files/p' "$T/fp/0001-"* |
  sed '/^In-Reply-To:/d; /^References:/d; s/^\(Message-I[Dd]\): <\(.*\)>/\1: <plain-\2>/I' >"$T/plain.eml"

maildir_server_start || bail_out "no server"

# series TAG: "version cover+patches" of the submission holding TAG's mails
series() {
  sql "SELECT s.version || ' ' || count(*) FILTER (WHERE p.seq = 0) || '+' || count(*) FILTER (WHERE p.seq > 0)
       FROM submissions s JOIN patches p ON p.submission_id = s.id WHERE p.message_id LIKE '<$1-%'
       GROUP BY s.id ORDER BY s.id"
}
# one_at_a_time FILE...: deliver each once the intake took the one before
one_at_a_time() {
  local f i
  for f in "$@"; do
    maildir_deliver "$T/Maildir" "$f"
    for ((i = 0; i < 100; i++)); do [[ -z $(ls "$T/Maildir/new") ]] && break; sleep 0.1; done
    sleep 0.5
  done
}

# 1. the netdev cover keeps its series: v3, cover kept, nothing given up
maildir_deliver "$T/Maildir" "$T"/netdev/*.eml
is "$(wait_for "SELECT count(*) FROM mail_messages WHERE message_id LIKE '<netdev-%' AND state = 'submitted'" 3)" 3 \
  "the netdev series' three mails are submitted"
is "$(series netdev)" "3 1+2" "as one series, version 3 of its cover, the cover letter kept"
is "$(sql "SELECT p.subject FROM submissions s JOIN patches p ON p.submission_id = s.id AND p.seq = 0
           WHERE p.message_id LIKE '<netdev-%'")" "[PATCH net-next v3 0/2] *** SUBJECT HERE ***" \
  "the cover's subject is the series'"
unlike "$(cat "$SERVER_LOG")" 'gave up' "nothing was given up waiting for a cover it had"

# 2. Mercurial numbering, one mail at a time: one series
one_at_a_time "$T"/hg/0001.eml "$T"/hg/0000.eml "$T"/hg/0002.eml
is "$(wait_for "SELECT count(*) FROM mail_messages WHERE message_id LIKE '<hg-%' AND state = 'submitted'" 3)" 3 \
  "the [PATCH n of m] mails are submitted"
is "$(series hg)" "1 1+2" "as one series with its cover letter"

# 3. a patch without PATCH in its subject is taken, as the API takes it
maildir_deliver "$T/Maildir" "$T/plain.eml"
is "$(wait_for "SELECT count(*) FROM mail_messages WHERE message_id LIKE '<plain-%' AND state = 'submitted'" 1)" 1 \
  "a 'MAINTAINERS: ...' patch is submitted"

# 4. a stray 3/2 is set aside and logged; 1/2 and 2/2 are tested
# (3/2 first: a poll reading the others alone would submit them without it)
maildir_deliver "$T/Maildir" "$T"/stray/0003.eml "$T"/stray/000[0-2].eml
is "$(wait_for "SELECT count(*) FROM mail_messages WHERE message_id LIKE '<stray-%' AND state = 'submitted'" 3)" 3 \
  "the series with a stray part is submitted"
is "$(series stray)" "1 1+2" "without the stray part"
like "$(cat "$SERVER_LOG")" 'submission [0-9]+: part 3/2 set aside, past the series. numbering: \[PATCH 3/2\]' \
  "the stray part is logged as set aside"
stray_sid=$(sql "SELECT submission_id FROM mail_messages WHERE message_id LIKE '<stray-%' LIMIT 1")
api GET "/api/v1/submissions/$stray_sid"
is "$(jq -c '[.set_aside[] | [.seq, .total, .why, (.message_id | test("^<three-"))]]' <<<"$BODY")" '[[3,2,"past-numbering",true]]' \
  "and shown with the submission: part 3/2, past the numbering" || diag "$BODY"
like "$(jq -r '.set_aside[0].diff' <<<"$BODY")" '^diff --git' "with its diff kept"

# 5. a part sent again while its series waits: the later copy is tested
maildir_deliver "$T/Maildir" "$T"/resend/0000.eml "$T"/resend/0001.eml "$T"/resend/0003.eml "$T"/resend/0002.eml
is "$(wait_for "SELECT count(*) FROM mail_messages WHERE message_id LIKE '<resend-%' AND state = 'submitted'" 3)" 3 \
  "the resent series is submitted"
like "$(sql "SELECT p.diff FROM patches p WHERE p.message_id LIKE '<again-resend-%'")" 'handoff, spinner' \
  "with the later copy of part 1"
like "$(cat "$SERVER_LOG")" 'part 1/2 was sent again: the later copy <again-resend-[^ ]*> is tested, the earlier <resend-[^ ]*> is set aside' \
  "and the replacement is logged"
resend_sid=$(sql "SELECT submission_id FROM patches WHERE message_id LIKE '<again-resend-%'")
api GET "/api/v1/submissions/$resend_sid"
is "$(jq -c '[.set_aside[] | [.seq, .why, (.message_id | test("^<resend-"))]]' <<<"$BODY")" '[[1,"replaced",true]]' \
  "the earlier copy is shown with the submission, not dropped" || diag "$BODY"
unlike "$(jq -r '.set_aside[0].diff' <<<"$BODY")" 'spinner' "with its own diff"
browser_run "the submission pages show the mails set aside" setaside.mjs "$URL" "$stray_sid" "$resend_sid"

# 6. the API reads the netdev series as the intake does
for f in "$T"/netdev/*.eml; do
  sed 's/<netdev-/<api-/' "$f" && echo
done >"$T/netdev.mbox"
api POST /api/v1/submissions --data-binary @<(jq -Rs '{mbox: .}' "$T/netdev.mbox")
is "$CODE $(jq -r '.patches' <<<"$BODY")" "202 2" "the API takes the netdev series" || diag "$BODY"
is "$(series api)" "3 1+2" "as version 3 with its cover letter"
# the API sets the same stray part aside and says so in its 202; the client prints it
for f in "$T"/stray/000[0-3].eml; do
  sed 's/<\(three-\)\?stray-/<\1apistray-/' "$f" && echo
done >"$T/stray.mbox"
api POST /api/v1/submissions --data-binary @<(jq -Rs '{mbox: .}' "$T/stray.mbox")
is "$CODE $(jq -c '[.patches, [.set_aside[] | [.seq, .total, .why]]]' <<<"$BODY")" '202 [2,[[3,2,"past-numbering"]]]' \
  "the API tests parts 1..2 and names 3/2 as set aside" || diag "$BODY"
sed 's/<\(three-\)\?stray-/<\1clistray-/' "$T/stray.mbox" >"$T/clistray.mbox"
out=$("$BIN/locklab" submit --server "$URL" "$T/clistray.mbox" 2>&1)
like "$out" 'not tested: part 3/2 \[PATCH 3/2\].*past the series. numbering' "locklab submit says which part is not tested" ||
  diag "$out"

# 7. the client takes any bytes a mail holds: a Latin-1 byte in a header
sed "s/^From: .*/From: Ren$(printf '\xe9') <rene@example.org>/; s/<plain-/<latin1-/" "$T/plain.eml" >"$T/latin1.eml"
out=$("$BIN/locklab" submit --server "$URL" "$T/latin1.eml" 2>&1)
ok $? "locklab submit takes a mail with a Latin-1 byte in a header" || diag "$out"
is "$(sql "SELECT author FROM patches WHERE message_id LIKE '<latin1-%'")" "René <rene@example.org>" \
  "and the byte is read as the Latin-1 letter it is"
done_testing
