#!/usr/bin/env bash
# Faults under load, with simulated agents (bench/loadgen.py: claim,
# heartbeat, base and patched results with idempotency keys, sent again
# after a failed connection or a 503 as an agent's spool does) and dashboard
# readers: the server killed (-9) and restarted while they post, and
# PostgreSQL restarted under them.  Nothing is lost, nothing is counted
# twice, each round's pair comes from one agent, and the server recovers
# from the database restart by itself (503 with a reason and Retry-After in
# between).  Real agents killed mid-job are tests/310-agent-faults.t.
source "$(dirname "$0")/lib/tap.sh"
source "$TOP/tests/lib/pg.sh"
source "$TOP/tests/lib/server.sh"

pg_start || { echo "Bail out! no postgres"; exit 1; }
port=$(free_port)
URL="http://127.0.0.1:$port"
srv() {
  (cd "$TOP" && exec "$BIN/locklab-server" --listen "127.0.0.1:$port" --admin-token "$ADMIN_TOKEN" \
    --sql-dir "$TOP/sql" --web-root "$TOP/web" --min-rounds 5 --max-rounds 5 --lease-seconds 5) \
    >>"$T/server.log" 2>&1 &
  SERVER_PID=$!
  at_exit "kill $SERVER_PID 2>/dev/null"
  server_wait "$URL" "$SERVER_PID" "$T/server.log"
}
srv || { echo "Bail out! no server"; exit 1; }

: >"$T/tokens"
for i in $(seq 8); do
  register_agent "{\"name\": \"sim-$i\"}"
  echo "$AGENT_TOKEN" >>"$T/tokens"
done
make_series "$T/s" >/dev/null || { echo "Bail out! git format-patch failed"; exit 1; }
jq -Rs '{mbox: .}' "$T/s/series.mbox" >"$T/req.json"

# queue N: N submissions of one job of 5 rounds each; their ids in $T/subs
queue() {
  local i
  : >"$T/subs"
  for ((i = 0; i < $1; i++)); do
    api POST /api/v1/submissions -d @"$T/req.json"
    jq -r .id <<<"$BODY" >>"$T/subs"
  done
}
# load: the simulated agents and 2 readers until the queue is empty (60 s at most)
load() {
  LOADGEN_PERSIST=1 LOADGEN_EXIT_IDLE=1 python3 "$TOP/bench/loadgen.py" 127.0.0.1 "$port" \
    "$T/tokens" "$T/subs" 60 2 >"$T/load.json" &
  LOAD_PID=$!
}
# wait_results N: until N results are stored (20 s at most)
wait_results() {
  local i
  for ((i = 0; i < 200; i++)); do
    [[ $(sql "SELECT count(*) FROM results") -ge $1 ]] && return 0
    sleep 0.1
  done
  return 1
}
# leftovers: a claim the server committed but whose answer the kill lost
# leaves its job leased to an agent that never heard of it; the lease (5 s)
# expires and the agents, started again, finish it.  Sets LEFT (such jobs).
leftovers() {
  local i
  LEFT=$(sql "SELECT count(*) FROM jobs WHERE state <> 'done'")
  for ((i = 0; i < 60; i++)); do
    [[ $(sql "SELECT count(*) FROM jobs WHERE state <> 'done'") -eq 0 ]] && return 0
    if [[ $(sql "SELECT count(*) FROM jobs WHERE state = 'queued'") -gt 0 ]]; then
      cp "$T/load.json" "$T/load-1.json"
      load
      wait "$LOAD_PID"
      # what the first run met stays in the record
      jq -s '.[0] * {errors: (.[0].errors + .[1].errors)}' "$T/load-1.json" "$T/load.json" >"$T/l" && mv "$T/l" "$T/load.json"
    fi
    sleep 0.5
  done
}
# check NAME: every job done, 10 documents each, no (job, variant, round)
# twice, each round's pair from one agent, and no unexpected status
check() {
  is "$(sql "SELECT string_agg(DISTINCT state, ',') FROM jobs")" done "$1: every job is done"
  is "$(sql "SELECT count(*) FROM jobs j WHERE (SELECT count(*) FROM results r WHERE r.job_id = j.id) <> 2 * j.rounds_wanted")" 0 \
    "$1: every job has both documents of each wanted round"
  is "$(sql "SELECT count(*) FROM (SELECT 1 FROM results GROUP BY job_id, variant, round HAVING count(*) > 1) d")" 0 \
    "$1: no round is stored twice"
  is "$(sql "SELECT count(*) FROM (SELECT 1 FROM results GROUP BY job_id, round HAVING count(DISTINCT agent_id) > 1) d")" 0 \
    "$1: each round's pair comes from one agent"
  is "$(jq -c .errors "$T/load.json")" "{}" "$1: no request failed for good (retried ones: $(jq -c .expected "$T/load.json"))"
}

# --- 1. the server killed and restarted while agents post and readers read
# 100 jobs, 1000 documents: the kill must land mid-load, and with 300 a CI run
# here saw all of them stored before its poll (psql every 0.1 s, slow under
# load) saw the first 60
queue 100
load
wait_results 60 || diag "fewer than 60 results before the kill"
before=$(sql "SELECT count(*) FROM results")
kill -9 "$SERVER_PID"
wait "$SERVER_PID" 2>/dev/null
sleep 1
srv || { echo "Bail out! the server did not come back"; exit 1; }
wait "$LOAD_PID"
diag "killed with $before results stored; $(jq -c '{results_stored, expected}' "$T/load.json")"
leftovers
diag "jobs left leased by a lost claim answer, finished after their lease: $LEFT"
ok "$([[ $before -lt 1000 ]]; echo $?)" "the kill came mid-load ($before of 1000 documents stored)"
check "server killed"

# --- 2. PostgreSQL restarted under load: 503 with a reason meanwhile, recovered without a restart
queue 30
load
wait_results 360 || diag "fewer than 60 new results before the database went down"
pg_down fast
api GET /healthz -D "$T/h"
is "$CODE:$(jq -r .database <<<"$BODY")" "503:unavailable" "with the database down /healthz is 503 and says why"
api POST /api/v1/jobs/claim -H "Authorization: Bearer $(head -n 1 "$T/tokens")" -D "$T/h2"
is "$CODE:$(jq -r .error <<<"$BODY")" "503:database" "an agent's request gets 503 \"database\""
like "$(jq -r .detail <<<"$BODY")" "unavailable" "... with a reason"
like "$(cat "$T/h2")" '^Retry-After: ' "... and Retry-After"
sleep 2
pg_up || { echo "Bail out! postgres did not come back"; exit 1; }
for ((i = 0; i < 100; i++)); do
  curl -fsS "$URL/healthz" >/dev/null 2>&1 && break
  sleep 0.1
done
ok "$([[ $i -lt 100 ]]; echo $?)" "the same server answers /healthz again ($((i / 10)) s after the database came back)"
ok "$(kill -0 "$SERVER_PID"; echo $?)" "... without a restart"
wait "$LOAD_PID"
diag "$(jq -c '{results_stored, expected, sample_503}' "$T/load.json")"
leftovers
diag "jobs left leased by a lost claim answer, finished after their lease: $LEFT"
check "database restarted"

done_testing
