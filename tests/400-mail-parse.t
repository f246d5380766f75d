#!/usr/bin/env bash
# Mail as the lists send it: base64 bodies, patches attached,
# Latin-1 text, threads holding strays, a lore /raw URL, long series, v2
# after v1.  Each is submitted to a real server; what is stored is checked,
# and the messages a job hands the agent are applied with git am as the
# agent does (--patch-format=mbox), so "accepted" and "applies" agree.
source "$(dirname "$0")/lib/tap.sh"
source "$TOP/tests/lib/pg.sh"
source "$TOP/tests/lib/server.sh"

mkdir -p "$T/www"
file_server "$T/www" || bail_out "no file server"
server_setup --fetch-allow "127.0.0.1:$FILES_PORT"
register_agent
A=$AGENT_TOKEN
repo=$T/s/repo

# submit_url PATH: submit $FILES_URL/PATH; sets CODE, BODY, SUB
submit_url() {
  api POST /api/v1/submissions -d "{\"url\": \"$FILES_URL/$1\"}"
  SUB=$(jq -r .id <<<"$BODY")
}
# claim_mails: claim the job just queued and write its mails to $T/mails/N.eml
claim_mails() {
  claim "$A"
  rm -rf "$T/mails" && mkdir -p "$T/mails"
  jq -r '.job.mails[]' <<<"$BODY" | python3 -c '
import base64, sys
for i, line in enumerate(sys.stdin):
    open("%s/%d.eml" % (sys.argv[1], i + 1), "wb").write(base64.b64decode(line))
' "$T/mails"
}
# am_mails BASE: git am the claimed mails, in order, on a fresh checkout of
# BASE in $repo, as the agent does
am_mails() {
  local base=$1 w=$T/am f
  rm -rf "$w" && git clone -q "$repo" "$w" && git -C "$w" checkout -q "$base" || return 1
  for f in $(ls "$T/mails" | sort -n); do
    git -C "$w" -c user.name=t -c user.email=t@t am -q -3 --patch-format=mbox "$T/mails/$f" || return 1
  done
}

# one commit's patch, re-sent in a MIME form by python's email package
base=$(git -C "$repo" rev-parse HEAD~1)
python3 - "$T/s/single.patch" "$T/www" <<'PY'
import email, sys
from email import policy
from email.message import EmailMessage
src = email.message_from_bytes(open(sys.argv[1], "rb").read(), policy=policy.default)
text = src.get_content()
msg_part, patch = text.split("\n---\n", 1)
def head(mid):
    m = EmailMessage()
    for h in ("From", "Date", "Subject"):
        m[h] = src[h]
    m["Message-ID"] = "<%s@example.org>" % mid
    return m
# the whole body in base64, a non-ASCII commit message
m = head("b64")
m.set_content(msg_part + "\n\nR\u00e9veille le waiter \u2014 pickup.\n---\n" + patch, cte="base64")
open(sys.argv[2] + "/b64.eml", "wb").write(bytes(m))
# Latin-1, 8bit, declared
m = head("latin1")
m.set_content(msg_part + "\n\nR\u00e9veille le waiter.\n---\n" + patch, charset="iso-8859-1",
              cte="8bit")
open(sys.argv[2] + "/latin1.eml", "wb").write(bytes(m))
# the patch as an attachment, 7bit and base64
for cte in ("7bit", "base64"):
    m = head("att-" + cte)
    m.set_content(msg_part + "\n")
    m.add_attachment(("---\n" + patch).encode(), maintype="text", subtype="x-patch",
                     filename="0001-pickup.patch", cte=cte)
    open(sys.argv[2] + "/att-%s.eml" % cte, "wb").write(bytes(m))
PY
grep -q $'\xe9' "$T/www/latin1.eml"
ok $? "the Latin-1 test mail holds a Latin-1 byte"

submit_url b64.eml
is "$CODE" 202 "a base64 patch mail is accepted"
is "$(sql "SELECT body FROM patches WHERE submission_id = $SUB")" \
  "From the waiter side.

Réveille le waiter — pickup." "its commit message is decoded"
like "$(sql "SELECT diff FROM patches WHERE submission_id = $SUB")" '^\+int pickup;$' "its diff is decoded"
claim_mails
cmp -s "$T/mails/1.eml" "$T/www/b64.eml"
ok $? "the job hands the agent the message byte for byte"
am_mails "$base"
ok $? "git am applies it"
like "$(git -C "$T/am" log -1 --format=%B)" 'Réveille le waiter — pickup' "the commit git am made has the decoded message"

submit_url latin1.eml
is "$CODE" 202 "a Latin-1 patch mail is accepted (not a 503)"
like "$(sql "SELECT body FROM patches WHERE submission_id = $SUB")" 'Réveille le waiter\.$' "its body is stored as UTF-8"
claim_mails
am_mails "$base"
ok $? "git am applies the Latin-1 mail"
like "$(git -C "$T/am" log -1 --format=%B)" 'Réveille' "and re-encodes its message to UTF-8"

for cte in 7bit base64; do
  submit_url "att-$cte.eml"
  is "$CODE" 202 "a patch attached ($cte) is accepted"
  is "$(sql "SELECT body FROM patches WHERE submission_id = $SUB")" \
    "From the waiter side." "no MIME header in the commit message ($cte)"
  unlike "$(sql "SELECT diff FROM patches WHERE submission_id = $SUB")" '^--=|^Content-' "no boundary in the diff ($cte)"
  claim_mails
  am_mails "$base"
  ok $? "git am applies the attached patch ($cte)"
