#!/usr/bin/env bash
# An idempotent claim (sql/019): a claim whose answer is lost (a loopback
# proxy reads the server's whole answer and drops it, as a server that dies
# after committing does) and is sent again with the same Idempotency-Key gets
# the same job and the same lease back, and no second lease is created.  A
# real agent behind that proxy loses its first claim's answer and still runs
# the job under one lease.
. "$(dirname "$0")/lib/tap.sh"
. "$(dirname "$0")/lib/pg.sh"
. "$(dirname "$0")/lib/server.sh"
. "$(dirname "$0")/lib/agent.sh"

pg_start || { echo "Bail out! no postgres"; exit 1; }
server_start --lease-seconds 3 --min-rounds 1 --max-rounds 1 || { echo "Bail out! no server"; exit 1; }
direct=$URL
URL=$direct answer_proxy lossy "$T/proxy.log"
tree_init
make_series c1 "sed -i '1s|^|/* one */\\n|' lockbench/locks/kmutex.c"
for i in 1 2 3; do submit_mbox "$T/c1.mbox"; done
register_agent '{"name": "a"}'
A=$AGENT_TOKEN A_ID=$AGENT_ID
running() { sql "SELECT count(*) FROM jobs WHERE state = 'running'"; }
# claim_key TOKEN KEY: a claim with that key straight to the server; sets CODE, BODY, JOB
claim_key() {
  api POST /api/v1/jobs/claim -H "Authorization: Bearer $1" -H "Idempotency-Key: $2"
  JOB=$(jq -r '.job.id' <<<"$BODY")
}

# 1. the answer is lost: the server committed a lease the client never heard of
code=$(curl -sS -o /dev/null -w '%{http_code}' -X POST -H "Authorization: Bearer $A" \
  -H 'Idempotency-Key: k1' "$lossy/api/v1/jobs/claim" 2>/dev/null)
is "$code" 000 "the claim's answer is lost on the way (the client got nothing)"
like "$(cat "$T/proxy.log")" 'POST /api/v1/jobs/claim HTTP/1.1 -> upstream HTTP/1.1 200 OK, swallowed' \
  "the server did answer it"
j1=$(sql "SELECT id FROM jobs WHERE claimed_by = $A_ID AND state = 'running'")
[[ $j1 =~ ^[0-9]+$ ]]; ok $? "the server leased a job to the agent ($j1)"
exp1=$(sql "SELECT lease_expires FROM jobs WHERE id = $j1")
sleep 1
claim_key "$A" k1
is "$CODE/$JOB" "200/$j1" "the claim sent again with the same key gets the same job"
is "$(jq -r .job.claim <<<"$BODY")" 1 "under the same lease (claim 1)"
is "$(sql "SELECT claims FROM jobs WHERE id = $j1")" 1 "the job counts one claim"
is "$(running)" 1 "no second job is leased"
is "$(sql "SELECT lease_expires > '$exp1' FROM jobs WHERE id = $j1")" t "the lease is extended from the repeated claim"
claim_key "$A" k1
is "$JOB/$(running)" "$j1/1" "a third time too"

# 2. a new key is a new claim; another agent's same key is its own
claim_key "$A" k2
j2=$JOB
[[ $j2 =~ ^[0-9]+$ && $j2 != "$j1" ]]; ok $? "a new key gets another job ($j2)"
register_agent '{"name": "b"}'
B=$AGENT_TOKEN
claim_key "$B" k1
j3=$JOB
[[ $j3 =~ ^[0-9]+$ && $j3 != "$j1" && $j3 != "$j2" ]]; ok $? "another agent sending the key k1 gets its own job ($j3)"
is "$(running)" 3 "three jobs, three leases"
api POST /api/v1/jobs/claim -H "Authorization: Bearer $A" -H "Idempotency-Key: $(printf 'x%.0s' $(seq 201))"
is "$CODE" 400 "a claim key over 200 bytes is refused"

# 3. a key whose lease ran out does not bring the job back: it is a claim like any other
for ((i = 0; i < 100; i++)); do [[ $(running) == 0 ]] && break; sleep 0.1; done
is "$(running)" 0 "the 3 s leases expire"
# (claims before it: 1, or 2 when a loaded machine let the lease run out before "a third time")
before=$(sql "SELECT claims FROM jobs WHERE id = $j1")
claim_key "$A" k1
is "$JOB/$(jq -r .job.claim <<<"$BODY")" "$j1/$((before + 1))" \
  "a claim with the old key after its lease expired is a new lease of the oldest job (claim $((before + 1)))"
is "$(sql "SELECT count(*) FROM jobs WHERE claim_key = 'k1' AND claimed_by = $A_ID")" 1 "the key is on one job of the agent"
api POST "/api/v1/jobs/$JOB/release" -H "Authorization: Bearer $A"

# 4. a real agent behind a proxy that loses its first claim's answer
sql "UPDATE jobs SET state = 'failed', reason = 'not this test' WHERE state <> 'done'" >/dev/null
submit_mbox "$T/c1.mbox"; s=$SUB
URL=$direct answer_proxy once "$T/proxy-once.log" '/api/v1/jobs/claim' 1
register_agent '{"name": "c"}'
URL=$once agent_spawn c --once
wait "$AGENT_PID"; ok $? "the agent ends its run with status 0"
URL=$direct
like "$(cat "$T/proxy-once.log")" 'claim HTTP/1.1 -> upstream HTTP/1.1 200 OK, swallowed' "its first claim's answer was lost"
like "$(cat "$T/agent-c.log")" 'cannot claim \(sent again with key claim-[0-9a-f]{32}\)' "the agent says it sends the claim again with its key"
is "$(sub_state "$s")" done "the job is done"
is "$(sql "SELECT claims || ',' || attempts FROM jobs WHERE submission_id = $s")" 1,0 \
  "under the one lease the lost answer held: no second claim, no expired attempt"
is "$(sql "SELECT count(DISTINCT claim) FROM results WHERE job_id = (SELECT id FROM jobs WHERE submission_id = $s)")" 1 \
  "every result came under that lease"
done_testing
