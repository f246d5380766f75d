#!/usr/bin/env bash
# An agent whose wall clock jumps.  The system clock cannot be changed in a
# test, so the agent alone runs under libfaketime (Debian's faketime), its
# CLOCK_REALTIME read from a file the test rewrites mid-job: 3 days ahead,
# then 2 hours behind the real time; CLOCK_MONOTONIC is left alone, as an
# NTP step leaves it.  Leases are the server's clock's, and the agent times
# its heartbeats and deadlines on the monotonic clock, so the job keeps its
# one lease: it finishes with no second claim and no expired attempt, while a
# second agent with a true clock polls the same queue and never gets it.
. "$(dirname "$0")/lib/tap.sh"
. "$(dirname "$0")/lib/pg.sh"
. "$(dirname "$0")/lib/server.sh"
. "$(dirname "$0")/lib/agent.sh"

lib=$(ls /usr/lib/*/faketime/libfaketimeMT.so.1 2>/dev/null | head -n 1)
if [[ -z $lib ]]; then
  echo "1..0 # SKIP libfaketime is not installed (scripts/deps.sh: faketime)"
  exit 0
fi
pg_start || { echo "Bail out! no postgres"; exit 1; }
# a short lease: a heartbeat timed by a clock that jumped would lose it
server_start --lease-seconds 4 --min-rounds 4 --max-rounds 4 || { echo "Bail out! no server"; exit 1; }
tree_init
make_series c1 "sed -i '1s|^|/* one */\\n|' lockbench/locks/kmutex.c"
submit_mbox "$T/c1.mbox"; s=$SUB
j=$(sql "SELECT id FROM jobs WHERE submission_id = $s")
results() { sql "SELECT count(*) FROM results WHERE job_id = $j"; }
echo "+0" >"$T/clock"
register_agent '{"name": "jumpy"}'
LD_PRELOAD=$lib FAKETIME_TIMESTAMP_FILE=$T/clock FAKETIME_NO_CACHE=1 FAKETIME_DONT_FAKE_MONOTONIC=1 \
  agent_spawn jumpy --once
jumpy=$AGENT_PID
for ((i = 0; i < 600; i++)); do grep -q "job=$j msg=\"claimed" "$T/agent-jumpy.log" && break; sleep 0.2; done
register_agent '{"name": "true-clock"}'
agent_spawn true-clock
for ((i = 0; i < 1500; i++)); do [[ $(results) -ge 1 ]] && break; sleep 0.2; done
echo "+3d" >"$T/clock"
diag "the agent's clock jumps 3 days ahead after $(results) results"
for ((i = 0; i < 1500; i++)); do [[ $(results) -ge 4 ]] && break; sleep 0.2; done
echo "-2h" >"$T/clock"
diag "and 2 hours behind the real time after $(results) results"
wait "$jumpy"; ok $? "the agent with the jumping clock ends its run"
like "$(cat "$T/agent-jumpy.log")" "$(date -u -d '+3 days' +%Y-%m-%d)T" "its log shows the clock 3 days ahead (the jump took effect)"
last=$(grep -o '^[0-9TZ:-]*' "$T/agent-jumpy.log" | tail -n 1)
behind=$(($(date -u +%s) - $(date -u -d "$last" +%s)))
[[ $behind -gt 3600 && $behind -lt 10800 ]]
ok $? "its last log line is dated about 2 hours behind (by ${behind} s: the jump back took effect)"
is "$(sub_state "$s")" done "the job is done"
is "$(sql "SELECT claims || ',' || attempts FROM jobs WHERE id = $j")" 1,0 \
  "under its one lease: no second claim, no lease expired on the way"
is "$(sql "SELECT count(DISTINCT agent_id) FROM results WHERE job_id = $j")" 1 \
  "every result came from one agent (the true-clock agent polling meanwhile never ran it)"
is "$(results)" "$(sql "SELECT 2 * rounds_wanted FROM jobs WHERE id = $j")" "every wanted round's 2 documents, none twice"
unlike "$(cat "$T/agent-jumpy.log")" "lease lost|job lost" "the agent never thought its lease lost"
done_testing
