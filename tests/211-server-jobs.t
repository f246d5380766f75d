#!/usr/bin/env bash
# The agent side: registration, claim, heartbeat, results (idempotent),
# verdicts, more rounds, lockups, failures, every report format and the reply.
source "$(dirname "$0")/lib/tap.sh"
source "$TOP/tests/lib/pg.sh"
source "$TOP/tests/lib/server.sh"

server_setup --min-rounds 3 --max-rounds 6
cover_id=$(grep -hi '^Message-ID:' "$T"/s/out/v2-0000-*.patch | sed 's/^Message-ID: //I')

# registration
api POST /api/v1/agents/register -d '{}'
is "$CODE" 401 "registering without a token is 401"
api POST /api/v1/agents/register -H 'Authorization: Bearer wrong' -d '{}'
is "$CODE" 401 "registering with a wrong admin token is 401 (an unknown token; 403 is for a known token of another role)"
is "$(sql "SELECT count(*) FROM agents")" 0 "no agent was stored by them"
register_agent '{"name": "lab1"}'
A_ID=$AGENT_ID A=$AGENT_TOKEN
like "$A" '^[0-9a-f]{64}$' "an agent token is 32 random bytes in hex"
is "$(sql "SELECT token_hash FROM agents WHERE id = $A_ID")" "$(printf %s "$A" | sha256sum | cut -d' ' -f1)" \
  "only the SHA-256 of the token is stored"
register_agent
B=$AGENT_TOKEN
api POST /api/v1/agents/register -H "Authorization: Bearer $A" -d '{}'
is "$CODE" 403 "an agent token cannot register agents"

# claim and lease
submit_mbox "$T/s/series.mbox"
s1=$SUB
claim "$A"
is "$CODE" 200 "claim answers 200"
j1=$JOB
is "$j1" "$(sql "SELECT id FROM jobs WHERE submission_id = $s1")" "the agent gets the queued job"
is "$(jq -r '.job.patches | length' <<<"$BODY")" 2 "the job carries both patches"
is "$(jq -r '.job.mails[1]' <<<"$BODY" | base64 -d | sha1sum)" "$(tail -n +2 "$T"/s/out/v2-0002-*.patch | sha1sum)" \
  "and each patch's message as sent, for git am"
is "$(jq -r '[.job.rounds, .job.next_round, .job.more_rounds] | join(",")' <<<"$BODY")" "3,0,3" \
  "it asks for min-rounds rounds, starting at round 0"
is "$(sql "SELECT state || ',' || claimed_by FROM jobs WHERE id = $j1")" "running,$A_ID" "the job is leased to the agent"
is "$(sql "SELECT state FROM submissions WHERE id = $s1")" running "the submission is running"
claim "$B"
is "$JOB" null "a second agent finds the queue empty"
api POST /api/v1/jobs/claim
is "$CODE" 401 "claiming without a token is 401"
api POST /api/v1/jobs/claim -H 'Authorization: Bearer 00ff'
is "$CODE" 401 "claiming with an unknown token is 401"
lease1=$(sql "SELECT lease_expires FROM jobs WHERE id = $j1")
sleep 1
api POST "/api/v1/jobs/$j1/heartbeat" -H "Authorization: Bearer $B"
is "$CODE" 403 "another agent's heartbeat is 403"
api POST "/api/v1/jobs/$j1/heartbeat" -H "Authorization: Bearer $A"
is "$CODE" 200 "the owner's heartbeat is 200"
is "$(sql "SELECT lease_expires > '$lease1' FROM jobs WHERE id = $j1")" t "the heartbeat extends the lease"

