#!/usr/bin/env bash
# make install into a scratch DESTDIR, then the installed programs as a user
# runs them: the server (no --web-root, no --sql-dir) and the agent take a
# submission from the installed client to its verdict; every installed
# program has --version and a man page; the units name the installed
# programs (systemd-analyze verify on an install under a real PREFIX); and
# make uninstall leaves no file behind.
source "$(dirname "$0")/lib/tap.sh"
source "$TOP/tests/lib/pg.sh"
source "$TOP/tests/lib/server.sh"
source "$TOP/tests/lib/agent.sh"

PROGS=(lockbench locklab-server locklab-agent locklab)
ROOT=$T/root
P=$ROOT/usr/local
# the programs are already built (make test builds them first); install only
# adds the man pages and copies
mk() { make -C "$TOP" --no-print-directory BUILD="$BUILD" "$@" >>"$T/make.log" 2>&1; }

mk install DESTDIR="$ROOT" PREFIX=/usr/local
ok $? "make install DESTDIR=... PREFIX=/usr/local" || diag "$(tail -n 20 "$T/make.log")"
missing=
for f in "${PROGS[@]/#/bin/}" share/locklab/web/index.html share/locklab/web/vendor/uPlot.esm.js \
  share/locklab/sql/001_init.sql "${PROGS[@]/#/share/man/man1/}" \
  lib/systemd/system/locklab-server.service lib/systemd/system/locklab-agent.service; do
  [[ $f == share/man/man1/* ]] && f+=.1
  [[ -f $P/$f ]] || missing+=" $f"
done
is "$missing" "" "programs, dashboard, migrations, man pages and units are in place"
is "$(ls "$P/share/locklab/sql" | sort)" "$(ls "$TOP/sql" | grep '\.sql$' | sort)" "every migration is installed"
unlike "$(cd "$P/share/locklab/web" && find . -type f)" 'node_modules|package|/test/|scripts' \
  "the dashboard without its npm and test files"

# --version: "<program> <version>", exit 0, the version of this checkout
want=$(cd "$TOP" && git describe --always --dirty --tags 2>/dev/null || echo unknown)
for p in "${PROGS[@]}"; do
  out=$("$P/bin/$p" --version)
  ok $? "installed $p --version exits 0"
  is "$out" "$p $(cat "$BIN/version.txt")" "and prints '$p <version>'"
done
like "$(cat "$BIN/version.txt")" "^${want%-dirty}" "the version is git describe of the checkout"

# man pages: made from --help, so each names options of its program
for p in "${PROGS[@]}"; do
  page=$(MANWIDTH=100 man -l "$P/share/man/man1/$p.1" 2>/dev/null)
  like "$page" "^${p^^}\\(1\\)" "man $p renders"
done
like "$(man -l "$P/share/man/man1/locklab-server.1" 2>/dev/null)" '--listen' "locklab-server(1) lists --listen"
like "$(man -l "$P/share/man/man1/lockbench.1" 2>/dev/null)" '--progress-s' \
  "lockbench(1) holds run's options (help --all)"
like "$(man -l "$P/share/man/man1/locklab.1" 2>/dev/null)" 'regression' "locklab(1) gives the exit codes"

# the units start what make install put in place
like "$(grep '^ExecStart=' "$P/lib/systemd/system/locklab-server.service")" '=/usr/local/bin/locklab-server$' \
  "the server unit starts /usr/local/bin/locklab-server"

# ---- the installed server and agent: the demo's flow ---------------------------------------
pg_start || bail_out "no postgres"
port=$(free_port)
URL=http://127.0.0.1:$port
mkdir -p "$T/run"
# from a folder without web/ or sql/: the server must find the installed ones itself
(cd "$T/run" && exec "$P/bin/locklab-server" --listen "127.0.0.1:$port" --admin-token "$ADMIN_TOKEN" \
  --min-rounds 3 --max-rounds 3) >"$T/server.log" 2>&1 &
SERVER_PID=$!
at_exit "kill $SERVER_PID; wait $SERVER_PID"
server_wait "$URL" "$SERVER_PID" "$T/server.log" || bail_out "the installed server did not start"
like "$(cat "$T/server.log")" "\\($(ls "$TOP/sql" | grep -c '\.sql$') migration\\(s\\) applied\\)" \
  "the installed server applies the installed migrations (no --sql-dir)"
is "$(curl -s "$URL/" | cmp - "$TOP/web/index.html" && echo same)" same \
  "and serves the installed dashboard (no --web-root)"
is "$(curl -s -o /dev/null -w '%{http_code}' "$URL/vendor/uPlot.esm.js")" 200 "with its vendored chart library"

register_agent
tree_init
make_series comment "sed -i '1s|^|/* kmutex: a comment that changes nothing */\\n|' lockbench/locks/kmutex.c"
(cd "$T/run" && exec "$P/bin/locklab-agent" --server "$URL" --token "$AGENT_TOKEN" --workdir "$T/agent" \
  --native-tree "$T/tree" --poll 1) >"$T/agent.log" 2>&1 &
AGENT_PID=$!
at_exit "kill $AGENT_PID 2>/dev/null; wait $AGENT_PID"
(cd "$T/run" && timeout 900 "$P/bin/locklab" --server "$URL" submit --wait --suite smoke "$T/comment.mbox") \
  >"$T/gate.out" 2>"$T/gate.err"
rc=$?
is "$rc" 0 "the installed client follows the submission to a passing verdict (exit 0)" ||
  diag "$(tail -n 5 "$T/gate.err")" "$(tail -n 20 "$T/agent.log")"
sub=$(sed -n 's/^submission \([0-9]*\) queued.*/\1/p' "$T/gate.out")
api GET "/api/v1/submissions/$sub"
is "$(jq -r '.state + " " + .verdict' <<<"$BODY")" "done no-change" "a comment-only series is done: no-change"
like "$(cat "$T/gate.out")" 'uncontended +pthread' "and the client printed the report's table"
like "$(cat "$T/agent.log")" "job=1 msg=\"job done\"" "the installed agent ran the job"
kill "$AGENT_PID" 2>/dev/null

# ---- a real PREFIX: the units point at files that exist, and systemd accepts them --------
mk install PREFIX="$T/opt"
ok $? "make install PREFIX=\$T/opt"
like "$(grep -h '^ExecStart=' "$T"/opt/lib/systemd/system/*.service | sort | tr '\n' ' ')" \
  "^ExecStart=$T/opt/bin/locklab-agent ExecStart=$T/opt/bin/locklab-server \$" \
  "the units start the programs under PREFIX"
like "$(grep -h '^Environment=LOCKLAB_SQL_DIR=' "$T/opt/lib/systemd/system/locklab-server.service")" \
  "=$T/opt/share/locklab/sql\$" "and name its migrations"
if command -v systemd-analyze >/dev/null 2>&1; then
  out=$(systemd-analyze verify "$T"/opt/lib/systemd/system/locklab-{server,agent}.service 2>&1)
  is "$?:$out" "0:" "systemd-analyze verify accepts the installed units"
else
  skip "systemd-analyze verify of the installed units" "systemd-analyze not installed (package systemd)"
fi
mk uninstall PREFIX="$T/opt"
is "$(find "$T/opt" -type f | head -n 5)" "" "make uninstall PREFIX=... leaves no file"

# ---- uninstall -------------------------------------------------------------------------------
mk uninstall DESTDIR="$ROOT" PREFIX=/usr/local
ok $? "make uninstall DESTDIR=... PREFIX=/usr/local"
is "$(find "$ROOT" -type f | head -n 5)" "" "it leaves no file behind"
is "$(find "$ROOT" -name '*locklab*' | head -n 5)" "" "nor a locklab folder"

done_testing
