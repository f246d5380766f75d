#!/usr/bin/env bash
# Replies go out by SMTP: a real SMTP server (Debian's python3-aiosmtpd) on
# loopback receives them, and Python's email package (policy=default) reads
# them as a mail client would: threading, decodable headers, the finding
# first, the table within 100 columns, Tested-by only when earned.  With the
# SMTP server down a reply waits in the outbox and goes out once when it is
# back; a sender that died mid-delivery never sends again by itself.
source "$(dirname "$0")/lib/tap.sh"
source "$TOP/tests/lib/pg.sh"
source "$TOP/tests/lib/server.sh"

source "$TOP/tests/lib/mail.sh"

pg_start || { echo "Bail out! no postgres"; exit 1; }
MAILS=$T/mails
SMTP_PORT=$(free_port)
sink_start "$MAILS" "$SMTP_PORT" || { echo "Bail out! no SMTP server"; exit 1; }
server_start --min-rounds 2 --max-rounds 4 --smtp-url "smtp://127.0.0.1:$SMTP_PORT" \
  --mail-from 'locklab robot <robot@lab.example.org>' --tested-by 'Løcklab Lab <tested@lab.example.org>' \
  --public-url http://dash.example.org --mail-retry-seconds 1 --mail-poll-ms 100 \
  || { echo "Bail out! no server"; exit 1; }
register_agent