# results
post_round "$j1" "$B" base 0 1
is "$CODE" 403 "an agent posting for another agent's job gets 403"
is "$(sql "SELECT count(*) FROM results")" 0 "nothing is stored for it"
result_doc base 0 1 >"$T/r.json"
api POST "/api/v1/jobs/$j1/results" -H "Authorization: Bearer $A" -d @"$T/r.json"
is "$CODE" 400 "a result without an idempotency key is 400"
jq 'del(.schema)' "$T/r.json" >"$T/bad.json"
api POST "/api/v1/jobs/$j1/results" -H "Authorization: Bearer $A" -H 'Idempotency-Key: bad-1' -d @"$T/bad.json"
is "$CODE" 422 "a document without schema is 422"
like "$(jq -r .detail <<<"$BODY")" '^schema' "the rejection names the field"
jq '.runs[0].metrics.ops_per_sec = "fast"' "$T/r.json" >"$T/bad.json"
api POST "/api/v1/jobs/$j1/results" -H "Authorization: Bearer $A" -H 'Idempotency-Key: bad-2' -d @"$T/bad.json"
is "$CODE" 422 "a metric that is not a number is 422"
like "$(jq -r .detail <<<"$BODY")" 'runs\[0\]\.metrics\.ops_per_sec' "the rejection names the metric"
is "$(sql "SELECT count(*) FROM results")" 0 "no invalid document is stored"

post_round "$j1" "$A" base 0 1
is "$CODE" 201 "round 0 of base is stored (201)"
is "$(jq -r '[.stored, .more_rounds] | join(",")' <<<"$BODY")" "true,3" "three rounds are still missing"
post_round "$j1" "$A" base 0 1
is "$CODE" 200 "posting the same round again answers 200"
is "$(jq -r .duplicate <<<"$BODY")" true "and says it is a duplicate"
is "$(sql "SELECT count(*) FROM results WHERE job_id = $j1")" 1 "the round is stored once"
is "$(sql "SELECT count(*) FROM samples s JOIN results r ON r.id = s.result_id WHERE r.job_id = $j1")" 3 \
  "its samples are stored once"
api POST "/api/v1/jobs/$j1/results" -H "Authorization: Bearer $A" -H 'Idempotency-Key: other-key' -d @"$T/round.json"
is "$CODE" 409 "the same round under another key is a 409"
is "$(sql "SELECT count(*) FROM results WHERE job_id = $j1")" 1 "and is not stored"
result_doc patched 0 0.9 | jq '{idempotency_key: "field-key-1", result: .}' >"$T/w.json"
api POST "/api/v1/jobs/$j1/results" -H "Authorization: Bearer $A" -d @"$T/w.json"
is "$CODE" 201 "the key may come in the body as idempotency_key"
# the replay bare, under the header, every sample spelt with an exponent
result_doc patched 0 0.9 | python3 -c '
import json, sys
d = json.load(sys.stdin)
t = json.dumps(d)
for r in d["runs"]:
    for x in r["samples"]["ops_per_sec"]:
        t = t.replace(json.dumps(x), "%.17e" % x, 1)
print(t)' >"$T/w-exp.json"
api POST "/api/v1/jobs/$j1/results" -H "Authorization: Bearer $A" -H 'Idempotency-Key: field-key-1' \
  -d @"$T/w-exp.json"
is "$CODE/$(jq -r .duplicate <<<"$BODY")" 200/true \
  "its replay in the other form, the numbers spelt otherwise, is the same document"
is "$(jq -r '[.rounds_complete, .more_rounds, .next_round] | join(",")' <<<"$BODY")" "1,2,1" "round 0 is complete"
for r in 1 2; do post_round "$j1" "$A" base $r 1; post_round "$j1" "$A" patched $r 0.9; done
is "$CODE" 201 "the last wanted round is stored"
is "$(jq -r '[.state, .rounds, .more_rounds, .next_round, .confirm_from] | join(",")' <<<"$BODY")" \
  "running,6,3,3,3" "a 10% slowdown is found, and three more rounds must confirm it"
api GET "/api/v1/submissions/$s1"
is "$(jq -r '[.state, (.jobs[0].confirm_from | tostring)] | join(",")' <<<"$BODY")" "running,3" \
  "the submission is still running, confirming from round 3"
is "$(jq -r '[.verdicts[] | .verdict] | join(",")' <<<"$BODY")" "regression,regression,regression" \
  "the finding is shown meanwhile"
api GET "/api/v1/submissions/$s1/reply"
is "$CODE" 409 "and no reply goes out for a finding not yet confirmed"
like "$(LOCKLAB_SERVER="$URL" "$BIN/locklab" status "$s1")" 'quick: running, 3/6 rounds, confirming a change from round 3$' \
  "locklab status shows the rounds and the confirmation"
