# tests/lib/server.sh - a locklab-server for one test; source after tap.sh
# and pg.sh (pg_start first: the server uses $LOCKLAB_DB).
#   server_start [FLAGS...]   start $BIN/locklab-server on a free port with
#                             --admin-token $ADMIN_TOKEN, wait for /healthz;
#                             sets URL, SERVER_PID, SERVER_LOG ($T/server-N.log);
#                             stopped when the test ends
#   server_spawn / server_wait  the same in two steps (servers started together)
#   server_setup [FLAGS...]   how most server tests start: pg_start, server_start
#                             FLAGS, make_series $T/s; bails out when one fails
#   server_on PORT [FLAGS...]  the same on a given port (stopped and started again)
#   api METHOD PATH [curl args]  sets CODE and BODY
#   register_agent [JSON]     sets AGENT_ID, AGENT_TOKEN
#   submit_mbox FILE          sets SUB;  claim TOKEN  sets JOB (id or null)
#   result_doc / post_round   lockbench-result/1 documents with chosen figures
#   make_series DIR, file_server DIR   a git format-patch series; an http server
#   fixture NAME DIR [BIND]   tests/lib/fixture.py (redirects, Content-Encoding,
#                             a log line per accepted connection)
ADMIN_TOKEN=${ADMIN_TOKEN:-test-admin-token}
_srv_n=0

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# server_spawn [FLAGS...]: start a server without waiting; sets URL,
# SERVER_PID and SERVER_LOG
server_spawn() {
  local port
  _srv_n=$((_srv_n + 1))
  port=$(free_port)
  SERVER_LOG="$T/server-$_srv_n.log"
  (cd "$TOP" && exec "$BIN/locklab-server" --listen "127.0.0.1:$port" \
    --admin-token "$ADMIN_TOKEN" --web-root "$TOP/web" --sql-dir "$TOP/sql" "$@") \
    >"$SERVER_LOG" 2>&1 &
  SERVER_PID=$!
  at_exit "kill $SERVER_PID; wait $SERVER_PID"
  URL="http://127.0.0.1:$port"
}

# server_wait URL PID LOG: wait up to 10 s for /healthz; 0 or 1
server_wait() {
  local i
  for ((i = 0; i < 100; i++)); do
    if curl -fsS "$1/healthz" >/dev/null 2>&1; then return 0; fi
    if ! kill -0 "$2" 2>/dev/null; then break; fi
    sleep 0.1
  done
  diag "server did not come up:" "$(tail -n 20 "$3")"
  return 1
}

server_start() {
  server_spawn "$@"
  server_wait "$URL" "$SERVER_PID" "$SERVER_LOG"
}

# server_setup [FLAGS...]: a private PostgreSQL, a server with FLAGS and a
# series in $T/s (make_series); the test bails out when one of them fails
server_setup() {
  pg_start || bail_out "no postgres"
  server_start "$@" || bail_out "no server"
  make_series "$T/s" || bail_out "git format-patch failed"
}

# server_on PORT [FLAGS...]: start a server on a given port (to start it again
# on the same one after it was stopped) and wait for it; log in $T/server.log
server_on() {
  local port=$1
  shift
  (cd "$TOP" && exec "$BIN/locklab-server" --listen "127.0.0.1:$port" --admin-token "$ADMIN_TOKEN" \
    --sql-dir "$TOP/sql" --web-root "$TOP/web" "$@") >>"$T/server.log" 2>&1 &
  SERVER_PID=$!
  at_exit "kill $SERVER_PID 2>/dev/null"
  URL="http://127.0.0.1:$port"
  server_wait "$URL" "$SERVER_PID" "$T/server.log"
}

# api METHOD PATH [curl args...]: sets CODE (HTTP status) and BODY
api() {
  local method=$1 path=$2
  shift 2
  CODE=$(curl -sS -o "$T/.body" -w '%{http_code}' -X "$method" "$@" "$URL$path")
  BODY=$(cat "$T/.body")
}

# register_agent [JSON]: sets AGENT_ID and AGENT_TOKEN
register_agent() {
  local body data=${1:-}
  [[ -n $data ]] || data='{}'
  body=$(curl -sS -X POST -H "Authorization: Bearer $ADMIN_TOKEN" \
    -H 'Content-Type: application/json' -d "$data" "$URL/api/v1/agents/register")
  AGENT_ID=$(jq -r .id <<<"$body")
  AGENT_TOKEN=$(jq -r .token <<<"$body")
}

