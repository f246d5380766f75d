#!/usr/bin/env bash
# make demo: the whole service on this machine.  A private PostgreSQL cluster
# under var/ (unless LOCKLAB_DB is set), locklab-server on 127.0.0.1, one
# local agent, and the example series in examples/ submitted, followed and
# reported.  The server and the agent keep running (the dashboard stays up)
# until `make demo-stop`.  Running it twice reuses what is there.
#
#   DEMO_SUITE   suite the example runs [quick]
#   DEMO_VAR     state folder [var]
#   DEMO_VERBOSE 1: print the whole reports and the reply too [0]
#   LOCKLAB_LISTEN  [127.0.0.1:8080]; LOCKLAB_DB: use that PostgreSQL instead
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
BUILD=${BUILD:-build}
VAR=${DEMO_VAR:-var}
mkdir -p "$VAR"
VAR=$(cd "$VAR" && pwd)
SUITE=${DEMO_SUITE:-quick}
LISTEN=${LOCKLAB_LISTEN:-127.0.0.1:8080}
URL="http://$LISTEN"
PG_BIN=/usr/lib/postgresql/15/bin
say() { printf '\033[1m== %s\033[0m\n' "$*"; }
die() { echo "demo: $*" >&2; exit 1; }
VERBOSE=${DEMO_VERBOSE:-0}
# as postgres from / : postgres's programs go back to the folder they were
# started from, and root's may be one postgres cannot enter
as_pg() { if [[ $(id -u) -eq 0 ]]; then (cd / && runuser -u postgres -- "$@"); else "$@"; fi; }
alive() { [[ -f $1 ]] && kill -0 "$(cat "$1")" 2>/dev/null; }

# 1. PostgreSQL: the one given, or a private cluster (unix socket only).  As
# root the cluster runs as `postgres`, who must be able to enter its folder:
# in a clone under a private (0700) home it goes to /var/lib/locklab-demo
# instead (scripts/demo-pgdir.sh decides, and var/pgdir remembers it).
if [[ -z ${LOCKLAB_DB:-} ]]; then
  PGDIR=$(scripts/demo-pgdir.sh "$VAR") || die "no folder for the PostgreSQL cluster"
  if [[ ! -d $PGDIR/data ]]; then
    say "creating a private PostgreSQL cluster in $PGDIR"
    [[ $PGDIR == "$VAR/pg" ]] || echo "  (the postgres user cannot enter $VAR: a folder above it is private)"
    mkdir -p "$PGDIR"
    [[ $(id -u) -eq 0 ]] && chown postgres: "$PGDIR"
    as_pg "$PG_BIN/initdb" -D "$PGDIR/data" --auth=trust --username=postgres --encoding=UTF8 \
      --locale=C.UTF-8 >"$VAR/initdb.log" 2>&1 || die "initdb failed: see $VAR/initdb.log"
  fi
  echo "$PGDIR" >"$VAR/pgdir"
  if ! as_pg "$PG_BIN/pg_ctl" -D "$PGDIR/data" status >/dev/null 2>&1; then
    say "starting PostgreSQL (socket in $PGDIR)"
    as_pg "$PG_BIN/pg_ctl" -D "$PGDIR/data" -l "$PGDIR/postgres.log" -w -t 60 \
      -o "-c listen_addresses='' -c unix_socket_directories='$PGDIR'" start >/dev/null ||
      die "PostgreSQL did not start: see $PGDIR/postgres.log"
  fi
  export LOCKLAB_DB="host=$PGDIR dbname=postgres user=postgres"
fi

# 2. the server, with an admin token kept in var/
[[ -s $VAR/admin-token ]] || head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$VAR/admin-token"
chmod 600 "$VAR/admin-token"
ADMIN=$(cat "$VAR/admin-token")
if alive "$VAR/server.pid"; then
  say "locklab-server already running (pid $(cat "$VAR/server.pid"))"
else
  say "starting locklab-server on $URL"
  LOCKLAB_ADMIN_TOKEN=$ADMIN setsid "$top/$BUILD/locklab-server" --listen "$LISTEN" \
    --web-root "$top/web" --sql-dir "$top/sql" >>"$VAR/server.log" 2>&1 </dev/null &
  echo $! >"$VAR/server.pid"
  for ((i = 0; i < 100; i++)); do curl -fsS "$URL/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
  curl -fsS "$URL/healthz" >/dev/null 2>&1 || die "the server did not come up: $(tail -n 5 "$VAR/server.log")"
fi

# 3. one local agent, registered once
if [[ ! -s $VAR/agent-token ]]; then
  curl -fsS -X POST -H "Authorization: Bearer $ADMIN" -H 'Content-Type: application/json' \
    -d '{"name": "demo-agent"}' "$URL/api/v1/agents/register" | jq -r .token >"$VAR/agent-token"
  chmod 600 "$VAR/agent-token"