post_round "$j1" "$A" base 3 1
post_round "$j1" "$A" patched 3 0.9
post_round "$j1" "$A" patched 4 0.9
post_round "$j1" "$A" base 4 1
post_round "$j1" "$A" base 5 1
post_round "$j1" "$A" patched 5 0.9
is "$(jq -r '[.state, .more_rounds, .verdict] | join(",")' <<<"$BODY")" "done,0,regression" \
  "confirmed by rounds 3 to 5, the 10% slowdown finishes the job as a regression"
api GET "/api/v1/submissions/$s1"
is "$(jq -r '[.state, .verdict] | join(",")' <<<"$BODY")" "done,regression" "the submission is done with the verdict"
is "$(jq -r '[.verdicts[].verdict] | join(",")' <<<"$BODY")" "regression,regression,regression" \
  "every point is a regression"
is "$(jq -r '.verdicts[0] | [.params, .base.n, .patched.n] | join(",")' <<<"$BODY")" "threads=1,30,30" \
  "a verdict row says its point and sample counts"
api POST "/api/v1/jobs/$j1/heartbeat" -H "Authorization: Bearer $A"
is "$CODE" 409 "a heartbeat for a finished job is 409"

# reports
for f in aim7 perf lkp text; do
  api GET "/api/v1/submissions/$s1/report?format=$f" -D "$T/h"
  is "$CODE" 200 "the $f report is served"
  like "$(cat "$T/h")" '^Content-Type: text/plain' "the $f report is text/plain"
  like "$BODY" '-10\.0' "the $f report shows the 10% drop"
done
api GET "/api/v1/submissions/$s1/report?format=text"
like "$BODY" 'regression' "the text report says regression"
like "$BODY" '-10\.0%' "and the change"
api GET "/api/v1/submissions/$s1/report?format=html"
is "$CODE" 400 "an unknown format is 400"
is "$(sql "SELECT string_agg(format, ',' ORDER BY format) FROM reports WHERE submission_id = $s1")" \
  "aim7,lkp,perf,text" "the finished tables are kept"
out=$(LOCKLAB_SERVER="$URL" "$BIN/locklab" report "$s1" --format lkp)
ok $? "locklab report ID --format lkp works"
is "$out" "$(sql "SELECT body FROM reports WHERE submission_id = $s1 AND format = 'lkp'")" "it prints the kept table"

# the reply mail
api GET "/api/v1/submissions/$s1/reply" -D "$T/h"
is "$CODE" 200 "the reply is served"
like "$(cat "$T/h")" '^Content-Type: message/rfc822' "as message/rfc822"
reply=$BODY
like "$reply" "^In-Reply-To: $cover_id" "it threads to the cover letter"
like "$reply" "^References: $cover_id" "with References too"
like "$reply" '^Subject: Re: \[PATCH v2 0/2\]' "its subject is Re: the cover letter's"
like "$reply" '^series: +\[PATCH v2 0/2\]' "it names the series it answers"
like "$reply" 'lab1.*2 (CPUs|cpus)' "it names the machine"
info=$(python3 "$TOP/tests/lib/mailinfo.py" <<<"$reply")
like "$(jq -r .first_paragraph <<<"$info")" '^locklab noticed a 10\.0% regression of hot\.pthread\.ops_per_sec' \
  "it says the finding first"
like "$(jq -r .body <<<"$info")" '-10\.0%\*.*hot\.pthread\.ops_per_sec' "it holds the table"
unlike "$reply" 'Tested-by:' "a regression earns no Tested-by"
is "$(sql "SELECT in_reply_to FROM outbox WHERE submission_id = $s1")" "$cover_id" "the reply is kept in the outbox"

api GET "/api/v1/submissions/$s1/report?format=text"
like "$BODY" 'rounds 0-2 found the change and rounds 3 and later found it again' \
  "the legend says the change was confirmed, and on which rounds"
api POST "/api/v1/jobs/$j1/results" -H "Authorization: Bearer $A" -H 'Idempotency-Key: late-1' \
  -d "$(result_doc base 12 1)"
is "$CODE" 422 "a round past twice --max-rounds (the most a confirmation can ask for) is 422"

