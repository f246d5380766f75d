#!/usr/bin/env bash
# An unnumbered patch posted in the thread of a numbered series it is no
# part of (a reply to its cover letter) is a submission of its own, through
# the Maildir intake (all at once and one mail at a time) and the API: not
# merged into the series, not dropped with it.
source "$(dirname "$0")/lib/tap.sh"
source "$TOP/tests/lib/pg.sh"
source "$TOP/tests/lib/server.sh"
source "$TOP/tests/lib/intake.sh"

pg_start || bail_out "no postgres"
locking_repo "$T/repo" && git format-patch -q --cover-letter --thread -o "$T/fp" HEAD~2 && cd "$TOP" ||
  bail_out "git format-patch failed"
# tagged TAG: the series and the orphan (patch 1 retitled, unnumbered, a
# reply to the cover) with Message-IDs tagged TAG, as $T/TAG/*.eml
tagged() {
  local f n=0
  mkdir -p "$T/$1"
  for f in "$T"/fp/*.patch; do
    sed "s/^\(Message-I[Dd]\|In-Reply-To\|References\): <\(.*\)>/\1: <$1-\2>/I" "$f" >"$T/$1/000$n.eml"
    n=$((n + 1))
  done
  sed "s/^Message-I[Dd]: <\(.*\)>/Message-ID: <$1-orphan-\1>/I; s/^Subject: .*/Subject: locking: an orphaned fix/" \
    "$T/$1/0001.eml" >"$T/$1/0003.eml"
}
tagged all && tagged one && tagged api

maildir_server_start || bail_out "no server"

# series TAG: "cover+patches" of each submission holding TAG's mails
series() {
  sql "SELECT string_agg(c, ' ' ORDER BY id) FROM (SELECT s.id, count(*) FILTER (WHERE p.seq = 0) || '+' ||
       count(*) FILTER (WHERE p.seq > 0) AS c FROM submissions s JOIN patches p ON p.submission_id = s.id
       WHERE p.message_id LIKE '<$1-%' GROUP BY s.id) x"
}

# 1. all at once, the orphan between the parts
maildir_deliver "$T/Maildir" "$T"/all/0000.eml "$T"/all/0001.eml "$T"/all/0003.eml "$T"/all/0002.eml
is "$(wait_for "SELECT count(*) FROM mail_messages WHERE message_id LIKE '<all-%' AND state = 'submitted'" 4)" 4 \
  "every mail is submitted"
like "$(series all)" '^(1\+2 0\+1|0\+1 1\+2)$' "as the series and the orphan apart"
is "$(sql "SELECT p.subject FROM patches p JOIN patches q ON q.submission_id = p.submission_id
           WHERE q.message_id LIKE '<all-orphan-%' ORDER BY p.seq")" "locking: an orphaned fix" \
  "the orphan's submission holds it alone"

# 2. one mail at a time, the orphan after the cover and part 1
for f in 0000 0001 0003 0002; do
  maildir_deliver "$T/Maildir" "$T/one/$f.eml"
  for ((i = 0; i < 100; i++)); do [[ -z $(ls "$T/Maildir/new") ]] && break; sleep 0.1; done
  sleep 0.5
done
is "$(wait_for "SELECT count(*) FROM mail_messages WHERE message_id LIKE '<one-%' AND state = 'submitted'" 4)" 4 \
  "one at a time, every mail is submitted"
is "$(series one)" "0+1 1+2" "the orphan first, then the series"

# 3. the API, the series missing part 2: the orphan is what it can test
for f in "$T"/api/0000.eml "$T"/api/0001.eml "$T"/api/0003.eml; do cat "$f" && echo; done >"$T/api.mbox"
api POST /api/v1/submissions --data-binary @<(jq -Rs '{mbox: .}' "$T/api.mbox")
is "$CODE $(jq -r '.patches' <<<"$BODY")" "202 1" "the API takes the orphan" || diag "$BODY"
is "$(series api)" "0+1" "alone"
done_testing
