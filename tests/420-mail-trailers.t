#!/usr/bin/env bash
# Trailers given on the list and the versions of a series: a v1
# and a v2 made by git format-patch --cover-letter --thread reach the intake
# through a Maildir; reviewers answer them with Reviewed-by:, Acked-by: and
# Tested-by: lines (quoted ones are not theirs), one before the series it
# answers is read.  The trailers are kept per patch (seq 0: the whole
# series), given by the API, put in the reply's Cc, dropped after
# trailer_days when their mail never came,
# and shown on the dashboard's submission page beside the two versions side
# by side (Debian's chromium driven by playwright-core, web/test/mail.mjs,
# text nodes only); on the page of v2 of a series of 32 versions it shows
# the newest 20 and v2 and loads the older ones from .../versions, also
# while new versions come (web/test/versions.mjs).  Needs `npm ci` in web/ and /usr/bin/chromium for the
# browser part, which is reported as skipped without them.
source "$(dirname "$0")/lib/tap.sh"
source "$TOP/tests/lib/pg.sh"
source "$TOP/tests/lib/server.sh"
source "$TOP/tests/lib/browser.sh"
source "$TOP/tests/lib/intake.sh"

pg_start || { echo "Bail out! no postgres"; exit 1; }
git init -q "$T/repo" && cd "$T/repo" && git config user.email dev@example.org &&
  git config user.name 'Dev Eloper' && printf 'int owner;\n' >m.c && git add m.c && git commit -qm start &&
  printf 'int handoff;\n' >>m.c && git commit -qam 'locking: add handoff' -m 'Hand off.' &&
  printf 'int pickup;\n' >>m.c && git commit -qam 'locking: add pickup' -m 'Pick up.' &&
  git format-patch -q --cover-letter --thread --to=locking@vger.example.org -o "$T/v1" HEAD~2 && sleep 1 &&
  printf 'int pickup2;\n' >>m.c && git commit -q -a --amend -m 'locking: add pickup, checked' -m 'Pick up.' &&
  git format-patch -q --cover-letter --thread -v2 --to=locking@vger.example.org -o "$T/v2" HEAD~2 &&
  cd "$TOP" || { echo "Bail out! git format-patch failed"; exit 1; }
sed -i 's/\*\*\* SUBJECT HERE \*\*\*/locking: handoff and pickup/' "$T"/v1/0000-* "$T"/v2/v2-0000-*

cat >"$T/mail.json" <<EOF
{"sources": [{"name": "lists", "maildir": "$T/Maildir"}],
 "trees": [{"list": "locking@vger.example.org", "tree": "locking"}],
 "poll_seconds": 0.2, "wait_seconds": 5}
EOF
mkdir -p "$T/Maildir/new" "$T/Maildir/cur" "$T/Maildir/tmp"
server_start --allow-local-trees --mail-config "$T/mail.json" || { echo "Bail out! no server"; exit 1; }
api POST /api/v1/trees -H "Authorization: Bearer $ADMIN_TOKEN" -d '{"name": "locking", "url": "/nonexistent/locking"}'

msgid() { sed -n 's/^Message-I[Dd]: *//Ip' "$1" | head -1; }