# A v2 series whose cover letter answers v1's thread, with a long non-ASCII
# subject (folded encoded-words, as mail clients write it) and a reviewer.
make_series "$T/s" || { echo "Bail out! git format-patch failed"; exit 1; }
(
  cd "$T/s/repo" && git commit -q --amend -m 'locking/mutex: add pickup' -m 'From the waiter side.' \
    -m 'Reviewed-by: Peter Zijlsträ <peterz@infradead.org>' &&
    rm -rf ../out && git format-patch -q --cover-letter --thread --in-reply-to='<v1-cover@example.org>' \
      --to='LKML <linux-kernel@vger.kernel.org>' --cc='Ingo Mølnar <mingo@kernel.org>' \
      --cc=robot@lab.example.org -v2 -o ../out HEAD~2
) || { echo "Bail out! git format-patch failed"; exit 1; }
SUBJECT='[PATCH v2 0/2] locking/mutex: hand the lock to the top waiter — sœur «pickup» for früh wakers, and a much longer tail'
python3 - "$T/s/out" "$SUBJECT" <<'PY'
import glob, sys
from email.header import Header
cover = glob.glob(sys.argv[1] + "/v2-0000-*.patch")[0]
text = open(cover, encoding="utf-8").read()
enc = Header(sys.argv[2], "utf-8", header_name="Subject").encode()
text = text.replace("Subject: [PATCH v2 0/2] *** SUBJECT HERE ***", "Subject: " + enc, 1)
open(cover, "w", encoding="utf-8").write(text)
PY
cat "$T"/s/out/*.patch >"$T/series.mbox"
cover_id=$(grep -hi '^Message-ID:' "$T"/s/out/v2-0000-*.patch | sed 's/^Message-ID: //I')

submit_mbox "$T/series.mbox"
s1=$SUB
is "$(sql "SELECT subject FROM patches WHERE submission_id = $s1 AND seq = 0")" "$SUBJECT" \
  "the cover letter's folded encoded subject is stored decoded"
is "$(sql "SELECT mail_references FROM patches WHERE submission_id = $s1 AND seq = 0")" "<v1-cover@example.org>" \
  "the cover letter's own References are stored"
is "$(sql "SELECT mail_to || ' / ' || mail_cc FROM patches WHERE submission_id = $s1 AND seq = 0")" \
  "LKML <linux-kernel@vger.kernel.org> / Ingo Mølnar <mingo@kernel.org>, robot@lab.example.org" \
  "and its To (the list) and Cc, decoded"
finish "$s1" 1
is "$(sql "SELECT state || ',' || verdict FROM submissions WHERE id = $s1")" "done,no-change" \
  "the same code on both sides finishes as no-change"
wait_mails 1
ok $? "the SMTP server receives the reply"
m1=$MAILS/0001.eml
info=$(mailinfo "$m1")
is "$(jq -c .defects <<<"$info")" '[]' "Python's email package finds no defect in it"
is "$(jq -r .subject <<<"$info")" "Re: $SUBJECT" "Subject: Re: and the whole subject, decoded"
ok $(( $(jq .longest_encoded_word <<<"$info") <= 75 ? 0 : 1 )) \
  "no encoded-word is longer than 75 characters ($(jq .longest_encoded_word <<<"$info"))"
ok $(( $(jq .longest_header_line <<<"$info") <= 78 ? 0 : 1 )) \
  "header lines are folded at 78 columns ($(jq .longest_header_line <<<"$info"))"
is "$(jq -r .in_reply_to <<<"$info")" "$cover_id" "In-Reply-To: the cover letter"
is "$(jq -r '.references | join(" ")' <<<"$info")" "<v1-cover@example.org> $cover_id" \
  "References: the cover's own References, then the cover"
is "$(jq -r '.to | join(",")' <<<"$info")" "waiman@example.org" "To: the author's address"
is "$(jq -r '.to_names | join(",")' <<<"$info")" "Waiman Løng" "with the author's name decoded"
grep -qiE '^To: .*<waiman@example\.org>' "$m1"
ok $? "the address itself is not inside an encoded-word"
is "$(jq -r '.cc | sort | join(",")' <<<"$info")" "linux-kernel@vger.kernel.org,mingo@kernel.org,peterz@infradead.org" \
  "Cc: the list, the cover's Cc and the reviewer, without locklab itself"
is "$(jq -r .from <<<"$info")" "locklab robot <robot@lab.example.org>" "From: the configured address"
like "$(jq -r .message_id <<<"$info")" '^<locklab\.[0-9]+\.[0-9a-f]{32}@lab\.example\.org>$' \
  "a fresh Message-ID in the mail domain"
is "$(sql "SELECT message_id FROM outbox WHERE submission_id = $s1")" "$(jq -r .message_id <<<"$info")" \
  "the outbox records that Message-ID"
[[ -n $(jq -r .date <<<"$info") ]]
ok $? "it has a Date"
is "$(jq -r '[.content_type, .charset] | join("; ")' <<<"$info")" "text/plain; utf-8" "text/plain; charset=utf-8"
like "$(jq -r .cte <<<"$info")" '^(7bit|quoted-printable|base64)$' "with a 7-bit-safe transfer encoding"
if jq -e .raw_8bit <<<"$info" >/dev/null; then ok 1 "no raw 8-bit byte goes over SMTP"; else ok 0 "no raw 8-bit byte goes over SMTP"; fi
like "$(jq -r .first_paragraph <<<"$info")" '^locklab found no change beyond \+-[0-9.]+% on [0-9]+ rows of the quick suite - Tested-by below\.$' \
  "the finding comes first, in one sentence"
ok $(( $(jq .max_body_columns <<<"$info") <= 100 ? 0 : 1 )) \
  "every body line fits 100 columns ($(jq .max_body_columns <<<"$info"))"
like "$(jq -r .body <<<"$info")" '^machine: lab1, 2 CPUs, Test CPU, kernel 6\.1\.0$' "it names the machine"
like "$(jq -r .body <<<"$info")" '^ +base +%sd +%change +patched +%sd +\+-ci95 +n +metric$' "the table has its LKP-style head"
rounds=$(jq -r .body <<<"$info" | sed -n 's/^rounds: *\([0-9]*\) base.*/\1/p')
like "$(jq -r .body <<<"$info")" '^ +[0-9]+ +[0-9]+% +[-+][0-9.]+% +[0-9]+ +[0-9]+% +[0-9.]+% +'"$((5 * rounds))"' +hot\.pthread\.ops_per_sec\.threads=1$' \
  "each row says its samples per side (5 a round, $rounds rounds) and the smallest change it could see"
like "$(jq -r .body <<<"$info")" '^details: http://dash\.example\.org/#/submissions/'"$s1"'$' "it links the dashboard"
is "$(jq -r .body <<<"$info" | grep -c '^Tested-by: Løcklab Lab <tested@lab\.example\.org>$')" 1 \
  "no change earns the configured Tested-by, once"
is "$(jq -r .body <<<"$info" | grep -ciE 'no change|no-change')" 1 "the verdict is said once"
is "$(jq -r '.rcpt_tos | sort | join(",")' "$MAILS/0001.json")" \
  "linux-kernel@vger.kernel.org,mingo@kernel.org,peterz@infradead.org,waiman@example.org" \
  "the envelope goes to To and Cc"
