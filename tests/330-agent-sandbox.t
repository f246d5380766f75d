#!/usr/bin/env bash
# A hostile series in the sandbox: during its build (a Makefile change) and
# during its run (lockbench code, `list` included) it tries to reach the
# network, write outside its tree, read the agent's token, fork without
# bound, fill the disk and outlive its time.  Each is contained, each job
# fails with a reason, and the agent goes on to finish an honest job.
. "$(dirname "$0")/lib/tap.sh"
. "$(dirname "$0")/lib/pg.sh"
. "$(dirname "$0")/lib/server.sh"
. "$(dirname "$0")/lib/agent.sh"

skip_without_bwrap
pg_start || exit 1
server_start --min-rounds 2 --max-rounds 2 || exit 1
register_agent
tree_init

# a loopback port the probes try; the listener notes every connection
listen_loopback "$T/connections"
lport=$LPORT
mkdir "$T/agent-s" # the agent's workdir: a probe tries to write here
printf '%s\n' "$AGENT_TOKEN" >"$T/agent-token"
chmod 600 "$T/agent-token"

# the probe: one python script, run by make while it reads the Makefile
# (build) and by the patched lockbench (list and run)
cat >"$T/probe.py" <<PY
import os, signal, socket, sys
mode = sys.argv[1]
def say(*a):
    print("probe %s:" % mode, *a, file=sys.stderr, flush=True)
say("env:", " ".join("%s=%s" % kv for kv in sorted(os.environ.items())))
try:
    say("token file holds:", repr(open("$T/agent-token").read()))
except OSError as e:
    say("token file: unreadable:", e.strerror)
try:
    socket.create_connection(("127.0.0.1", $lport), timeout=3).close()
    say("net: connected")
except OSError as e:
    say("net: no connection:", e.strerror)
try:
    open("$T/agent-s/marker-" + mode, "w").write("escaped")
    say("write outside: done")
except OSError as e:
    say("write outside: refused:", e.strerror)
if mode == "list":
    sys.exit(0)
kids = []
for i in range(1000):  # a fork bomb, bounded so a missing limit cannot take the machine down
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        signal.pause()
        os._exit(0)
    kids.append(pid)
say("forks: %d" % len(kids))
for k in kids:
    os.kill(k, signal.SIGKILL)
    os.waitpid(k, 0)
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
for path in ("fill", "/tmp/fill"):
    n = 0
    try:
        with open(path, "wb") as f:
            for i in range(256):
                f.write(b"\0" * (1 << 20)); f.flush(); n += 1
        say("fill %s: wrote 256 MiB" % path)
    except OSError as e:
        say("fill %s: stopped at %d MiB: %s" % (path, n, e.strerror))
    try:
        os.unlink(path)
    except OSError:
        pass
# leave a process behind and sleep past the deadline
if os.fork() == 0:
    os.setsid()
    os.execlp("sleep", "sleep", "31337")
PY
# the run-time probe: lockbench's main runs the script first
python3 - "$T/probe.py" >"$T/probe.c" <<'PY'
import json, sys
print('#include <stdlib.h>\n#include <string.h>\n#include <sys/wait.h>\n#include <unistd.h>')
print('static const char probe_script[] = %s;' % json.dumps(open(sys.argv[1]).read()))
print('''void lb_probe(int argc, char **argv)
{
	if (argc < 2 || (strcmp(argv[1], "run") && strcmp(argv[1], "list")))
		return;
	pid_t p = fork();
	int st;
	if (p == 0) {
		execlp("python3", "python3", "-c", probe_script, argv[1], (char *)0);
		_exit(127);
	}
	waitpid(p, &st, 0);
	if (!strcmp(argv[1], "run"))
		exit(1);
}''')
PY
make_series buildprobe "cp '$T/probe.py' lockbench/probe.py && git add lockbench/probe.py && sed -i '1i \$(shell python3 lockbench/probe.py build >\\&2)\\n\$(error build probe finished)' Makefile"
make_series runprobe "cp '$T/probe.c' lockbench/src/probe.c && git add lockbench/src/probe.c && perl -0pi -e 's/(int main\\(int argc, char \\*\\*argv\\)\\n\\{\\n)/void lb_probe(int, char **);\\n\$1\\tlb_probe(argc, argv);\\n/' lockbench/src/main.c"
make_series slowbuild "sed -i '1i \$(shell setsid sleep 31338 >/dev/null 2>\\&1 \\&)\\n\$(shell sleep 100000)' Makefile"
make_series hangrun "perl -0pi -e 's/(\\nint cmd_run\\(int argc, char \\*\\*argv\\)\\n\\{\\n)/\$1\\tfor (;;)\\n\\t\\tpause();\\n/' lockbench/src/cmd_run.c"
make_series honest "sed -i '1s|^|/* a comment */\\n|' lockbench/locks/spin.c"
grep -q 'lb_probe(argc, argv)' "$T/runprobe.mbox"; ok $? "the series are made"

