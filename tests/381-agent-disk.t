#!/usr/bin/env bash
# The agent's disk.  Its workdir is a small tmpfs (256 MiB, mounted here;
# root only): full before a claim, the agent does not claim and says why,
# and claims once there is room; full in the middle of a job, the job is
# handed back (not failed: the patch is not to blame) and finished once
# there is room; its spool read-only while the server is away, the agent
# says it cannot spool, holds the document and posts it when the server is
# back -- nothing lost, nothing stored twice.
. "$(dirname "$0")/lib/tap.sh"
. "$(dirname "$0")/lib/pg.sh"
. "$(dirname "$0")/lib/server.sh"
. "$(dirname "$0")/lib/agent.sh"

if [[ $(id -u) != 0 ]]; then
  echo "1..0 # SKIP mounting a small tmpfs needs root"
  exit 0
fi
pg_start || { echo "Bail out! no postgres"; exit 1; }
port=$(free_port)
srv() { server_on "$port" --lease-seconds 60 --min-rounds 3 --max-rounds 3; }
srv || { echo "Bail out! no server"; exit 1; }
W=$T/agent-disk
mkdir -p "$W"
mount -t tmpfs -o size=256m tmpfs "$W" || { echo "Bail out! cannot mount a tmpfs"; exit 1; }
# unmounted when the test ends, after the agents (registered later) are killed
at_exit "umount -l '$W/spool' 2>/dev/null; umount -l '$W'"
fill() { dd if=/dev/zero of="$W/filler" bs=1M status=none 2>/dev/null; sync; }
room() { rm -f "$W/filler"; }
tree_init
make_series c1 "sed -i '1s|^|/* one */\\n|' lockbench/locks/kmutex.c"
jobof() { sql "SELECT id FROM jobs WHERE submission_id = $1"; }
results() { sql "SELECT count(*) FROM results WHERE job_id = $(jobof "$1")"; }
# 2 documents per wanted round (more rounds when a change found is confirmed)
wanted2() { sql "SELECT 2 * rounds_wanted FROM jobs WHERE submission_id = $1"; }
# wait_log FILE REGEX SECONDS
wait_log() {
  local i
  for ((i = 0; i < $3 * 10; i++)); do grep -Eq "$2" "$1" && return 0; sleep 0.1; done
  return 1
}
register_agent '{"name": "disk"}'

# 1. full before the claim
submit_mbox "$T/c1.mbox"; s1=$SUB
mkdir -p "$W/spool" "$W/jobs" "$W/mirrors"
fill
agent_spawn disk
wait_log "$T/agent-disk.log" 'not claiming: .* No space left on device' 20
ok $? "with its disk full the agent does not claim, and says why"
like "$(grep -m1 'not claiming' "$T/agent-disk.log")" "$W/(spool|jobs) cannot be written" "naming the folder"
is "$(sql "SELECT state || ',' || claims FROM jobs WHERE submission_id = $s1")" queued,0 "the job stays in the queue, unclaimed"
room
wait_state "$s1" done 300; ok $? "once there is room the agent claims the job and finishes it"
is "$(results "$s1")" "$(wanted2 "$s1")" "every round stored once"

# 2. full in the middle of a job
submit_mbox "$T/c1.mbox"; s2=$SUB
j2=$(jobof "$s2")
wait_log "$T/agent-disk.log" "job=$j2 msg=\"claimed" 60; ok $? "the agent claims the next job"
fill
wait_log "$T/agent-disk.log" "job=$j2 .*cannot be written: No space left on device" 300
ok $? "the disk fills in the middle of the job: the agent says why the step failed"
grep "job=$j2 .*cannot be written" "$T/agent-disk.log" | head -n 1 | cut -c 1-300 | sed 's/^/# /'
wait_log "$T/agent-disk.log" "handing the job back" 30; ok $? "and hands the job back"
wait_log "$T/agent-disk.log" "job=$j2 msg=\"job handed back" 30; ok $? "the server took it back"
is "$(sql "SELECT state || ',' || attempts FROM jobs WHERE id = $j2"),$(sub_state "$s2")" queued,0,running \
  "the job is queued again with no attempt counted, and the submission has not failed"
sleep 3
is "$(sql "SELECT claims FROM jobs WHERE id = $j2")" 1 "while the disk is full the agent does not claim it again"
room
wait_state "$s2" done 300; ok $? "once there is room the job is finished"
is "$(results "$s2")" "$(wanted2 "$s2")" "every round stored once"
kill -TERM "$AGENT_PID"; wait "$AGENT_PID" 2>/dev/null

# 3. the spool read-only while the server is away
submit_mbox "$T/c1.mbox"; s3=$SUB
j3=$(jobof "$s3")
agent_spawn disk --once
wait_log "$T/agent-disk.log" "job=$j3 msg=\"claimed" 60
mount -t tmpfs -o ro,size=1m tmpfs "$W/spool"; ok $? "the spool is made read-only in the middle of the job"
for ((i = 0; i < 1500; i++)); do [[ $(results "$s3") -ge 2 ]] && break; sleep 0.2; done
kill "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null
wait_log "$T/agent-disk.log" "job=$j3 msg=\"cannot spool .*Read-only file system" 300
ok $? "with the server away the agent cannot spool the next result and says why"
stored=$(results "$s3")
sleep 2
srv; ok $? "the server comes back"
wait "$AGENT_PID"; ok $? "the agent finishes its run"
umount "$W/spool"
is "$(sub_state "$s3")" done "the job is done"
is "$(results "$s3")" "$(wanted2 "$s3")" "the result held while the spool could not take it was posted: every round stored once ($stored before the server came back)"
is "$(sql "SELECT count(*) FROM (SELECT 1 FROM results GROUP BY job_id, variant, round HAVING count(*) > 1) d")" 0 \
  "no (job, variant, round) is stored twice"
done_testing