is "$(jq -r .mail_from "$MAILS/0001.json")" robot@lab.example.org "from the configured sender"
api GET "/api/v1/outbox?submission=$s1"
is "$(jq -r '[.sending, (.mails | length), .mails[0].state, .mails[0].attempts] | join(",")' <<<"$BODY")" "true,1,sent,1" \
  "the API shows the mail sent at the first attempt"
api GET "/api/v1/submissions/$s1"
is "$(jq -r '.mails[0] | [.state, .message_id] | join(",")' <<<"$BODY")" "sent,$(jq -r .message_id <<<"$info")" \
  "and so does the submission"
api GET "/api/v1/submissions/$s1/reply"
is "$BODY" "$(cat "$m1")" "GET .../reply serves the mail as it was sent"
api GET /metrics
like "$BODY" '^locklab_mail_out_total\{result="sent"\} 1$' "/metrics counts the mail sent"
like "$BODY" '^locklab_mail_out_total\{result="failed"\} 0$' "and none given up"

# a regression: Reported-by trailers, no Tested-by
submit_mbox "$T/series.mbox"
s2=$SUB
finish "$s2" 0.9
is "$(sql "SELECT verdict FROM submissions WHERE id = $s2")" regression "a confirmed 10% slowdown is a regression"
wait_mails 2
ok $? "its reply is sent"
info=$(mailinfo "$MAILS/0002.eml")
like "$(jq -r .first_paragraph <<<"$info")" '^locklab noticed a 10\.0% regression of hot\.pthread\.ops_per_sec' \
  "the finding comes first"
unlike "$(jq -r .body <<<"$info")" 'Tested-by' "a regression earns no Tested-by"
like "$(jq -r .body <<<"$info")" '^\| Reported-by: Løcklab Lab <tested@lab\.example\.org>$' "it gives a Reported-by to paste"
ok $(( $(jq .max_body_columns <<<"$info") <= 100 ? 0 : 1 )) "every body line fits 100 columns"
is "$(jq -c .defects <<<"$info")" '[]' "no defect"
[[ $(jq -r .message_id <<<"$info") != "$(jq -r .message_id <(mailinfo "$m1"))" ]]
ok $? "each reply has its own Message-ID"

# a lockup: the stuck threads' top frames
submit_mbox "$T/series.mbox"
s3=$SUB
claim "$AGENT_TOKEN"
# what lockbench's runner captures: gdb's backtraces, then the kernel's view
stacks='--- gdb: thread apply all bt ---
[New LWP 4242]
[Thread debugging using libthread_db enabled]
0x00007f0000000001 in clock_nanosleep () from /lib/x86_64-linux-gnu/libc.so.6
Thread 2 (Thread 0x7f0000001000 (LWP 4242) "lockbench"):
#0  0x00007f0000000002 in syscall () from /lib/x86_64-linux-gnu/libc.so.6
#1  0x0000555500000001 in futex_wait (uaddr=0x55550001) at lockbench/locks/futex.h:30
#2  0x0000555500000002 in kmutex_lock_slow (l=0x55550001) at lockbench/locks/kmutex.c:210
#3  0x0000555500000003 in kmutex_lock (l=0x55550001) at lockbench/locks/kmutex.c:250
#4  0x0000555500000004 in hot_worker (arg=0x55550002) at lockbench/src/workload_lock.c:80
#5  0x00007f0000000003 in start_thread () from /lib/x86_64-linux-gnu/libc.so.6
[Inferior 1 (process 4240) detached]
task 4242 (lockbench) state S wchan futex_wait_queue
  [<0>] futex_wait_queue+0x60/0x90
[<0>] futex_wait+0x17a/0x260
[<0>] do_futex+0x106/0x1b0
[<0>] __x64_sys_futex+0x8e/0x1d0
[<0>] do_syscall_64+0x55/0xb0'
for r in 0 1; do
  post_round "$JOB" "$AGENT_TOKEN" base $r 1
  result_doc patched $r 1 quick 0.002 1 | jq --arg s "$stacks" '(.runs[] | select(.lockup) | .lockup.stacks) = $s' >"$T/lk.json"
  api POST "/api/v1/jobs/$JOB/results" -H "Authorization: Bearer $AGENT_TOKEN" -H "Idempotency-Key: lk-$JOB-$r" -d @"$T/lk.json"
