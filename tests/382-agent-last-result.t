#!/usr/bin/env bash
# The heartbeat beside the job's last result.  The result that completes a
# job ends its lease on the server at once; a heartbeat sent before the
# agent has read that result's answer is refused (409: the job is done).
# That refusal is not a lost lease: the agent must not log one, must not stop
# its work for one, and must end the job as done.  A loopback proxy holds the
# answer that says more_rounds 0 for 3 s (lease 3 s: a heartbeat a second),
# so the refused heartbeat happens on every run; CI stop 25 saw it once by
# chance (tests/380-agent-clock: "lease lost" after the job was done).
. "$(dirname "$0")/lib/tap.sh"
. "$(dirname "$0")/lib/pg.sh"
. "$(dirname "$0")/lib/server.sh"
. "$(dirname "$0")/lib/agent.sh"

pg_start || { echo "Bail out! no postgres"; exit 1; }
server_start --lease-seconds 3 --min-rounds 3 --max-rounds 3 || { echo "Bail out! no server"; exit 1; }
unpaired # a heartbeat beside the last result: no timing is judged
tree_init
make_series c1 "sed -i '1s|^|/* one */\\n|' lockbench/locks/kmutex.c"
submit_mbox "$T/c1.mbox"; s=$SUB
answer_proxy slow "$T/proxy.log" --hold '"more_rounds": *0[,} ]' 3
register_agent '{"name": "a"}'
URL=$slow agent_spawn a --once
wait "$AGENT_PID"; ok $? "the agent ends its run"
log=$(cat "$T/agent-a.log")
is "$(grep -c ', held$' "$T/proxy.log")" 1 "the answer to the last result was held (once)"
like "$(cat "$T/proxy.log")" "POST /api/v1/jobs/[0-9]+/heartbeat HTTP/1.1 -> upstream HTTP/1.1 409" \
  "a heartbeat was refused meanwhile: the job was done on the server (the case this test is for)"
is "$(sub_state "$s")" done "the submission is done"
unlike "$log" "lease lost|job lost" "the agent did not call the refusal a lost lease"
like "$log" 'job=[0-9]+ msg="job done"' "the agent logged the job done"
done_testing
