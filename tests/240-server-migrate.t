#!/usr/bin/env bash
# Migrations run once even when two servers start together on a fresh
# database; /healthz follows the database; the dashboard is served from the
# web root and nothing outside it.
source "$(dirname "$0")/lib/tap.sh"
source "$TOP/tests/lib/pg.sh"
source "$TOP/tests/lib/server.sh"

pg_start || { echo "Bail out! no postgres"; exit 1; }
nsql=$(ls "$TOP"/sql/[0-9]*.sql | wc -l)

mkdir -p "$T/web/css"
printf '<!doctype html><title>locklab</title>\n' >"$T/web/index.html"
printf 'body{}\n' >"$T/web/css/site.css"
printf 'secret\n' >"$T/secret.txt"

# two servers on one fresh database, started at the same moment
server_spawn --web-root "$T/web"
u1=$URL p1=$SERVER_PID l1=$SERVER_LOG
server_spawn --web-root "$T/web"
server_wait "$u1" "$p1" "$l1"
r1=$?
server_wait "$URL" "$SERVER_PID" "$SERVER_LOG"
r2=$?
ok $((r1 + r2)) "both servers come up"
is "$(sql "SELECT count(*) FROM schema_migrations")" "$nsql" "every migration is recorded once"
is "$(cat "$T"/server-*.log | grep -c 'applied migration')" "$nsql" "each migration was applied by one server only"
ok $(($(sql "SELECT count(*) FROM information_schema.tables WHERE table_name = 'submissions'") != 1)) \
  "the schema is there"

server_start --web-root "$T/web" || { echo "Bail out! no server"; exit 1; }
like "$(cat "$SERVER_LOG")" '\(0 migration\(s\) applied\)' "a restart applies nothing"
api GET /healthz
is "$CODE" 200 "healthz is 200 with the database up"
api GET / -D "$T/h"
is "$CODE" 200 "the dashboard index is served"
like "$(cat "$T/h")" '^Content-Type: text/html' "as text/html"
api GET /css/site.css -D "$T/h"
like "$(cat "$T/h")" '^Content-Type: text/css' "stylesheets as text/css"
api GET /../secret.txt --path-as-is
unlike "$BODY" secret "a file beside the web root is not served"
api GET /%2e%2e/secret.txt --path-as-is
unlike "$BODY" secret "nor with an encoded .."
ln -s "$T/secret.txt" "$T/web/link.txt"
api GET /link.txt
unlike "$BODY" secret "nor through a symlink out of the web root"
api GET /nothing.html -D "$T/h"
is "$CODE" 404 "a missing page is 404"
like "$(cat "$T/h")" '^Content-Type: application/json' "every reply has a Content-Type"

out=$("$BIN/locklab-server" --help)
ok $? "--help succeeds"
for o in listen db admin-token web-root max-body fetch-timeout fetch-max-bytes lease-seconds \
  max-attempts min-rounds max-rounds alpha min-effect submit-token-required; do
  like "$out" "--$o" "--help lists --$o"
done
like "$out" '\[\$LOCKLAB_LISTEN, 127\.0\.0\.1:8080\]' "--help gives defaults and variables"
"$BIN/locklab-server" --lease-seconds 0 2>"$T/err"
ok $(($? == 0)) "a bad flag value is refused"
like "$(cat "$T/err")" 'lease-seconds' "with the flag named"
LOCKLAB_DB="host=$T/nowhere dbname=x" "$BIN/locklab-server" --listen 127.0.0.1:0 2>"$T/err"
ok $(($? == 0)) "an unreachable database stops the server at start"
like "$(cat "$T/err")" 'database' "with a message"

_pg_as "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m fast -w stop >/dev/null 2>&1
api GET /healthz
is "$CODE" 503 "healthz is 503 with the database down"
_pg_as "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/postgres.log" -w -o "-c listen_addresses='' -c unix_socket_directories='$PG_DIR'" start >/dev/null 2>&1
api GET /healthz
is "$CODE" 200 "and 200 again once it is back"

done_testing