done
wait_mails 3
info=$(mailinfo "$MAILS/0003.eml")
like "$(jq -r .first_paragraph <<<"$info")" '^locklab noticed a lockup: at 4 threads, the patched build locked up on hot with pthread' \
  "a lockup is said first"
frames=$(jq -r .body <<<"$info" | sed -n '/^the stuck threads, top frames:$/,/^$/p')
is "$(grep -c '^  #[0-9]' <<<"$frames")" 4 "the stuck thread's top four frames are quoted"
like "$frames" '^  #2 .* in kmutex_lock_slow ' "the frame that matters among them"
like "$frames" '^  task 4242 \(lockbench\) state S wchan futex_wait_queue$' "with the kernel's view of the thread"
unlike "$frames" 'New LWP|libthread_db|Inferior|hot_worker|do_syscall_64' "without gdb's chatter or the deeper frames"
unlike "$(jq -r .body <<<"$info")" 'Tested-by' "and no Tested-by"
ok $(( $(jq .max_body_columns <<<"$info") <= 100 ? 0 : 1 )) "every line fits 100 columns, stacks too"

# the SMTP server down: the reply waits, then goes out once
sink_stop
submit_mbox "$T/series.mbox"
s4=$SUB
finish "$s4" 1
o4=$(sql "SELECT id FROM outbox WHERE submission_id = $s4")
for ((i = 0; i < 200; i++)); do
  [[ $(sql "SELECT attempts >= 2 AND state = 'queued' FROM outbox WHERE id = $o4") == t ]] && break
  sleep 0.1
done
is "$(sql "SELECT state || ',' || (attempts >= 2) || ',' || (last_error IS NOT NULL) FROM outbox WHERE id = $o4")" "queued,true,true" \
  "with the SMTP server down the mail stays queued, tried again with the reason kept"
is "$(ls "$MAILS"/*.eml | wc -l)" 3 "nothing arrived meanwhile"
# a crashed sender's leftovers: one claimed before any byte went, one after
sql "INSERT INTO outbox (submission_id, subject, message, message_id, state, lease_expires, data_started) SELECT submission_id, subject, message, message_id, 'sending', now() - interval '1 second', false FROM outbox WHERE id = (SELECT id FROM outbox WHERE submission_id = $s1)"
oa=$(sql "SELECT max(id) FROM outbox")
sql "INSERT INTO outbox (submission_id, subject, message, message_id, state, lease_expires, data_started) SELECT submission_id, subject, message, message_id, 'sending', now() - interval '1 second', true FROM outbox WHERE id = (SELECT id FROM outbox WHERE submission_id = $s2 ORDER BY id LIMIT 1)"
ob=$(sql "SELECT max(id) FROM outbox")
sink_start "$MAILS" "$SMTP_PORT" || { echo "Bail out! the SMTP server did not come back"; exit 1; }
wait_state "$o4" sent
ok $? "once the SMTP server is back the waiting mail is sent"
wait_state "$oa" sent
ok $? "a mail claimed by a dead sender before any byte went out is sent"
is "$(sql "SELECT state FROM outbox WHERE id = $ob")" unknown \
  "one whose bytes had started is 'unknown', not sent again"
sleep 1 # let a second sending show up, if any
is "$(grep -l "^Message-I[dD]: $(sql "SELECT message_id FROM outbox WHERE id = $o4")" "$MAILS"/*.eml | wc -l)" 1 \
  "the waiting mail arrived exactly once"
is "$(ls "$MAILS"/*.eml | wc -l)" 5 "and nothing else came but the requeued one"
api GET "/api/v1/outbox?state=unknown"
is "$(jq -r '[.mails[].id] | join(",")' <<<"$BODY")" "$ob" "the API lists the mail of unknown fate"
api POST "/api/v1/outbox/$ob/retry"
is "$CODE" 401 "requeueing needs the admin token"

# dry run: a server without SMTP keeps its replies held, and nobody sends them
server_start --min-rounds 2 --max-rounds 4 || { echo "Bail out! no dry-run server"; exit 1; }
like "$(cat "$SERVER_LOG")" 'mail: dry run' "a server without --smtp-url says it runs dry"
submit_mbox "$T/series.mbox"
s5=$SUB
finish "$s5" 1
is "$(sql "SELECT state FROM outbox WHERE submission_id = $s5")" held "its reply is kept, held"
sleep 1 # the sending server polls every 100 ms
is "$(ls "$MAILS"/*.eml | wc -l)" 5 "and the sending server does not send it"

