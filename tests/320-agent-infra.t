#!/usr/bin/env bash
# A failure of the machine is never a finding about the patch.  lockbench
# killed from outside in the middle of a round (what the OOM killer does) is
# tried once more and the job completes with every round counted once and no
# lockup; killed again every time, the job fails with a reason that says it
# was the machine's, and nothing of the killed rounds is stored.  (Parts 1
# and 2 run without lockstep, so that the kill lands in a side's own run;
# part 3 kills a lockstep side: the round runs one side at a time.)
. "$(dirname "$0")/lib/tap.sh"
. "$(dirname "$0")/lib/pg.sh"
. "$(dirname "$0")/lib/server.sh"
. "$(dirname "$0")/lib/agent.sh"

pg_start || exit 1
server_start --min-rounds 3 --max-rounds 3 || exit 1
register_agent
tree_init
make_series infra "sed -i '1s|^|/* comment only */\\n|' lockbench/locks/kmutex.c"
results() { sql "SELECT count(*) FROM results WHERE job_id = (SELECT id FROM jobs WHERE submission_id = $1)"; }
# kill_rounds DIR N: SIGKILL the measured lockbench of the agent working in DIR, N times
kill_rounds() {
  local dir=$1 n=$2 k=0 i pids
  for ((i = 0; i < 3000 && k < n; i++)); do
    pids=$(pgrep -x lockbench | while read -r p; do
      grep -qa -- "$dir/" "/proc/$p/cmdline" 2>/dev/null && grep -qa -- "run" "/proc/$p/cmdline" && echo "$p"
    done)
    if [[ -n $pids ]]; then
      kill -KILL $pids 2>/dev/null && k=$((k + 1))
      while pgrep -x lockbench | grep -qxF "$(head -n 1 <<<"$pids")"; do sleep 0.05; done
    fi
    sleep 0.1
  done
  echo "$k"
}

# 1. killed once: tried again, the job completes
submit_mbox "$T/infra.mbox"; s1=$SUB
agent_spawn once --once --lockstep off
killed=$(kill_rounds "$T/agent-once" 1)
wait "$AGENT_PID"
is "$killed" 1 "lockbench was killed once in a round"
log=$(cat "$T/agent-once.log")
like "$log" "round [0-9]+: [a-z]+ failed \(infrastructure failure, not a finding about the patch: lockbench \([a-z]+, round [0-9]+\) was killed by signal 9 \(Killed\); the OOM killer\? see dmesg" \
  "the agent says lockbench was killed from outside"
like "$log" "\); trying once more" "and tries the round once more"
is "$(sub_state "$s1")" done "the job completes"
is "$(results "$s1")" "$(sql "SELECT 2 * rounds_wanted FROM jobs WHERE submission_id = $s1")" \
  "every wanted round's 2 documents are stored, none twice"
is "$(sql "SELECT count(*) FROM lockups")" 0 "no lockup is recorded"

# 2. killed every time: the job fails, as the machine's failure
submit_mbox "$T/infra.mbox"; s2=$SUB
agent_spawn always --once --lockstep off
killed=$(kill_rounds "$T/agent-always" 2)
wait "$AGENT_PID"
is "$killed" 2 "lockbench was killed in the round and in its retry"
api GET "/api/v1/submissions/$s2"
is "$(jq -r .state <<<"$BODY")" failed "the submission fails"
like "$(jq -r .reason <<<"$BODY")" "infrastructure failure, not a finding about the patch: lockbench .* was killed by signal 9" \
  "its reason says the machine failed, not the patch"
is "$(jq -r '.verdict // "none"' <<<"$BODY")" none "there is no verdict"
is "$(sql "SELECT count(*) FROM lockups")" 0 "no lockup is recorded"

# 3. a lockstep side killed: the pair gave no result, the job's rounds run one side at a time
submit_mbox "$T/infra.mbox"; s3=$SUB
agent_spawn paired --once
killed=$(kill_rounds "$T/agent-paired" 1)
wait "$AGENT_PID"
is "$killed" 1 "a lockstep side was killed"
like "$(cat "$T/agent-paired.log")" "round 0: the duet's \(lockstep's, ABBA's\) [a-z]+ side gave no result \(ran, exit 137" \
  "the agent says the pair gave no result"
is "$(sub_state "$s3")" done "the job completes"
is "$(results "$s3")" "$(sql "SELECT 2 * rounds_wanted FROM jobs WHERE submission_id = $s3")" \
  "every wanted round's 2 documents are stored, none twice"
api GET "/api/v1/submissions/$s3/results"
is "$(jq '[.results[].document.runs[] | select(.workload == "uncontended") | .instrument.ns_per_pair // "timed"] | unique | join(",")' <<<"$BODY")" '"timed"' \
  "measured one side at a time: no run says lockstep"
done_testing
