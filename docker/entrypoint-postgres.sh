#!/bin/sh
# entrypoint-postgres.sh - start PostgreSQL in the locklab-postgres image,
# making the cluster first when $PGDATA has none.
#
# On the first start: initdb with POSTGRES_USER as the superuser (default
# postgres) and POSTGRES_PASSWORD as its password (required: no trust auth
# over TCP), POSTGRES_DB created (default: the user's name) and owned by it;
# pg_hba.conf allows scram-sha-256 from anywhere and peer on the socket.
# Then postgres runs in the foreground, listening on all addresses; the
# health check (pg_isready over TCP) is only answered once that server is up,
# never during the set-up, which listens on the unix socket only.
set -eu

user=${POSTGRES_USER:-postgres}
db=${POSTGRES_DB:-$user}
: "${PGDATA:=/var/lib/postgresql/data}"
say() { printf 'entrypoint-postgres: %s\n' "$*" >&2; }

if [ ! -s "$PGDATA/PG_VERSION" ]; then
  if [ -z "${POSTGRES_PASSWORD:-}" ]; then
    say "POSTGRES_PASSWORD is not set: it is needed to make the cluster"
    exit 2
  fi
  pwfile=$(mktemp)
  printf '%s\n' "$POSTGRES_PASSWORD" >"$pwfile"
  initdb -D "$PGDATA" -U "$user" --pwfile="$pwfile" --auth-local=peer \
    --auth-host=scram-sha-256 --encoding=UTF8 --locale=C.UTF-8 >/dev/null
  rm -f "$pwfile"
  cat >"$PGDATA/pg_hba.conf" <<HBA
local all all peer map=local
host  all all 0.0.0.0/0 scram-sha-256
host  all all ::/0      scram-sha-256
HBA
  # the container's only OS user, postgres, may connect as the superuser
  printf 'local postgres %s\n' "$user" >"$PGDATA/pg_ident.conf"
  pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start >/dev/null
  if [ "$db" != postgres ]; then
    # the name is quoted as an identifier by format(); no shell or SQL text
    # is built from it
    psql -q -v ON_ERROR_STOP=1 -U "$user" -d postgres -v db="$db" -v owner="$user" >/dev/null <<'SQL'
SELECT format('CREATE DATABASE %I OWNER %I', :'db', :'owner') \gexec
SQL
  fi
  pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
  say "made the cluster in $PGDATA (user $user, database $db)"
fi

exec postgres -D "$PGDATA" -c listen_addresses='*' "$@"