maildir_deliver "$T/Maildir" "$T"/v1/*.patch
is "$(wait_for "SELECT count(*) FROM submissions WHERE source = 'mail'" 1)" 1 "v1 is submitted"
s1=$(sql "SELECT id FROM submissions WHERE source = 'mail'")

# reply FILE ID FROM BODY: $T/ID.eml, a reply to FILE as a mail client writes it
reply() {
  local to subj
  to=$(msgid "$1")
  subj=$(sed -n 's/^Subject: //p' "$1" | head -1)
  printf 'From: %s\nTo: locking@vger.example.org\nSubject: Re: %s\nMessage-ID: <%s@example.org>\nIn-Reply-To: %s\nReferences: %s\nContent-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: 8bit\n\n%b\n' \
    "$3" "$subj" "$2" "$to" "$to" "$4" >"$T/$2.eml"
}
reply "$T"/v1/0001-* rev1 'Rëv One <rev1@example.org>' \
  'On Mon, Dev wrote:\n> Hand off.\n> Acked-by: Quoted Person <quoted@example.org>\n\nLooks right.\n\nReviewed-by: Rëv One <rev1@example.org>'
reply "$T"/v1/0000-* ack1 'Maint Ainer <maint@example.org>' \
  'For the series:\nAcked-by: Maint Ainer <maint@example.org>\ntested-by: Tess Ter <tess@example.org>'
reply "$T"/v1/0002-* xss1 'Evil <evil@example.org>' \
  'Reviewed-by: <img src=x onerror=alert(1)> <evil@example.org>'
reply "$T"/v1/0001-* none1 'Chat <chat@example.org>' 'No trailer here, only talk.\nReviewed-by: nobody'
# a trailer for a mail locklab does not have (yet): kept, shown nowhere
printf 'From: a <a@example.org>\nSubject: Re: [PATCH] elsewhere\nMessage-ID: <far@example.org>\nIn-Reply-To: <unknown@example.org>\n\nReviewed-by: A <a@example.org>\n' >"$T/far.eml"
maildir_deliver "$T/Maildir" "$T/rev1.eml" "$T/ack1.eml" "$T/xss1.eml" "$T/none1.eml" "$T/far.eml"
is "$(wait_for "SELECT count(*) FROM mail_trailers" 5)" 5 "the four trailers of the replies to v1 are kept, and the other one"
api GET "/api/v1/submissions/$s1"
is "$(jq -r '.trailers[] | "\(.seq) \(.kind): \(.who)"' <<<"$BODY" | sort)" \
  "0 Acked-by: Maint Ainer <maint@example.org>
0 Tested-by: Tess Ter <tess@example.org>
1 Reviewed-by: Rëv One <rev1@example.org>
2 Reviewed-by: <img src=x onerror=alert(1)> <evil@example.org>" \
  "the API gives each trailer with its patch (0: the whole series), decoded"
is "$(jq -r '[.trailers[] | select(.seq == 1) | .from, .reply_id] | join(" ")' <<<"$BODY")" \
  "Rëv One <rev1@example.org> <rev1@example.org>" "with who sent it and the reply's Message-ID"
unlike "$(sql "SELECT string_agg(who, ' ') FROM mail_trailers")" 'quoted@|nobody' \
  "quoted trailers and trailers without an address are not kept"
is "$(metric 'locklab_mail_messages_total{result="trailers"}')" 4 "/metrics counts the four replies that gave trailers"
is "$(metric 'locklab_mail_messages_total{result="ignored"}')" 1 "the other one is ignored"
maildir_deliver "$T/Maildir" "$T/rev1.eml"
for ((i = 0; i < 150; i++)); do [[ -z $(ls "$T/Maildir/new") ]] && break; sleep 0.2; done
is "$(sql "SELECT count(*) FROM mail_trailers")" 5 "the same reply read again adds nothing"

# the reply to v1 goes to the reviewers too (ended by hand: no agent here)
sql "UPDATE submissions SET state = 'failed', reason = 'test: ended by hand' WHERE id = $s1" >/dev/null
api GET "/api/v1/submissions/$s1/reply"
cc=$(sed -n '/^Cc:/,/^[A-Za-z-]*: /p' <<<"$BODY" | sed '$d' | tr -d '\n')
like "$cc" 'maint@example\.org' "the reply's Cc holds the reviewer who acked the series on the list"
like "$cc" 'rev1@example\.org' "and the one who reviewed a patch"
unlike "$cc" 'tess@example' "a Tested-by is not a reviewer"

# v2: a new submission linked to v1; the API gives both versions.  A review
# of its patch 1 is read before the series itself.
reply "$T"/v2/v2-0001-* early2 'Early Bird <early@example.org>' 'Acked-by: Early Bird <early@example.org>'
maildir_deliver "$T/Maildir" "$T/early2.eml"
is "$(wait_for "SELECT count(*) FROM mail_trailers" 6)" 6 "a trailer for a patch not yet read is kept"
maildir_deliver "$T/Maildir" "$T"/v2/*.patch
is "$(wait_for "SELECT count(*) FROM submissions WHERE source = 'mail'" 2)" 2 "v2 is submitted"
s2=$(sql "SELECT max(id) FROM submissions WHERE source = 'mail'")
reply "$T"/v2/v2-0002-* rev2 'Rëv One <rev1@example.org>' 'Reviewed-by: Rëv One <rev1@example.org>'
maildir_deliver "$T/Maildir" "$T/rev2.eml"
is "$(wait_for "SELECT count(*) FROM mail_trailers" 7)" 7 "a trailer for v2"
api GET "/api/v1/submissions/$s2"
is "$(jq -r '[.previous_id, (.versions | map("v\(.version)=#\(.id)") | join(","))] | join(" ")' <<<"$BODY")" \
  "$s1 v2=#$s2,v1=#$s1" "the API lists both versions of the series, newest first"
is "$(jq -r '.versions[0].patches | map("\(.seq):\(.trailers)") | join(",")' <<<"$BODY")" "0:0,1:1,2:1" \
  "with the trailers each patch of each version got, the one read before the series too"
is "$(jq -r '.trailers[] | select(.seq == 1) | "\(.kind): \(.who)"' <<<"$BODY")" "Acked-by: Early Bird <early@example.org>" \
  "v2's patch 1 shows the review read before it"

# trailers whose mail never came are dropped after trailer_days (at start, then hourly)
kill "$SERVER_PID" && wait "$SERVER_PID" 2>/dev/null
sql "UPDATE mail_trailers SET received = now() - interval '31 days'" >/dev/null
server_start --allow-local-trees --mail-config "$T/mail.json" || { echo "Bail out! no second server"; exit 1; }
is "$(wait_for "SELECT count(*) FROM mail_trailers" 6)" 6 "an old trailer for a mail locklab never had is dropped"
is "$(sql "SELECT count(*) FROM mail_trailers WHERE reply_id = '<far@example.org>'")" 0 "that one"
like "$(cat "$SERVER_LOG")" 'mail trailers: dropped 1 trailer\(s\) older than 30 days' "and the log says so"

# the dashboard, in a real browser
browser_run "the submission page shows the versions side by side and the trailers" \
  mail.mjs "$URL" "$s1" "$s2"

# a series of 32 versions: v2's page shows the newest 20 and v2 and loads the
# rest on request; versions that come while it is open leave no gap
# (versions.mjs adds them with this SQL, psql variables :from and :to)
add_versions="INSERT INTO submissions (state, source, suites, subject, version, mail_series, reason)
  SELECT 'failed', 'mbox', '{smoke}', '[PATCH v' || g || '] locking: handoff and pickup', g, mail_series,
  'test: a version made in SQL' FROM submissions, generate_series(:from, :to) g WHERE id = $s2"
psql -X -q -v ON_ERROR_STOP=1 -v from=3 -v to=32 <<<"$add_versions"
is "$(sql "SELECT state FROM submissions WHERE id = $s2")" queued "v2 is still queued: its page follows it"
api GET "/api/v1/submissions/$s2"
is "$(jq -r '[(.versions | length), .versions_total, .versions[20].version, .versions[20].current] | join(" ")' <<<"$BODY")" \
  "21 32 2 true" "the API embeds the newest 20 of 32 versions and v2, this one"
browser_run "the page of v2 shows 21 of 32 versions and loads the older ones, without a gap when new ones come" \
  versions.mjs "$URL" "$s2" 32 "$add_versions"
mail_doc=$(tr '\n' ' ' <"$TOP/docs/mail.md")
like "$mail_doc" 'the newest 20 and the page.s own version when it is older than those, and a button loads the older ones' \
  "docs/mail.md says what the page of a version shows"
unlike "$mail_doc" 'shows every version side by side' "and no longer that it shows every version"
done_testing