fi
if alive "$VAR/agent.pid"; then
  say "locklab-agent already running (pid $(cat "$VAR/agent.pid"))"
else
  say "starting locklab-agent (workdir $VAR/agent, native tree $top)"
  setsid "$top/$BUILD/locklab-agent" --server "$URL" --token "$(cat "$VAR/agent-token")" \
    --workdir "$VAR/agent" --native-tree "$top" --poll 2 \
    --noise-interval "${LOCKLAB_NOISE_INTERVAL:-0}" >>"$VAR/agent.log" 2>&1 </dev/null &
  echo $! >"$VAR/agent.pid"
fi

# 4. the example series
say "submitting examples/kmutex-woken-waiter.mbox (suite $SUITE)"
t_submit=$(date +%s.%N)
body=$(jq -n --rawfile m examples/kmutex-woken-waiter.mbox --arg s "$SUITE" '{mbox: $m, suites: [$s]}')
answer=$(curl -sS -X POST -H 'Content-Type: application/json' -d "$body" "$URL/api/v1/submissions")
id=$(jq -r '.id // empty' <<<"$answer")
[[ -n $id ]] || die "the server refused the example: $answer"
echo "submission $id: $(jq -r .subject <<<"$answer")"
# Progress: on a terminal one line redrawn in place; otherwise a line when a
# state changes or a job passes a quarter of its rounds (every change with
# DEMO_VERBOSE=1).
tty=0 cols=80
if [[ -t 1 ]]; then tty=1 cols=$(tput cols 2>/dev/null || echo 80); fi
last="" lastkey=""
while :; do
  s=$(curl -sS "$URL/api/v1/submissions/$id")
  state=$(jq -r .state <<<"$s")
  line=$(jq -r '"state \(.state)" + ([.jobs[]? | " | job \(.id) \(.suite): \(.state), round \(.rounds_complete // 0)/\(.rounds // "?")"] | join(""))' <<<"$s")
  key=$(jq -r '.state + ([.jobs[]? | " \(.state) \(if (.rounds // 0) > 0 then ((.rounds_complete // 0) * 4 / .rounds | floor) else 0 end)"] | join(""))' <<<"$s")
  if [[ $tty -eq 1 ]]; then
    # cut to the terminal's width: a wrapped line would not be redrawn in place
    [[ $line != "$last" ]] && printf '\r\033[K  %s' "${line:0:$((cols - 3))}"
  elif [[ $VERBOSE != 0 && $line != "$last" ]] || [[ $key != "$lastkey" ]]; then
    echo "  $line"
  fi
  last=$line lastkey=$key
  [[ $state == done || $state == failed ]] && break
  alive "$VAR/agent.pid" || { [[ $tty -eq 1 ]] && echo; die "the agent stopped: $(tail -n 5 "$VAR/agent.log")"; }
  sleep 2
done
[[ $tty -eq 1 ]] && echo
if [[ $state == failed ]]; then
  die "the submission failed: $(jq -r '.reason // "see the agent log"' <<<"$s")"
fi
say "verdict: $(jq -r .verdict <<<"$s")"
# the finding in one line, as the reply mail's first paragraph says it
reply=$(curl -sS "$URL/api/v1/submissions/$id/reply")
finding=$(python3 -c '
import email, sys
from email import policy
m = email.message_from_string(sys.stdin.read(), policy=policy.default)
body = m.get_body(("plain",))
text = body.get_content() if body is not None else ""
print(" ".join(text.strip().split("\n\n")[0].split()))' <<<"$reply" 2>/dev/null || true)
say "finding: ${finding:-(the reply has none: $(head -c 200 <<<"$reply"))}"
# The whole reports and the reply are kept in files; the screen gets the
# reply's rows that decided (a significant change), at most 8 of them.
OUT=$VAR/submission-$id
mkdir -p "$OUT"
for f in aim7 perf; do
  curl -sS "$URL/api/v1/submissions/$id/report?format=$f" >"$OUT/report-$f.txt"
done
printf '%s\n' "$reply" >"$OUT/reply.eml"
t_tables=$(date +%s.%N)
if [[ $VERBOSE != 0 ]]; then
  for f in aim7 perf; do
    say "report ($f)"
    cat "$OUT/report-$f.txt"
  done
  say "reply mail"
  printf '%s\n' "$reply"
else
  say "the rows that decided"
  python3 "$top/scripts/demo-rows.py" 8 <"$OUT/reply.eml" || echo "  (see the reply)"
fi
rel=${OUT#"$top"/}
say "full reports: $rel/report-aim7.txt, $rel/report-perf.txt; reply: $rel/reply.eml"
say "$(awk -v a="${DEMO_T0:-$t_submit}" -v s="$t_submit" -v b="$t_tables" \
  'BEGIN { printf "time: %.0f s from make demo to the tables (%.0f s from submission to verdict and tables)", b - a, b - s }')"
say "dashboard: $URL/"
say "stop everything with: make demo-stop"
