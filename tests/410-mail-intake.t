#!/usr/bin/env bash
# The mail intake: series made by git format-patch --cover-letter
# --thread, delivered into a Maildir and into a real IMAP server (Debian's
# dovecot, started here unprivileged on loopback), are submitted once, in
# order, on the tree their list maps to; delivered again, nothing new; v2
# links to v1; a series missing a part is given up saying which; replies
# are left alone; malformed mail is skipped and counted in /metrics; IMAP
# over imaps:// and STARTTLS checks a certificate made here.
source "$(dirname "$0")/lib/tap.sh"
source "$TOP/tests/lib/pg.sh"
source "$TOP/tests/lib/server.sh"
source "$TOP/tests/lib/intake.sh"

pg_start || { echo "Bail out! no postgres"; exit 1; }
have_imap=1
dovecot_start tls && imap_create Secure Starttls || have_imap=0

# series from one repo: v1 and v2 to the locking list, a net-next one, one
# for IMAP; format-patch's Message-IDs carry the second they were made in,
# so each is made in a second of its own
git init -q "$T/repo" && cd "$T/repo" && git config user.email dev@example.org &&
  git config user.name 'Dev Eloper' && printf 'int owner;\n' >m.c && git add m.c && git commit -qm start &&
  printf 'int handoff;\n' >>m.c && git commit -qam 'locking: add handoff' -m 'Hand off.' &&
  printf 'int pickup;\n' >>m.c && git commit -qam 'locking: add pickup' -m 'Pick up.' &&
  git format-patch -q --cover-letter --thread --to=locking@vger.example.org -o "$T/v1" HEAD~2 && sleep 1 &&
  git format-patch -q --cover-letter --thread -v2 --to=locking@vger.example.org -o "$T/v2" HEAD~2 && sleep 1 &&
  git format-patch -q --cover-letter --thread --subject-prefix='PATCH net-next' --to=netdev@example.org \
    -o "$T/net" HEAD~2 && sleep 1 &&
  git format-patch -q --cover-letter --thread --subject-prefix='PATCH imap' --to=locking@vger.example.org \
    -o "$T/imap" HEAD~2 && sleep 1 &&
  git format-patch -q --cover-letter --thread --subject-prefix='PATCH imaps' --to=locking@vger.example.org \
    -o "$T/imaps" HEAD~2 && sleep 1 &&
  git format-patch -q --cover-letter --thread --subject-prefix='PATCH starttls' --to=locking@vger.example.org \
    -o "$T/starttls" HEAD~2 &&
  cd "$TOP" || { echo "Bail out! git format-patch failed"; exit 1; }

# IMAP sources: plain, imaps:// and STARTTLS (both checking dovecot's
# certificate against the one made for it), each its own mailbox
imap_src() { echo ", {\"name\": \"$1\", \"url\": \"$2\", \"user\": \"t\", \"password\": \"secret\"${3:-}}"; }
imap_sources=
[[ $have_imap == 1 ]] && imap_sources="$(imap_src imap "$IMAP_URL")
  $(imap_src imaps "${IMAPS_BASE}Secure" ", \"ca_file\": \"$DOVECOT_CA\"")
  $(imap_src starttls "${IMAP_URL%/*}/Starttls" ", \"starttls\": true, \"ca_file\": \"$DOVECOT_CA\"")"
cat >"$T/mail.json" <<EOF
{"sources": [{"name": "lists", "maildir": "$T/Maildir"} $imap_sources],
 "trees": [{"list": "locking@vger.example.org", "tree": "locking"}, {"prefix": "net-next", "tree": "net"}],
 "default_tree": "other", "suites": ["quick"], "poll_seconds": 0.2, "wait_seconds": 5, "max_bytes": 200000,
 "max_per_sender": 50}
EOF
mkdir -p "$T/Maildir/new" "$T/Maildir/cur" "$T/Maildir/tmp"
server_start --allow-local-trees --mail-config "$T/mail.json" || { echo "Bail out! no server"; exit 1; }
for t in locking net other; do
  api POST /api/v1/trees -H "Authorization: Bearer $ADMIN_TOKEN" -d "{\"name\": \"$t\", \"url\": \"/nonexistent/$t\"}"
done

subjects() { sql "SELECT string_agg(seq || ':' || subject, '|' ORDER BY seq) FROM patches WHERE submission_id = $1"; }