submit_mbox "$T/buildprobe.mbox"; sb=$SUB
submit_mbox "$T/runprobe.mbox"; sr=$SUB
submit_mbox "$T/slowbuild.mbox"; ss=$SUB
submit_mbox "$T/hangrun.mbox"; shr=$SUB
submit_mbox "$T/honest.mbox"; sh=$SUB
AGENT_TOKEN=unused-see-token-file
"$BIN/locklab-agent" --server "$URL" --token-file "$T/agent-token" --workdir "$T/agent-s" \
  --native-tree "$T/tree" --poll 1 --build-timeout 120 --run-timeout 15 \
  --sandbox-procs 64 --sandbox-fsize 32 --sandbox-tmp 16 >>"$T/agent-s.log" 2>&1 &
AGENT_PID=$!
at_exit "kill -9 $AGENT_PID 2>/dev/null"
token=$(cat "$T/agent-token")

reason() {
  api GET "/api/v1/submissions/$1"
  jq -r '.reason // ([.jobs[]?.reason] | join(" "))' <<<"$BODY"
}
job_dir() { echo "$T/agent-s/jobs/$(sql "SELECT id FROM jobs WHERE submission_id = $1")"; }

# 1. the build
wait_state "$sb" failed done 300
is "$(sub_state "$sb")" failed "the probing build fails"
r=$(reason "$sb")
like "$r" 'build of patched failed' "with the build's reason"
blog=$(cat "$(job_dir "$sb")"/build-patched.log)
like "$blog" 'probe build: net: no connection' "build: the network is not there"
like "$blog" 'probe build: write outside: refused' "build: the agent's workdir cannot be written"
[[ ! -e $T/agent-s/marker-build ]]; ok $? "build: no marker in the agent's workdir"
like "$blog" "probe build: token file(: unreadable| holds: '')" "build: the token file reads empty or is not there"
unlike "$blog$r" "$token" "build: the token appears nowhere in the log or the reason"
unlike "$blog" 'LOCKLAB|TOKEN' "build: no LOCKLAB variable in its environment"
f=$(grep -oE 'probe build: forks: [0-9]+' <<<"$blog" | grep -oE '[0-9]+$')
[[ -n $f && $f -lt 64 ]]; ok $? "build: the fork bomb stopped at $f processes (limit 64)"
like "$blog" 'probe build: fill fill: stopped at (3[0-2]|[12][0-9]) MiB: File too large' "build: a file stops at the 32 MiB limit"
like "$blog" 'probe build: fill /tmp/fill: stopped at (1[0-6]|[0-9]) MiB: No space left' "build: /tmp is full at 16 MiB"

# 2. the run (and `lockbench list` before it)
wait_state "$sr" failed done 300
is "$(sub_state "$sr")" failed "the probing lockbench fails"
r=$(reason "$sr")
like "$r" 'lockbench failed' "with the run's reason"
rlog=$(cat "$(job_dir "$sr")"/run-*.log)
like "$rlog" 'probe run: net: no connection' "run: the network is not there"
like "$rlog" 'probe run: write outside: refused' "run: the agent's workdir cannot be written"
[[ ! -e $T/agent-s/marker-run ]]; ok $? "run: no marker in the agent's workdir"
like "$rlog" "probe run: token file(: unreadable| holds: '')" "run: the token file reads empty or is not there"
unlike "$rlog$r" "$token" "run: the token appears nowhere in the log or the reason"
f=$(grep -oE 'probe run: forks: [0-9]+' <<<"$rlog" | head -1 | grep -oE '[0-9]+$')
[[ -n $f && $f -lt 64 ]]; ok $? "run: the fork bomb stopped at $f processes (limit 64)"
like "$rlog" 'probe run: fill fill: stopped at (3[0-2]|[12][0-9]) MiB: File too large' "run: a file stops at the 32 MiB limit"
like "$rlog" 'probe run: fill /tmp/fill: stopped at (1[0-6]|[0-9]) MiB: No space left' "run: /tmp is full at 16 MiB"

# 3. a build that never ends, with a process it tried to leave behind; while
# it runs, the job says what it does (the agent's heartbeat carries it)
seen=
for ((i = 0; i < 300; i++)); do
  api GET "/api/v1/submissions/$ss"
  seen=$(jq -r '.jobs[0].activity // empty' <<<"$BODY")
  [[ $seen == "building patched"* || $(jq -r .state <<<"$BODY") == failed ]] && break
  sleep 1
done
like "$seen" '^building patched, [0-9]+ min [0-9]{2} s$' "while the build runs, its job says so"
wait_state "$ss" failed done 300
is "$(sub_state "$ss")" failed "the endless build fails"
like "$(reason "$ss")" 'build of patched did not finish within 120 s' "at the build deadline"

# 4. a run that never ends: killed at the deadline, with the stacks the agent took
wait_state "$shr" done failed 300
api GET "/api/v1/submissions/$shr"
is "$(jq -r .verdict <<<"$BODY")" lockup "the endless run is a lockup"
like "$(jq -r '[.lockups[]?.stacks // empty] | join("\n")' <<<"$BODY")" 'pause' "with gdb's stacks of the process stuck in pause()"

# 5. the honest job after them
wait_state "$sh" done failed 600
is "$(sub_state "$sh")" done "the agent goes on and finishes an honest job"
kill -0 "$AGENT_PID"; ok $? "the agent is still running"
is "$(ls "$T/agent-s" | grep -c marker)" 0 "no probe wrote into the agent's workdir"
is "$(cat "$T/connections")" "" "the loopback listener saw no connection"
pgrep -f 'sleep 3133[78]' >/dev/null; is $? 1 "nothing the probes left behind still runs"
done_testing
