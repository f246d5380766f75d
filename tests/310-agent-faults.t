#!/usr/bin/env bash
# The agent under faults: killed mid-job, the server gone while it posts,
# and two agents on one queue.  Nothing is lost and nothing is counted twice.
. "$(dirname "$0")/lib/tap.sh"
. "$(dirname "$0")/lib/pg.sh"
. "$(dirname "$0")/lib/server.sh"
. "$(dirname "$0")/lib/agent.sh"

pg_start || exit 1
port=$(free_port)
srv() { # srv LEASE_SECONDS
  (cd "$TOP" && exec "$BIN/locklab-server" --listen "127.0.0.1:$port" --admin-token "$ADMIN_TOKEN" \
    --sql-dir "$TOP/sql" --web-root "$TOP/web" --lease-seconds "$1" --min-rounds 6 --max-rounds 6) \
    >>"$T/server.log" 2>&1 &
  SERVER_PID=$!
  at_exit "kill $SERVER_PID 2>/dev/null"
  URL="http://127.0.0.1:$port"
  server_wait "$URL" "$SERVER_PID" "$T/server.log"
}
srv 4 || exit 1
register_agent
unpaired # faults and counts of documents: no timing is judged
tree_init
make_series c1 "sed -i '1s|^|/* one */\\n|' lockbench/locks/kmutex.c"
make_series c2 "sed -i '1s|^|/* two */\\n|' lockbench/locks/spin.c"
make_series c3 "sed -i '1s|^|/* three */\\n|' lockbench/locks/parking.c"
results() { sql "SELECT count(*) FROM results WHERE job_id = (SELECT id FROM jobs WHERE submission_id = $1)"; }
# 2 documents per wanted round: 6, or 12 when the rounds found a change to confirm
wanted2() { sql "SELECT 2 * rounds_wanted FROM jobs WHERE submission_id = $1"; }
dups() { sql "SELECT count(*) FROM (SELECT variant, round FROM results GROUP BY job_id, variant, round HAVING count(*) > 1) d"; }

# 1. kill -9 in the middle of a job: the lease expires, a second agent finishes
submit_mbox "$T/c1.mbox"; s1=$SUB
agent_spawn killed
for ((i = 0; i < 600; i++)); do [[ $(results "$s1") -ge 3 ]] && break; sleep 0.2; done
kill -9 "$AGENT_PID"; wait "$AGENT_PID" 2>/dev/null
before=$(results "$s1")
[[ $before -ge 3 && $before -lt 12 ]]; ok $? "the first agent died mid-job after $before of 12 results"
for ((i = 0; i < 100; i++)); do
  [[ $(sql "SELECT state FROM jobs WHERE submission_id = $s1") == queued ]] && break; sleep 0.2
done
is "$(sql "SELECT state FROM jobs WHERE submission_id = $s1")" queued "the job is back in the queue once the 4 s lease expired"
agent_spawn second --once
wait "$AGENT_PID"; ok $? "a second agent takes the job over once the lease expired"
is "$(sub_state "$s1")" done "the job is done"
is "$(results "$s1")" "$(wanted2 "$s1")" "every wanted round's 2 documents are stored, none twice"
is "$(sql "SELECT count(*) FROM (SELECT round FROM results WHERE job_id = (SELECT id FROM jobs WHERE submission_id = $s1) GROUP BY round HAVING count(DISTINCT claim) > 1) x")" 0 \
  "each round's base and patched came from one lease (the killed agent's lone half of a round was run again)"
is "$(sql "SELECT count(DISTINCT claim) FROM results WHERE job_id = (SELECT id FROM jobs WHERE submission_id = $s1)")" 2 \
  "the job's rounds came from its two leases"
is "$(sql "SELECT attempts FROM jobs WHERE submission_id = $s1")" 1 "the expired lease counted one attempt"
like "$(cat "$T/agent-second.log")" "claimed: suite smoke, [0-9]+ rounds to go from round [1-9]" "the second agent went on from where the first stopped"

# 2. the server goes away while the agent posts: spooled, then delivered once
#    (with a lease longer than the outage, as in a real lab)
kill "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null
srv 60 || exit 1
submit_mbox "$T/c2.mbox"; s2=$SUB
agent_spawn spool
for ((i = 0; i < 600; i++)); do [[ $(results "$s2") -ge 2 ]] && break; sleep 0.2; done
kill "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null
for ((i = 0; i < 300; i++)); do ls "$T/agent-spool/spool/"*.json >/dev/null 2>&1 && break; sleep 0.2; done
ls "$T/agent-spool/spool/"*.json >/dev/null 2>&1; ok $? "with the server down, the result goes to the spool"
sleep 2
srv 60; ok $? "the server restarts"
wait_state "$s2" done 300; ok $? "the job finishes after the restart"
kill -TERM "$AGENT_PID"; wait "$AGENT_PID" 2>/dev/null
is "$(results "$s2")" "$(wanted2 "$s2")" "every round stored exactly once"
is "$(ls "$T/agent-spool/spool/" | grep -c json)" 0 "the spool is empty"
like "$(cat "$T/agent-spool.log")" "spooled result .* delivered" "the agent says the spooled result was delivered"

# 3. two agents, one queue: each job is taken by exactly one agent; they share
#    one base cache (the run's, else the test's own), so one base build at most
submit_mbox "$T/c3.mbox"; s3=$SUB
submit_mbox "$T/c1.mbox"; s4=$SUB
export LOCKLAB_BASE_CACHE=${LOCKLAB_BASE_CACHE:-$T/base-cache}
agent_spawn x --once; ax=$AGENT_PID
register_agent '{"name": "y"}'
agent_spawn y --once; ay=$AGENT_PID
wait "$ax"; wait "$ay"
builds=$(cat "$T/agent-x.log" "$T/agent-y.log" | grep -c 'msg="built base in')
[[ $builds -le 1 ]]; ok $? "the two agents built the shared base $builds time(s), not once each"
like "$(cat "$T/agent-x.log" "$T/agent-y.log")" 'msg="base [0-9a-f]+ built (before|beside): reusing it' \
  "and an agent took the base from the shared cache"
is "$(sub_state "$s3")/$(sub_state "$s4")" done/done "both jobs are done"
is "$(sql "SELECT count(DISTINCT agent_id) FROM results WHERE job_id IN (SELECT id FROM jobs WHERE submission_id IN ($s3, $s4))")" 2 "by two different agents"
is "$(sql "SELECT count(*) FROM (SELECT job_id FROM results WHERE job_id IN (SELECT id FROM jobs WHERE submission_id IN ($s3, $s4)) GROUP BY job_id HAVING count(DISTINCT agent_id) > 1) x")" 0 "no job was worked on by both"
is "$(dups)" 0 "no round is stored twice anywhere"
done_testing
