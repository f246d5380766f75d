#!/usr/bin/env bash
# A real agent killed (-9) at each phase of a job -- applying the series
# (git am), building, running a round, posting a result: another agent
# (its own token and workdir) finishes the job, the killed one started again
# on its workdir posts what it spooled, no document is stored twice, and
# each round's documents (base, patch-1 and patched: a two-patch series)
# come from one lease.
# tests/310-agent-faults.t kills mid-round by result count; here the kill is aimed: the
# phase is seen as the agent's child process (tests/lib/killat.py, /proc
# every 5 ms), and for posting a loopback proxy (tests/lib/swallowproxy.py)
# lets the server store the first result and loses its answer, and the agent
# dies while it spools and retries that post.
. "$(dirname "$0")/lib/tap.sh"
. "$(dirname "$0")/lib/pg.sh"
. "$(dirname "$0")/lib/server.sh"
. "$(dirname "$0")/lib/agent.sh"

pg_start || { echo "Bail out! no postgres"; exit 1; }
server_start --lease-seconds 4 --min-rounds 3 --max-rounds 3 || { echo "Bail out! no server"; exit 1; }
direct=$URL
unpaired # kills at each phase and counts documents: no timing is judged
tree_init
make_series two "sed -i '1s|^|/* one */\\n|' lockbench/locks/kmutex.c" \
  "sed -i '1s|^|/* two */\\n|' lockbench/locks/kmutex.c"
jobof() { sql "SELECT id FROM jobs WHERE submission_id = $1"; }
results() { sql "SELECT count(*) FROM results WHERE job_id = $(jobof "$1")"; }

# phase NAME REGEX: submit, start agent NAME, kill it when REGEX runs below it,
# wait for its lease to expire, let another agent finish the job, start the
# killed one again, and check the job
phase() {
  local name=$1 re=$2 s j hit i
  submit_mbox "$T/two.mbox"; s=$SUB
  register_agent "{\"name\": \"$name\"}"
  local token=$AGENT_TOKEN
  if [[ $name == posting ]]; then
    local lossy
    URL=$direct answer_proxy lossy "$T/proxy.log" /results 1
    URL=$lossy agent_spawn "$name"
    for ((i = 0; i < 3000; i++)); do grep -q swallowed "$T/proxy.log" && break; sleep 0.1; done
    kill -9 "$AGENT_PID"
    hit=$(grep swallowed "$T/proxy.log")
  else
    agent_spawn "$name"
    hit=$(python3 "$TOP/tests/lib/killat.py" "$AGENT_PID" "$re" 300)
  fi
  wait "$AGENT_PID" 2>/dev/null
  j=$(jobof "$s")
  ok $([[ -n $hit ]]; echo $?) "$name: the agent was killed in its $name phase (${hit:0:90})"
  diag "$name: $(results "$s") results stored when it died; $(sql "SELECT state FROM jobs WHERE id = $j")"
  for ((i = 0; i < 100; i++)); do [[ $(sql "SELECT state FROM jobs WHERE id = $j") != running ]] && break; sleep 0.2; done
  # another agent (its own token and workdir) finishes the job
  register_agent "{\"name\": \"$name-other\"}"
  local other=$AGENT_ID
  agent_spawn "$name-other" --once
  wait "$AGENT_PID"; ok $? "$name: another agent takes the job up and ends its run"
  is "$(sql "SELECT count(*) > 0 FROM results WHERE job_id = $j AND agent_id = $other")" t \
    "$name: and the rounds still wanted were posted by it"
  # and the killed one, started again on its workdir, posts what it spooled (nothing twice)
  AGENT_TOKEN=$token agent_spawn "$name" --once
  wait "$AGENT_PID"; ok $? "$name: the killed agent started again on its workdir ends its run"
  is "$(sub_state "$s")" done "$name: the job is done" ||
    diag "job: $(sql "SELECT reason FROM jobs WHERE id = $j")" "$(tail -n 15 "$T/agent-$name.log")"
  is "$(results "$s")" "$(sql "SELECT 3 * rounds_wanted FROM jobs WHERE id = $j")" \
    "$name: every wanted round's 3 documents (base, patch-1, patched) are stored, none twice"
  is "$(sql "SELECT count(*) FROM (SELECT round FROM results WHERE job_id = $j GROUP BY round HAVING count(DISTINCT claim) > 1 OR count(DISTINCT variant) <> 3) x")" 0 \
    "$name: each round's base, patch-1 and patched came from one lease"
  diag "$name: claims $(sql "SELECT claims FROM jobs WHERE id = $j"), attempts $(sql "SELECT attempts FROM jobs WHERE id = $j")"
}

# PHASES=... runs some of them (when looking into one)
for p in ${PHASES:-apply build run posting}; do
  case $p in
  apply) phase apply '^git .* am -3 ' ;;
  build) phase build '^make -C .* build/lockbench' ;;
  run) phase run 'lockbench run --suite' ;;
  posting) phase posting '' ;;
  esac
done
is "$(sql "SELECT count(*) FROM (SELECT 1 FROM results GROUP BY job_id, variant, round HAVING count(*) > 1) d")" 0 \
  "no (job, variant, round) is stored twice anywhere"
is "$(find "$T"/agent-*/spool -maxdepth 1 -name '*.json' | wc -l)" 0 "no spool holds a document"
done_testing
