# tests/lib/pg.sh - a private PostgreSQL 15 cluster for one test; source
# after tap.sh.  pg_start [NAME] creates and starts it under $T/NAME (unix
# socket only, trust auth), exports LOCKLAB_DB and PGHOST/PGUSER/PGDATABASE
# for psql, and stops it when the test ends.  pg_down/pg_up stop and start
# it again in between.  initdb and postgres refuse to
# run as root, so as root the cluster runs as the `postgres` user.  Under
# scripts/run-tests.sh the cluster is a copy of one made by initdb for the
# whole run (LOCKLAB_PG_TEMPLATE, a data directory): the same files, in a
# second instead of initdb's several.
PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}

_pg_as() {
  if [[ $(id -u) -eq 0 ]]; then runuser -u postgres -- "$@"; else "$@"; fi
}

# pg_initdb DIR: a new cluster in DIR (its parent writable by the cluster's
# user); no fsync, as the clusters run without it
pg_initdb() {
  _pg_as "$PG_BIN/initdb" -D "$1" --auth=trust --username=postgres \
    --encoding=UTF8 --locale=C.UTF-8 --no-sync
}

pg_start() {
  local name=${1:-pg}
  PG_DIR="$T/$name"
  mkdir -p "$PG_DIR"
  if [[ $(id -u) -eq 0 ]]; then chown postgres: "$PG_DIR"; fi
  if [[ -n ${LOCKLAB_PG_TEMPLATE:-} && -f $LOCKLAB_PG_TEMPLATE/PG_VERSION ]]; then
    cp -a "$LOCKLAB_PG_TEMPLATE" "$PG_DIR/data" >"$PG_DIR/initdb.log" 2>&1 || {
      diag "copying the cluster $LOCKLAB_PG_TEMPLATE failed:" "$(tail -n 20 "$PG_DIR/initdb.log")"; return 1; }
  else
    pg_initdb "$PG_DIR/data" >"$PG_DIR/initdb.log" 2>&1 || {
      diag "initdb failed:" "$(tail -n 20 "$PG_DIR/initdb.log")"; return 1; }
  fi
  pg_up || return 1
  at_exit "_pg_as '$PG_BIN/pg_ctl' -D '$PG_DIR/data' -m immediate -w stop"
  export LOCKLAB_DB="host=$PG_DIR dbname=postgres user=postgres"
  export PGHOST="$PG_DIR" PGUSER=postgres PGDATABASE=postgres
}

# pg_up / pg_down [MODE]: start the cluster of pg_start again / stop it
# (pg_ctl stop -m MODE, default fast: sessions get 57P01 and are closed)
pg_up() {
  _pg_as "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/postgres.log" -w -t 60 \
    -o "-c listen_addresses='' -c unix_socket_directories='$PG_DIR' -c fsync=off \
-c synchronous_commit=off -c full_page_writes=off -c max_connections=200" start \
    >/dev/null 2>&1 || { diag "postgres did not start:" "$(tail -n 20 "$PG_DIR/postgres.log")"; return 1; }
}
pg_down() { _pg_as "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m "${1:-fast}" -w stop >/dev/null 2>&1; }

# sql QUERY: one value (or rows, |-separated) from the test database
sql() { psql -X -q -A -t -v ON_ERROR_STOP=1 -c "$1"; }