# noise that hides any change: said so, no Tested-by
submit_mbox "$T/series.mbox"
s6=$SUB
claim "$AGENT_TOKEN"
for r in 0 1 2 3; do
  post_round "$JOB" "$AGENT_TOKEN" base $r 1 0.3
  post_round "$JOB" "$AGENT_TOKEN" patched $r 1.01 0.3
done
is "$(sql "SELECT verdict FROM submissions WHERE id = $s6")" inconclusive "a noisy run ends inconclusive"
api GET "/api/v1/submissions/$s6/reply"
info=$(mailinfo <<<"$BODY")
like "$(jq -r .first_paragraph <<<"$info")" '^locklab could not show every deciding row unchanged: [0-9]+ rows? stayed inconclusive, [^ ]+( \([^)]*\))? [-+][0-9.]+% \[[-+][0-9.]+%, [-+][0-9.]+%\] against its \+-[0-9.]+% margin, so no Tested-by\.$' \
  "the reply says so first, naming the widest row with its interval"
unlike "$(jq -r .body <<<"$info")" '^(Tested-by|Reported-by): ' "with neither Tested-by nor Reported-by"

# a kernel lockup: the hung-task report's call trace, top frames, within 100 columns
submit_mbox "$T/series.mbox"
s7=$SUB
claim "$AGENT_TOKEN"
kstacks='[  243.120417] INFO: task lock_torture_wr:97 blocked for more than 2 seconds.
[  243.121002]       Not tainted 6.1.0-locklab #1
[  243.121500] "echo 0 > /proc/sys/kernel/hung_task_timeout_secs" disables this message.
[  243.122011] task:lock_torture_wr state:D stack:0     pid:97    ppid:2      flags:0x00004000
[  243.122700] Call Trace:
[  243.122900]  <TASK>
[  243.123100]  __schedule+0x2f3/0x8e0
[  243.123300]  schedule+0x5a/0xd0
[  243.123500]  schedule_preempt_disabled+0x11/0x20
[  243.123700]  __mutex_lock.constprop.0+0x3c6/0x6b0
[  243.123900]  torture_mutex_lock+0x12/0x20
[  243.124100]  lock_torture_writer+0xd3/0x1f0
[  243.124300]  kthread+0xe9/0x110
[  243.124500]  ret_from_fork+0x22/0x30
[  243.124700]  </TASK>'
for r in 0 1; do
  post_round "$JOB" "$AGENT_TOKEN" base $r 1
  result_doc patched $r 1 quick 0.002 1 | jq --arg s "$kstacks" '(.runs[] | select(.lockup) | .lockup.stacks) = $s' >"$T/klk.json"
  api POST "/api/v1/jobs/$JOB/results" -H "Authorization: Bearer $AGENT_TOKEN" -H "Idempotency-Key: klk-$JOB-$r" -d @"$T/klk.json"
done
is "$(sql "SELECT verdict FROM submissions WHERE id = $s7")" lockup "a kernel lockup ends the run"
api GET "/api/v1/submissions/$s7/reply"
info=$(mailinfo <<<"$BODY")
frames=$(jq -r .body <<<"$info" | sed -n '/^the stuck threads, top frames:$/,/^$/p')
like "$frames" '^  \[ *[0-9.]+\] INFO: task lock_torture_wr:97 blocked for more than 2 seconds\.$' \
  "a kernel lockup's reply quotes the hung-task line"
like "$frames" '^  \[ *[0-9.]+\] Call Trace:$' "and its call trace"
is "$(grep -cE '^  \[ *[0-9.]+\]  (__schedule|schedule|schedule_preempt_disabled|__mutex_lock)' <<<"$frames")" 4 \
  "its top four frames, down to the mutex the task sleeps in"
unlike "$frames" 'torture_mutex_lock|kthread|ret_from_fork|TASK>|hung_task_timeout_secs' "not the deeper frames nor the chatter"
ok $(( $(jq .max_body_columns <<<"$info") <= 100 ? 0 : 1 )) "every line fits 100 columns"

done_testing