# 1. a series into the Maildir, patches before the cover letter
maildir_deliver "$T/Maildir" "$T"/v1/0002-* "$T"/v1/0001-* "$T"/v1/0000-*
is "$(wait_for "SELECT count(*) FROM submissions WHERE source = 'mail'" 1)" 1 "the Maildir series is submitted once"
s1=$(sql "SELECT id FROM submissions WHERE source = 'mail'")
is "$(subjects "$s1")" \
  "0:[PATCH 0/2] *** SUBJECT HERE ***|1:[PATCH 1/2] locking: add handoff|2:[PATCH 2/2] locking: add pickup" \
  "cover letter and patches in series order"
is "$(sql "SELECT t.name FROM submissions s JOIN trees t ON t.id = s.tree_id WHERE s.id = $s1")" locking \
  "on the tree its list address maps to"
is "$(wait_for "SELECT count(*) FROM mail_messages WHERE state = 'submitted'" 3)" 3 "its three mails are marked submitted"
is "$(ls "$T/Maildir/new" | wc -l) $(ls "$T/Maildir/cur" | grep -c ':2,S$')" "0 3" "the mails moved from new/ to cur/, seen"

# 2. the same mails delivered again: nothing new
maildir_deliver "$T/Maildir" "$T"/v1/*.patch
for ((i = 0; i < 150; i++)); do [[ -z $(ls "$T/Maildir/new") ]] && break; sleep 0.2; done
is "$(ls "$T/Maildir/new" | wc -l) $(sql "SELECT count(*) FROM mail_messages")" "0 3" "delivered again, they are read"
for ((i = 0; i < 150; i++)); do [[ $(metric 'locklab_mail_messages_total{result="duplicate"}') == 3 ]] && break; sleep 0.2; done
is "$(metric 'locklab_mail_messages_total{result="duplicate"}')" 3 "and counted as duplicates"
is "$(sql "SELECT count(*) FROM submissions WHERE source = 'mail'")" 1 "no new submission"

# 3. v2 is a new submission linked to v1
maildir_deliver "$T/Maildir" "$T"/v2/*.patch
is "$(wait_for "SELECT count(*) FROM submissions WHERE source = 'mail'" 2)" 2 "v2 is submitted"
is "$(sql "SELECT version || ' ' || previous_id FROM submissions WHERE source = 'mail' AND id <> $s1")" "2 $s1" \
  "as version 2 of the first submission"

# 4. the subject prefix maps to a tree; a reply and other mail are left alone; malformed is skipped
printf 'From: R <r@example.org>\nSubject: Re: [PATCH 1/2] locking: add handoff\nMessage-ID: <re1@example.org>\n\nLooks good.\n' >"$T/reply.eml"
printf 'From: R <r@example.org>\nSubject: lunch?\nMessage-ID: <lunch@example.org>\n\nPizza.\n' >"$T/other.eml"
sed '/^Message-I[Dd]:/d' "$T"/net/0001-* >"$T/noid.eml"
{ sed 's/^Message-I[Dd]: <\(.*\)>/Message-ID: <big-\1>/' "$T"/net/0001-*; head -c 300000 /dev/zero | tr '\0' 'x' | fold -w 70; } >"$T/big.eml"
sed '/^diff --git/,$d' "$T"/net/0002-* | sed 's/^Message-I[Dd]: <\(.*\)>/Message-ID: <nodiff-\1>/' >"$T/nodiff.eml"
maildir_deliver "$T/Maildir" "$T"/net/*.patch "$T/reply.eml" "$T/other.eml" "$T/noid.eml" "$T/nodiff.eml" "$T/big.eml"
is "$(wait_for "SELECT count(*) FROM submissions WHERE source = 'mail'" 3)" 3 "the net-next series is submitted"
is "$(sql "SELECT t.name FROM submissions s JOIN trees t ON t.id = s.tree_id WHERE s.source = 'mail' ORDER BY s.id DESC LIMIT 1")" \
  net "on the tree its subject prefix maps to"
for ((i = 0; i < 150; i++)); do [[ $(metric 'locklab_mail_messages_total{result="malformed"}') == 3 ]] && break; sleep 0.2; done
is "$(metric 'locklab_mail_messages_total{result="malformed"}')" 3 "three malformed mails are counted in /metrics"
is "$(metric 'locklab_mail_messages_total{result="ignored"}')" 2 "the reply and the other mail are ignored"
like "$(cat "$SERVER_LOG")" 'skipped .*: no Message-ID' "the mail without a Message-ID is logged with the reason"
like "$(cat "$SERVER_LOG")" 'skipped .*nodiff-.*: a patch without a diff' "the patch without a diff too"
like "$(cat "$SERVER_LOG")" 'skipped .*: [0-9]+ bytes, more than the 200000 allowed' "and the mail too big"

# 5. a part missing: given up after wait_seconds, saying which
sed 's/net-next/PATCH net-next/; s/^Message-I[Dd]: <\(.*\)>/Message-ID: <lost-\1>/I; s/^\(In-Reply-To\|References\): <\(.*\)>/\1: <lost-\2>/I' \
  "$T"/net/0000-* >"$T/lost0.eml"
sed 's/^Message-I[Dd]: <\(.*\)>/Message-ID: <lost-\1>/I; s/^\(In-Reply-To\|References\): <\(.*\)>/\1: <lost-\2>/I' \
  "$T"/net/0001-* >"$T/lost1.eml"
maildir_deliver "$T/Maildir" "$T/lost0.eml" "$T/lost1.eml"
is "$(wait_for "SELECT DISTINCT state || ': ' || reason FROM mail_messages WHERE message_id LIKE '<lost-%'" \
  'given-up: parts 2/2 missing')" 'given-up: parts 2/2 missing' "an incomplete series is given up, naming the missing part"
is "$(metric 'locklab_mail_series_total{result="given-up"}')" 1 "and counted"
is "$(sql "SELECT count(*) FROM submissions WHERE source = 'mail'")" 3 "nothing is submitted for it"

# 6. a mail bomb of 10,000 messages (not patches) stops nothing
ignored=$(metric 'locklab_mail_messages_total{result="ignored"}')
python3 - "$T/Maildir" <<'PY'
import os, sys
d = sys.argv[1]
for i in range(10000):
    n = "%d.bomb%05d.locklab-test" % (1700000000, i)
    with open("%s/tmp/%s" % (d, n), "w") as f:
        f.write("From: b <b@example.org>\nSubject: win %d\nMessage-ID: <bomb%d@example.org>\n\nx\n" % (i, i))
    os.rename("%s/tmp/%s" % (d, n), "%s/new/%s" % (d, n))
PY
git -C "$T/repo" format-patch -q -1 --thread --subject-prefix='PATCH after-bomb' --to=locking@vger.example.org \
  -o "$T/after" HEAD
maildir_deliver "$T/Maildir" "$T"/after/*.patch
is "$(wait_for "SELECT count(*) FROM submissions WHERE subject LIKE '[PATCH after-bomb]%'" 1)" 1 \
  "a patch delivered after 10,000 other mails is submitted"
is "$(($(metric 'locklab_mail_messages_total{result="ignored"}') - ignored))" 10000 "the 10,000 are read and left alone"

# 6b. broken encodings and a 50 MB attachment: each skipped or repaired, nothing stops
malformed=$(metric 'locklab_mail_messages_total{result="malformed"}')
printf 'From: B <b@example.org>\nSubject: [PATCH broken] locking: garbled\nMessage-ID: <broken@example.org>\nMIME-Version: 1.0\nContent-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: base64\n\n~~ not base64 at all! ~~\ndiff --git a/m.c b/m.c\n' >"$T/broken.eml"
# its own Message-ID: format-patch of the same commit within the same second
# (as after-bomb above) gives the same one, and a seen Message-ID is not taken again
git -C "$T/repo" format-patch -q -1 --thread --subject-prefix='PATCH badbytes' -o "$T/badbytes" HEAD &&
  sed -i 's/^Message-I[dD]: </Message-ID: <badbytes-/; s/^Subject: \(.*\)$/Subject: \1 =?utf-8?B?@@not-base64@@?=/; s/^Pick up\.$/Pick up \xff\xfe bytes./' "$T"/badbytes/*.patch &&
  sed -i '/^Subject:/a MIME-Version: 1.0\nContent-Type: text/plain; charset=UTF-8\nContent-Transfer-Encoding: 8bit' \
    "$T"/badbytes/*.patch
python3 - "$T/huge.eml" <<'PY'
import base64, os, sys
with open(sys.argv[1], "w") as f:
    f.write("From: H <h@example.org>\nSubject: [PATCH huge] locking: a 50 MB attachment\n"
            "Message-ID: <huge@example.org>\nMIME-Version: 1.0\n"
            "Content-Type: multipart/mixed; boundary=b\n\n--b\nContent-Type: text/plain\n\n"
            "diff --git a/m.c b/m.c\n--b\nContent-Type: application/octet-stream\n"
            "Content-Transfer-Encoding: base64\n\n")
    chunk = base64.encodebytes(os.urandom(57 * 1000)).decode()
    for _ in range(50 * 1024 * 1024 // len(chunk) + 1):
        f.write(chunk)
    f.write("--b--\n")
PY
maildir_deliver "$T/Maildir" "$T/broken.eml" "$T"/badbytes/*.patch "$T/huge.eml"
is "$(wait_for "SELECT count(*) FROM submissions WHERE subject LIKE '[PATCH badbytes]%'" 1)" 1 \
  "a patch with bytes that are not UTF-8 and a broken encoded-word is submitted, repaired"
like "$(sql "SELECT body FROM patches p JOIN submissions s ON s.id = p.submission_id WHERE s.subject LIKE '[PATCH badbytes]%'")" \
  $'Pick up \xef\xbf\xbd\xef\xbf\xbd bytes' "its bytes that are not UTF-8 (declared UTF-8) stored as U+FFFD"
for ((i = 0; i < 150; i++)); do
  [[ $(metric 'locklab_mail_messages_total{result="malformed"}') == $((malformed + 2)) ]] && break
  sleep 0.2
done
is "$(($(metric 'locklab_mail_messages_total{result="malformed"}') - malformed))" 2 \
  "the broken base64 patch and the 50 MB mail are counted as malformed"
like "$(cat "$SERVER_LOG")" 'skipped .* <broken@example.org>: a patch without a diff \(a text part.s base64 holds bytes that are not base64\)' \
  "the broken base64 is logged with the reason"
like "$(cat "$SERVER_LOG")" 'skipped .*: 5[0-9]{7} bytes, more than the 200000 allowed' "the 50 MB mail too, not read"
is "$(ls "$T/Maildir/new" | wc -l)" 0 "and every mail is moved out of new/"
rm -f "$T/huge.eml" "$T"/Maildir/cur/*

# 6c. a mail bomb of 10,000 patch mails from one sender: past max_per_sender an hour they are skipped
python3 - "$T/Maildir" <<'PY'
import os, sys
d = sys.argv[1]
for i in range(10000):
    n = "%d.pbomb%05d.locklab-test" % (1700000001, i)
    with open("%s/tmp/%s" % (d, n), "w") as f:
        f.write("From: Bomb Er <Bomber@example.org>\nSubject: [PATCH 1/2] bomb %d\n"
                "Message-ID: <pbomb%d@example.org>\n\nx\n---\ndiff --git a/x b/x\n--- a/x\n+++ b/x\n"
                "@@ -1 +1 @@\n-a\n+b\n" % (i, i))
    os.rename("%s/tmp/%s" % (d, n), "%s/new/%s" % (d, n))
PY
for ((i = 0; i < 300; i++)); do [[ $(metric 'locklab_mail_messages_total{result="flood"}') == 9950 ]] && break; sleep 0.2; done
is "$(metric 'locklab_mail_messages_total{result="flood"}')" 9950 "/metrics counts the 9,950 patch mails past the sender's 50 an hour"
is "$(sql "SELECT count(*) FROM mail_messages WHERE message_id LIKE '<pbomb%'")" 50 "only 50 are kept"
like "$(cat "$SERVER_LOG")" 'mail lists: skipped [^ ]+ <pbomb50@example.org>: a mail bomb, more than 50 patch mails from bomber@example\.org this hour \(0 skipped before\)' \
  "the first one skipped is logged with the reason"
is "$(grep -c 'a mail bomb, more than 50' "$SERVER_LOG")" 10 "and every 1000th after it, not each"
rm -f "$T"/Maildir/cur/*

# 7. IMAP: a real dovecot, UIDVALIDITY and UID remembered across restarts
if [[ $have_imap == 1 ]]; then
  imap_append "$T"/imap/0000-* "$T"/imap/0001-* "$T"/imap/0002-*
  is "$(wait_for "SELECT count(*) FROM submissions WHERE source = 'mail'" 6)" 6 "the IMAP series is submitted"
  s4=$(sql "SELECT max(id) FROM submissions WHERE source = 'mail'")
  is "$(subjects "$s4")" \
    "0:[PATCH imap 0/2] *** SUBJECT HERE ***|1:[PATCH imap 1/2] locking: add handoff|2:[PATCH imap 2/2] locking: add pickup" \
    "in order"
  is "$(sql "SELECT DISTINCT source FROM mail_messages WHERE submission_id = $s4")" imap "from the IMAP source"
  is "$(sql "SELECT uid FROM mail_seen WHERE source = 'imap'")" 3 "the last UID taken is stored"
  # 8. over TLS: imaps:// and STARTTLS on imap://, dovecot's certificate checked
  IMAP_TO="${IMAP_URL%/*}/Secure" imap_append "$T"/imaps/*.patch
  IMAP_TO="${IMAP_URL%/*}/Starttls" imap_append "$T"/starttls/*.patch
  is "$(wait_for "SELECT count(*) FROM submissions WHERE source = 'mail'" 8)" 8 \
    "the series read over imaps:// and over STARTTLS are submitted"
  is "$(sql "SELECT string_agg(DISTINCT m.source || ': ' || s.subject, ' | ') FROM mail_messages m
             JOIN submissions s ON s.id = m.submission_id WHERE m.source IN ('imaps', 'starttls')")" \
    "imaps: [PATCH imaps 0/2] *** SUBJECT HERE *** | starttls: [PATCH starttls 0/2] *** SUBJECT HERE ***" \
    "each from its own source"
  is "$(sql "SELECT string_agg(source || '=' || uid, ' ' ORDER BY source) FROM mail_seen")" "imap=3 imaps=3 starttls=3" \
    "and their last UIDs are stored"
  like "$(cat "$T/dovecot/dovecot.log")" 'imap-login: .*Login: user=<t>, .*, TLS,' "dovecot logged logins over TLS"
  # a mail too big in IMAP: its fetch stops at max_bytes, it is skipped and its UID passed
  imap_append "$T/big.eml"
  is "$(wait_for "SELECT uid FROM mail_seen WHERE source = 'imap'" 4)" 4 "a mail too big in IMAP is passed"
  like "$(cat "$SERVER_LOG")" 'mail imap: skipped UID 4: more than the 200000 bytes allowed' "and logged with the reason"
  kill "$SERVER_PID" && wait "$SERVER_PID" 2>/dev/null
  server_start --allow-local-trees --mail-config "$T/mail.json" || { echo "Bail out! no second server"; exit 1; }
  imap_append "$T"/imap/0001-*
  is "$(wait_for "SELECT uid FROM mail_seen WHERE source = 'imap'" 5)" 5 "after a restart only the new UID is read"
  for ((i = 0; i < 150; i++)); do [[ $(metric 'locklab_mail_messages_total{result="duplicate"}') == 1 ]] && break; sleep 0.2; done
  is "$(metric 'locklab_mail_messages_total{result="duplicate"}')" 1 "the mail delivered again is one duplicate"
  is "$(metric 'locklab_mail_messages_total{result="taken"}')" 0 "the three read before are not read again"
  is "$(sql "SELECT count(*) FROM submissions WHERE source = 'mail'")" 8 "and nothing new is submitted"
  # 9. a certificate nobody vouches for, and a mailbox whose UIDVALIDITY changed
  kill "$SERVER_PID" && wait "$SERVER_PID" 2>/dev/null
  real=$(sql "SELECT uidvalidity FROM mail_seen WHERE source = 'starttls'")
  sql "UPDATE mail_seen SET uidvalidity = uidvalidity + 1 WHERE source = 'starttls'" >/dev/null
  printf '{"sources": [%s %s], "default_tree": "other", "poll_seconds": 0.2, "wait_seconds": 5}\n' \
    "$(imap_src untrusted "${IMAPS_BASE}Secure" | cut -c2-)" \
    "$(imap_src starttls "${IMAP_URL%/*}/Starttls" ", \"starttls\": true, \"ca_file\": \"$DOVECOT_CA\"")" >"$T/mail3.json"
  server_start --allow-local-trees --mail-config "$T/mail3.json" || { echo "Bail out! no third server"; exit 1; }
  for ((i = 0; i < 150; i++)); do [[ $(metric 'locklab_mail_messages_total{result="duplicate"}') == 3 ]] && break; sleep 0.2; done
  is "$(metric 'locklab_mail_messages_total{result="duplicate"}')" 3 \
    "a new UIDVALIDITY reads the mailbox again from UID 1: its three mails are duplicates"
  like "$(cat "$SERVER_LOG")" "mail starttls: UIDVALIDITY changed \\($real, was $((real + 1))\\)" "and the log says why"
  is "$(sql "SELECT uidvalidity || ' ' || uid FROM mail_seen WHERE source = 'starttls'")" "$real 3" \
    "the mailbox's UIDVALIDITY is stored again"
  like "$(cat "$SERVER_LOG")" 'mail untrusted: STATUS Secure failed: .*([Cc]ertificate|SSL)' \
    "a server certificate that does not verify is refused, and logged"
  ok $(($(metric locklab_mail_source_errors_total) > 0 ? 0 : 1)) "and counted as a source error"
  is "$(sql "SELECT count(*) FROM mail_seen WHERE source = 'untrusted'")" 0 "nothing is read from it"
  is "$(sql "SELECT count(*) FROM submissions WHERE source = 'mail'")" 8 "nothing new is submitted"
else
  echo "ok $((_tap_n + 1)) - # SKIP IMAP: dovecot (dovecot-imapd) is not installed or did not start"
  _tap_n=$((_tap_n + 1))
fi
done_testing