# result_doc VARIANT ROUND SCALE [SUITE [NOISE [LOCKUP]]]: a
# lockbench-result/1 document (docs/result-schema.md) for workload hot, lock
# pthread at 1, 2 and 4 threads, five samples per point around 1e6/threads
# ops/s times SCALE, spread by +-NOISE (default 0.002); LOCKUP=1 makes the
# 4-thread run lock up instead.
result_doc() {
  python3 - "$@" <<'PY'
import json, random, sys
variant, rnd, scale = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
suite = sys.argv[4] if len(sys.argv) > 4 else "quick"
noise = float(sys.argv[5]) if len(sys.argv) > 5 else 0.002
lockup = len(sys.argv) > 6 and sys.argv[6] == "1"
rng = random.Random("%s-%d" % (variant, rnd))
runs = []
for threads in (1, 2, 4):
    if lockup and threads == 4:
        runs.append({"workload": "hot", "lock": "pthread", "params": {"threads": threads},
                     "metrics": {}, "units": {}, "better": {}, "samples": {}, "per_thread": {},
                     "lockup": {"kind": "stall", "message": "no progress for 2.0 s",
                                "stacks": "thread 3: futex_wait"}})
        continue
    base = 1000000.0 / threads
    s = [round(base * scale * (1 + rng.uniform(-noise, noise)), 3) for _ in range(5)]
    runs.append({"workload": "hot", "lock": "pthread", "params": {"threads": threads},
                 "metrics": {"ops_per_sec": sum(s) / len(s)},
                 "units": {"ops_per_sec": "ops/s"}, "better": {"ops_per_sec": "higher"},
                 "samples": {"ops_per_sec": s}, "per_thread": {}, "lockup": None})
print(json.dumps({"schema": "lockbench-result/1", "suite": suite, "variant": variant,
                  "round": rnd, "started": "2026-11-29T19:40:00Z",
                  "machine": {"hostname": "lab1", "cpus": 2, "model": "Test CPU",
                              "kernel": "6.1.0"}, "runs": runs}))
PY
}

# post_round JOB TOKEN VARIANT ROUND SCALE [NOISE [LOCKUP]]: post one
# document with key job-JOB-VARIANT-ROUND; sets CODE and BODY
post_round() {
  result_doc "$3" "$4" "$5" quick "${6:-0.002}" "${7:-0}" >"$T/round.json"
  api POST "/api/v1/jobs/$1/results" -H "Authorization: Bearer $2" \
    -H "Idempotency-Key: job-$1-$3-$4" -d @"$T/round.json"
}

# submit_mbox FILE: submit an mbox; sets SUB (its id)
submit_mbox() {
  jq -Rs '{mbox: .}' "$1" >"$T/req.json"
  api POST /api/v1/submissions -d @"$T/req.json"
  SUB=$(jq -r .id <<<"$BODY")
}

# claim TOKEN: claim a job; sets JOB (its id or null)
claim() {
  api POST /api/v1/jobs/claim -H "Authorization: Bearer $1"
  JOB=$(jq -r '.job.id' <<<"$BODY")
}

# make_series DIR: a scratch git repo with a two-patch v2 series and a cover
# letter made by git format-patch --thread under DIR/out, DIR/series.mbox,
# and DIR/single.patch (the last commit alone, "[PATCH]")
make_series() {
  local d=$1
  mkdir -p "$d"
  (
    cd "$d" && git init -q repo && cd repo &&
      git config user.email waiman@example.org && git config user.name 'Waiman Løng' &&
      printf 'int owner;\n' >mutex.c && git add mutex.c && git commit -qm 'mutex: start' &&
      printf 'int handoff;\n' >>mutex.c &&
      git commit -qam 'locking/mutex: add handoff' -m 'Hand the lock to the top waiter.' &&
      printf 'int pickup;\n' >>mutex.c &&
      git commit -qam 'locking/mutex: add pickup' -m 'From the waiter side.' &&
      git format-patch -q --cover-letter --thread -v2 -o ../out HEAD~2 &&
      git format-patch -q -1 --thread --stdout HEAD >../single.patch
  ) || return 1
  cat "$d"/out/*.patch >"$d/series.mbox"
}

# file_server DIR: serve DIR over http on a free port; sets FILES_URL and FILES_PORT
# (a server fetching from it needs --fetch-allow 127.0.0.1:$FILES_PORT)
file_server() {
  local port pid i
  port=$(free_port)
  python3 -m http.server --bind 127.0.0.1 --directory "$1" "$port" >"$T/http.log" 2>&1 &
  pid=$!
  at_exit "kill $pid"
  FILES_PORT=$port
  FILES_URL="http://127.0.0.1:$port"
  for ((i = 0; i < 50; i++)); do
    curl -fsS -o /dev/null "$FILES_URL/" 2>/dev/null && return 0
    sleep 0.1
  done
  return 1
}

# fixture NAME DIR [BIND]: tests/lib/fixture.py serving DIR on a free port of
# BIND (default 127.0.0.1); sets NAME_PORT, NAME_URL and NAME_LOG, the file
# that gets one "connection from ..." line per TCP connection accepted
fixture() {
  local name=$1 dir=$2 bind=${3:-127.0.0.1} pid i host
  rm -f "$T/$name.port"
  python3 "$TOP/tests/lib/fixture.py" "$T/$name.port" "$T/$name.log" "$dir" "$bind" \
    >"$T/$name.err" 2>&1 &
  pid=$!
  at_exit "kill $pid"
  for ((i = 0; i < 100; i++)); do
    [[ -s $T/$name.port ]] && break
    sleep 0.05
  done
  [[ -s $T/$name.port ]] || { diag "fixture $name did not start:" "$(cat "$T/$name.err")"; return 1; }
  host=$bind
  [[ $bind == *:* ]] && host="[$bind]"
  printf -v "${name}_PORT" '%s' "$(cat "$T/$name.port")"
  printf -v "${name}_URL" 'http://%s:%s' "$host" "$(cat "$T/$name.port")"
  printf -v "${name}_LOG" '%s' "$T/$name.log"
}
