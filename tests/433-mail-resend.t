#!/usr/bin/env bash
# A series sent again without a version label after it was submitted (new
# code, the same numbering, new Message-IDs) is not dropped: it is a new
# submission of the same version whose previous_id names the first, the
# API shows the link and the log says so; the same mails delivered again
# byte for byte stay duplicates; a later v2 follows the resend; the two
# copies delivered at once are two submissions too.
source "$(dirname "$0")/lib/tap.sh"
source "$TOP/tests/lib/pg.sh"
source "$TOP/tests/lib/server.sh"
source "$TOP/tests/lib/intake.sh"

pg_start || bail_out "no postgres"
locking_repo "$T/repo" &&
  git format-patch -q --thread -o "$T/first" HEAD~2 && sleep 1 &&
  git reset -q --hard HEAD~2 && printf 'int handoff, spinner;\n' >>m.c &&
  git commit -qam 'locking: add handoff' -m 'Hand off, spin.' &&
  printf 'int pickup;\n' >>m.c && git commit -qam 'locking: add pickup' -m 'Pick up.' &&
  git format-patch -q --thread -o "$T/again" HEAD~2 && sleep 1 &&
  git format-patch -q --thread -v2 -o "$T/v2" HEAD~2 && cd "$TOP" || bail_out "git format-patch failed"
[[ $(grep -h '^Message-I[Dd]:' "$T"/first/* "$T"/again/* | sort -u | wc -l) == 4 ]] ||
  bail_out "format-patch gave the resend the first copy's Message-IDs"

maildir_server_start || bail_out "no server"

# 1. the first copy
maildir_deliver "$T/Maildir" "$T"/first/*.patch
is "$(wait_for "SELECT count(*) FROM submissions WHERE source = 'mail'" 1)" 1 "the series is submitted"
s1=$(sql "SELECT id FROM submissions WHERE source = 'mail'")

# 2. the same series sent again, new code, no version label
maildir_deliver "$T/Maildir" "$T"/again/*.patch
is "$(wait_for "SELECT count(*) FROM submissions WHERE source = 'mail'" 2)" 2 "the resend is a new submission"
s2=$(sql "SELECT max(id) FROM submissions WHERE source = 'mail'")
is "$(sql "SELECT version || ' ' || previous_id FROM submissions WHERE id = $s2")" "1 $s1" \
  "of the same version, linked to the first copy"
like "$(sql "SELECT diff FROM patches WHERE submission_id = $s2 AND seq = 1")" 'handoff, spinner' \
  "holding the new code"
api GET "/api/v1/submissions/$s2"
is "$CODE $(jq -r '.previous_id' <<<"$BODY")" "200 $s1" "the API shows the link"
is "$(jq -r '.versions_total' <<<"$BODY")" 2 "and both copies among the versions" || diag "$BODY"
for ((i = 0; i < 100; i++)); do grep -q 'sent again as v1 without a new version label' "$SERVER_LOG" && break; sleep 0.2; done
like "$(cat "$SERVER_LOG")" "sent again as v1 without a new version label: submission $s2 is a new version of submission $s1" \
  "the log says so"

# 3. the resend delivered again byte for byte: duplicates, nothing new
maildir_deliver "$T/Maildir" "$T"/again/*.patch
for ((i = 0; i < 150; i++)); do [[ $(metric 'locklab_mail_messages_total{result="duplicate"}') == 2 ]] && break; sleep 0.2; done
is "$(metric 'locklab_mail_messages_total{result="duplicate"}')" 2 "an identical resend is counted as duplicates"
sleep 1
is "$(sql "SELECT count(*) FROM submissions WHERE source = 'mail'")" 2 "and makes no submission"

# 4. v2 follows the newest copy of v1
maildir_deliver "$T/Maildir" "$T"/v2/*.patch
is "$(wait_for "SELECT count(*) FROM submissions WHERE source = 'mail'" 3)" 3 "v2 is submitted"
is "$(sql "SELECT version || ' ' || previous_id FROM submissions WHERE source = 'mail' ORDER BY id DESC LIMIT 1")" \
  "2 $s2" "linked to the resend"
unlike "$(grep -c 'v2 without a new version label' "$SERVER_LOG")" '^[1-9]' "a labelled version is no resend"

# 5. both copies delivered at once, the resend a reply to the first copy
# (git send-email --in-reply-to): two submissions, linked
for d in first again; do
  mkdir -p "$T/both-$d"
  for f in "$T/$d"/*.patch; do
    sed 's/^\(Message-I[Dd]\|In-Reply-To\|References\): <\(.*\)>/\1: <both-\2>/I' "$f" >"$T/both-$d/${f##*/}"
  done
done
root=$(sed -n 's/^Message-I[Dd]: //Ip' "$T"/both-first/0001-*)
sed -i "/^Message-I[Dd]:/Ia In-Reply-To: $root\nReferences: $root" "$T"/both-again/0001-*
# (in an order whose every prefix a poll may read decides the same: the
# first copy is complete only once the resend's part 2 waits for its part 1)
maildir_deliver "$T/Maildir" "$T"/both-again/0002-* "$T"/both-first/*.patch "$T"/both-again/0001-*
is "$(wait_for "SELECT count(*) FROM mail_messages WHERE message_id LIKE '<both-%' AND state = 'submitted'" 4)" 4 \
  "a series and its resend delivered together are submitted"
b=($(sql "SELECT DISTINCT submission_id FROM patches WHERE message_id LIKE '<both-%' ORDER BY 1"))
is "${#b[@]}" 2 "as two submissions"
is "$(sql "SELECT version || ' ' || previous_id FROM submissions WHERE id = ${b[1]:-0}")" "1 ${b[0]:-}" \
  "of v1, the second linked to the first"
like "$(sql "SELECT diff FROM patches WHERE submission_id = ${b[1]:-0} AND seq = 1")" 'handoff, spinner' \
  "holding the new code"
done_testing