# a finding the next rounds do not repeat is no regression
submit_mbox "$T/s/series.mbox"
s7=$SUB
claim "$A"
j7=$JOB
post_round "$j7" "$A" base 3 1
is "$CODE" 409 "a round the job has not asked for is 409"
like "$(jq -r .detail <<<"$BODY")" 'round 3 is not wanted: job [0-9]+ wants rounds 0-2' "saying which rounds it wants"
for r in 0 1 2; do post_round "$j7" "$A" base $r 1; post_round "$j7" "$A" patched $r 0.9; done
is "$(jq -r '[.state, .confirm_from] | join(",")' <<<"$BODY")" "running,3" "a slowdown in rounds 0 to 2 is found"
for r in 3 4 5; do post_round "$j7" "$A" base $r 1; post_round "$j7" "$A" patched $r 1; done
v=$(jq -r .verdict <<<"$BODY")
is "$(jq -r .state <<<"$BODY")" done "after the confirmation's rounds the job is done"
[[ $v != regression ]]; ok $? "rounds 3 to 5 show no slowdown: the finding is not confirmed (verdict: $v)"
api GET "/api/v1/submissions/$s7"
is "$(jq '[.verdicts[] | select(.significant)] | length' <<<"$BODY")" 0 "no row is marked significant"

# A/A: no change earns Tested-by
submit_mbox "$T/s/series.mbox"
s2=$SUB
claim "$A"
j2=$JOB
for r in 0 1 2; do post_round "$j2" "$A" base $r 1; post_round "$j2" "$A" patched $r 1; done
is "$(jq -r '[.state, .verdict] | join(",")' <<<"$BODY")" "done,no-change" "the same code on both sides is no-change"
api GET "/api/v1/submissions/$s2/reply"
like "$BODY" '^Tested-by: locklab <locklab@localhost>$' "no change earns Tested-by"

# noisy points ask for more rounds, up to --max-rounds
submit_mbox "$T/s/series.mbox"
s3=$SUB
claim "$A"
j3=$JOB
for r in 0 1 2; do post_round "$j3" "$A" base $r 1 0.3; post_round "$j3" "$A" patched $r 1.01 0.3; done
is "$(jq -r '[.state, .rounds, .more_rounds, .next_round] | join(",")' <<<"$BODY")" "running,6,3,3" \
  "an inconclusive comparison asks for three more rounds"
is "$(sql "SELECT rounds_wanted || ',' || state FROM jobs WHERE id = $j3")" "6,running" "the job wants 6 rounds now"
api POST "/api/v1/jobs/$j3/heartbeat" -H "Authorization: Bearer $A"
is "$(jq -r .more_rounds <<<"$BODY")" 3 "the heartbeat says so too"
api GET "/api/v1/submissions/$s3/report?format=text"
like "$BODY" 'more rounds running' "the report marks the comparison as not final"
for r in 3 4 5; do post_round "$j3" "$A" base $r 1 0.3; post_round "$j3" "$A" patched $r 1.01 0.3; done
is "$(jq -r '[.state, .verdict] | join(",")' <<<"$BODY")" "done,inconclusive" \
  "at --max-rounds the job ends inconclusive"

# a lockup is its own verdict
submit_mbox "$T/s/series.mbox"
s4=$SUB
claim "$A"
j4=$JOB
for r in 0 1 2; do post_round "$j4" "$A" base $r 1; post_round "$j4" "$A" patched $r 1 0.002 1; done
is "$(jq -r '[.state, .verdict] | join(",")' <<<"$BODY")" "done,lockup" "a locked-up run makes the verdict lockup"
is "$(sql "SELECT count(*) || ',' || min(message) FROM lockups WHERE job_id = $j4")" "3,no progress for 2.0 s" \
  "each locked-up run is recorded with its message"
api GET "/api/v1/submissions/$s4/reply"
like "$BODY" 'locked up' "the reply says the lockup in words"
unlike "$BODY" 'Tested-by:' "a lockup earns no Tested-by"