done

# a threaded series X and an unthreaded stray U, interleaved
python3 - "$T/www/mixed.mbox" <<'PY'
import sys
diff = "diff --git a/u.c b/u.c\n--- a/u.c\n+++ b/u.c\n@@ -1 +1 @@\n-a\n+b\n"
def mail(tag, k, root=None):
    h = ("From x@y Mon Sep 17 00:00:00 2001\nFrom: %s <%s@example.org>\n"
         "Subject: [PATCH %d/2] %s part %d\nMessage-ID: <%s%d@example.org>\n"
         % (tag, tag, k, tag, k, tag, k))
    if root:
        h += "In-Reply-To: %s\nReferences: %s\n" % (root, root)
    return h + "\n" + ("cover\n" if k == 0 else "part\n---\n" + diff) + "\n"
x0 = "<X0@example.org>"
open(sys.argv[1], "w").write(mail("U", 1) + mail("X", 0) + mail("X", 1, x0) + mail("U", 2)
                             + mail("X", 2, x0))
PY
submit_url mixed.mbox
is "$CODE" 202 "a threaded series beside a stray is accepted"
is "$(sql "SELECT string_agg(seq || ':' || message_id, ' ' ORDER BY seq) FROM patches WHERE submission_id = $SUB")" \
  "0:<X0@example.org> 1:<X1@example.org> 2:<X2@example.org>" "it is stored as X with X's own patches"
claim "$A"

# a lore /raw URL of one message: its thread (t.mbox.gz next to it) is taken
p1=$(ls "$T"/s/out/v2-0001-*.patch)
id=$(grep -i '^Message-ID:' "$p1" | sed 's/^Message-ID: <//I; s/>$//')
mkdir -p "$T/www/lkml/$id"
cp "$p1" "$T/www/lkml/$id/raw"
gzip -c "$T/s/series.mbox" >"$T/www/lkml/$id/t.mbox.gz"
submit_url "lkml/$id/raw"
is "$CODE" 202 "a lore /raw URL of patch 1/2 is accepted"
is "$(jq -r .patches <<<"$BODY")" 2 "the whole series came from its thread"
is "$(sql "SELECT count(*) FROM patches WHERE submission_id = $SUB AND is_cover")" 1 "with its cover letter"
claim "$A"
mkdir -p "$T/www/lkml2/$id"
cp "$p1" "$T/www/lkml2/$id/raw"
submit_url "lkml2/$id/raw"
is "$CODE" 422 "a /raw URL of a part of a series whose thread cannot be had is refused"
like "$(jq -r .detail <<<"$BODY")" 'its thread .*/lkml2/.*/t.mbox.gz could not be taken.*patch 2/2 is missing' \
  "the reason says the thread was tried and what is missing"

# 70 patches: none cut off, applied in order
(
  cd "$T" && git init -q long && cd long && git config user.email l@example.org &&
    git config user.name L && echo 0 >n && git add n && git commit -qm start &&
    for i in $(seq 1 70); do echo "$i" >>n && git commit -qam "n: step $i"; done &&
    git format-patch -q --cover-letter --thread -o ../long-out HEAD~70
) || diag "making the long series failed"
cat "$T"/long-out/*.patch >"$T/www/long.mbox"
submit_url long.mbox
is "$CODE" 202 "a series of 70 patches is accepted"
is "$(jq -r .patches <<<"$BODY")" 70 "all 70 are stored"
claim_mails
is "$(ls "$T/mails" | wc -l)" 70 "the job hands the agent all 70 messages"
repo=$T/long am_mails "$(git -C "$T/long" rev-parse HEAD~70)"
ok $? "git am applies all 70 in order"
is "$(git -C "$T/am" rev-parse 'HEAD^{tree}')" "$(git -C "$T/long" rev-parse 'HEAD^{tree}')" \
  "the result is the author's tree"

# what a reply needs, and v2 linked to v1
(
  cd "$repo" && git format-patch -q --cover-letter --thread --to=locking@vger.example.org \
    --cc='Peter Zijlstra <peterz@example.org>' -o ../v1 HEAD~2 &&
    git format-patch -q --cover-letter --thread -v2 --to=locking@vger.example.org \
      --in-reply-to="$(grep -i '^Message-ID:' ../v1/0000-* | sed 's/^Message-ID: //I')" -o ../v2 HEAD~2
) || diag "making v1 and v2 failed"
cat "$T"/s/v1/*.patch >"$T/www/v1.mbox"
cat "$T"/s/v2/*.patch >"$T/www/v2.mbox"
submit_url v1.mbox
v1=$SUB
is "$(sql "SELECT mail_list || ' | ' || mail_cc FROM submissions WHERE id = $v1")" \
  "locking@vger.example.org | Peter Zijlstra <peterz@example.org>" "the list and the Cc are kept for the reply"
submit_url v2.mbox
v2=$SUB
is "$(sql "SELECT version || ' ' || previous_id FROM submissions WHERE id = $v2")" "2 $v1" \
  "v2 names v1 as its previous version"
is "$(sql "SELECT mail_references FROM submissions WHERE id = $v2")" \
  "$(grep -i '^Message-ID:' "$T"/s/v1/0000-* | sed 's/^Message-ID: //I')" "the cover's References are kept"
is "$(sql "SELECT count(*) FROM patches WHERE raw IS NULL")" 0 "every stored mail keeps its message"
done_testing
