#!/usr/bin/env bash
# make demo from a fresh clone, as a newcomer runs it: the whole service comes
# up on a private cluster, the example series gets its tables and reply, the
# dashboard answers, and make demo-stop leaves nothing running.
. "$(dirname "$0")/lib/tap.sh"
. "$(dirname "$0")/lib/server.sh"

git clone -q "$TOP" "$T/clone" || exit 1
# the npm packages are already fetched for this checkout: reuse them
[[ -d $TOP/web/node_modules ]] && cp -a "$TOP/web/node_modules" "$T/clone/web/" &&
  touch "$T/clone/web/node_modules/.package-lock.json"
port=$(free_port)
export DEMO_VAR="$T/var" DEMO_SUITE=smoke LOCKLAB_LISTEN="127.0.0.1:$port" MAKEFLAGS=-j2
unset LOCKLAB_DB
at_exit "make -C '$T/clone' demo-stop"
out=$(make -C "$T/clone" demo 2>&1); rc=$?
printf '%s\n' "$out" >"${TEST_OUTPUT:-$T}/demo.log"
is "$rc" 0 "make demo exits 0"
like "$out" "creating a private PostgreSQL cluster in $T/var/pg" "it makes a private cluster under var/"
like "$out" "submission [0-9]+: \[PATCH 0/2\] locking/kmutex: woken waiters stop spinning" "it submits the example series with its cover letter"
like "$out" "job [0-9]+ smoke: running, round [0-9]+/" "it shows progress while the job runs"
like "$out" "\| +(users|threads) +\| avg throughput +\| avg throughput +\|" "it prints the AIM7-style table"
like "$out" "\| threads \| baseline" "it prints the perf-style table"
like "$out" "In-Reply-To: <cover\.[0-9]+\.git\.dana@example\.org>" "the reply threads to the cover letter"
like "$out" "dashboard: http://127\.0\.0\.1:$port/" "it prints the dashboard URL"
curl -fsS "http://127.0.0.1:$port/" | grep -qi '<html'; ok $? "the dashboard answers"
curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null; ok $? "the server is healthy"

# a second run reuses the cluster and the running programs
out=$(make -C "$T/clone" demo 2>&1); rc=$?
is "$rc" 0 "make demo works a second time"
like "$out" "locklab-server already running" "it reuses the running server"
unlike "$out" "creating a private PostgreSQL cluster" "and the cluster"

make -C "$T/clone" demo-stop >"$T/stop.log" 2>&1; ok $? "make demo-stop exits 0"
sleep 1
pgrep -f "$T/clone/build/" >/dev/null; is $? 1 "no locklab process is left running"
pgrep -f "$T/var/pg" >/dev/null; is $? 1 "PostgreSQL is stopped"
curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1; is $? 7 "nothing answers on the demo's port"
done_testing