# an agent gives up on a job
submit_mbox "$T/s/series.mbox"
s5=$SUB
claim "$A"
j5=$JOB
api POST "/api/v1/jobs/$j5/fail" -H "Authorization: Bearer $B" -d '{"reason": "x"}'
is "$CODE" 403 "another agent cannot fail the job"
api POST "/api/v1/jobs/$j5/fail" -H "Authorization: Bearer $A" -d '{"reason": "git am: patch does not apply"}'
is "$CODE" 200 "the owner fails the job"
is "$(sql "SELECT state || ': ' || reason FROM jobs WHERE id = $j5")" "failed: git am: patch does not apply" \
  "the job keeps git's reason"
like "$(sql "SELECT state || ': ' || reason FROM submissions WHERE id = $s5")" '^failed: .*patch does not apply' \
  "the submission fails with it"
api GET "/api/v1/submissions/$s5/reply"
like "$(python3 "$TOP/tests/lib/mailinfo.py" <<<"$BODY" | jq -r .first_paragraph)" \
  '^locklab could not test this: .*patch does not apply' "the reply tells the developer why, first"
is "$(sql "SELECT count(*) FROM outbox WHERE submission_id = $s5")" 1 "a failed submission's reply is kept in the outbox too"

# locklab submit --wait follows the submission to its report
LOCKLAB_SERVER="$URL" timeout 120 "$BIN/locklab" submit --wait "$T/s/series.mbox" >"$T/wait.out" 2>&1 &
waiter=$!
for ((i = 0; i < 50; i++)); do
  claim "$A"
  [[ "$JOB" != null ]] && break
  sleep 0.1
done
j6=$JOB
ok $([[ "$j6" != null ]]; echo $?) "the waited-for submission's job is claimed"
for r in 0 1 2 3 4 5; do post_round "$j6" "$A" base $r 1; post_round "$j6" "$A" patched $r 0.9; done
wait $waiter
is "$?" 1 "locklab submit --wait exits 1 once the submission is done with a regression (a CI gate)"
like "$(cat "$T/wait.out")" '^submission [0-9]+ queued' "it says the submission was queued"
like "$(cat "$T/wait.out")" 'hot +pthread .*regression' "and prints the report at the end"

# metrics
api GET /metrics
like "$BODY" '^locklab_jobs\{state="done"\} 6$' "metrics count jobs by state"
like "$BODY" '^locklab_http_requests_total\{code="201"\} [0-9]+' "metrics count requests by code"
like "$BODY" '^locklab_queue_oldest_seconds [0-9.]+' "metrics give the oldest queued age"
like "$BODY" '^locklab_build_info\{version="[^"]+"\} 1$' "metrics name the server's version"
like "$BODY" '^locklab_database_up 1$' "metrics say the database answers, under a name that says so"
unlike "$BODY" '^locklab_up ' "not under the old name"
# every job done here was judged by this server: the verdicts add up to them
is "$(awk '/^locklab_verdicts_total\{/ { n += $2 } END { print n + 0 }' <<<"$BODY")" 6 \
  "metrics count the six verdicts by kind"
like "$BODY" '^locklab_verdicts_total\{verdict="regression"\} [1-6]$' "regressions among them"
# the latency histogram of the result route: cumulative buckets, +Inf = _count
hist=$(grep '^locklab_http_request_duration_seconds_bucket{method="POST",route="/api/v1/jobs/{id}/results",' <<<"$BODY")
count=$(sed -n 's|^locklab_http_request_duration_seconds_count{method="POST",route="/api/v1/jobs/{id}/results"} ||p' <<<"$BODY")
is "$(grep -c . <<<"$hist")" 14 "the result route has a latency histogram of 14 buckets"
is "$(awk '{ if ($2 < last) bad = 1; last = $2 } END { print bad + 0 }' <<<"$hist")" 0 "its buckets are cumulative"
like "$(tail -n 1 <<<"$hist")" "le=\"\+Inf\"} $count\$" "the +Inf bucket holds every request (_count $count)"
ok "$(( count >= 36 ? 0 : 1 ))" "every posted result is counted ($count)"
like "$BODY" '^locklab_http_request_duration_seconds_sum\{method="POST",route="/api/v1/jobs/\{id\}/results"\} [0-9.]+$' \
  "and their summed time"

done_testing
