#!/usr/bin/env bash
# make demo-stop: stop what make demo started (agent, server, the private
# PostgreSQL cluster).  The data under var/ stays for the next make demo.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
VAR=${DEMO_VAR:-var}
PG_BIN=/usr/lib/postgresql/15/bin
# from / : postgres cannot always enter the folder it was started from
as_pg() { if [[ $(id -u) -eq 0 ]]; then (cd / && runuser -u postgres -- "$@"); else "$@"; fi; }
stop_pid() { # stop_pid NAME FILE: SIGTERM, wait up to 30 s, then SIGKILL
  local pid
  [[ -f $2 ]] || return 0
  pid=$(cat "$2")
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid"
    for ((i = 0; i < 300; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid"
    echo "stopped $1 (pid $pid)"
  fi
  rm -f "$2"
}
stop_pid locklab-agent "$VAR/agent.pid"
stop_pid locklab-server "$VAR/server.pid"
PGDIR=$VAR/pg
[[ -s $VAR/pgdir ]] && PGDIR=$(cat "$VAR/pgdir")  # where make demo put the cluster
if [[ -d $PGDIR/data ]] && as_pg "$PG_BIN/pg_ctl" -D "$PGDIR/data" status >/dev/null 2>&1; then
  as_pg "$PG_BIN/pg_ctl" -D "$PGDIR/data" -m fast -w stop >/dev/null && echo "stopped PostgreSQL ($PGDIR)"
fi
exit 0
