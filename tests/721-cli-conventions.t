#!/usr/bin/env bash
# What users expect of each program's command line: --version, help per
# command (`lockbench run --help`, `lockbench help COMMAND`, `locklab help
# COMMAND`), and arguments checked before any network or database work: a
# listener on a loopback port records every connection, so "no connection"
# is seen, not timed.
source "$(dirname "$0")/lib/tap.sh"
source "$TOP/tests/lib/server.sh"
source "$TOP/tests/lib/agent.sh"

LB=$BIN/lockbench
LL=$BIN/locklab
version=$(cat "$BIN/version.txt")
for p in lockbench locklab-server locklab-agent locklab; do
  is "$("$BIN/$p" --version)" "$p $version" "$p --version prints '$p <version>'"
done

# ---- lockbench: an overview, then one command's help ------------------------------------
top=$("$LB" --help)
ok $? "lockbench --help exits 0"
like "$top" '^  run ' "it lists the commands"
unlike "$top" '--duration-ms|--format F' "but no command's options"
ok $(($(wc -l <<<"$top") > 30)) "and fits a screen ($(wc -l <<<"$top") lines)"
run=$("$LB" run --help)
ok $? "lockbench run --help exits 0"
like "$run" '^usage: lockbench run \[OPTIONS\]' "it is run's usage"
like "$run" '--duration-ms N' "with run's options"
unlike "$run" '--format F|--round-seconds|--mde-latency' "and no other command's"
is "$("$LB" help run)" "$run" "lockbench help run says the same"
like "$("$LB" compare --help)" '--format F' "lockbench compare --help gives compare's options"
unlike "$("$LB" compare --help)" '--duration-ms' "and not run's"
like "$("$LB" plan --help)" '--round-seconds' "lockbench plan --help gives plan's"
like "$("$LB" image --help)" '^usage: lockbench image FILE' "image --help is image's usage, not a file named --help"
like "$("$LB" kernel --help)" 'usage: lockbench kernel build' "kernel --help is kernel's"
all=$("$LB" help --all)
missing=
for o in --duration-ms --format --round-seconds --kernel; do grep -q -- "$o" <<<"$all" || missing+=" $o"; done
is "$missing" "" "lockbench help --all holds every command's options"
"$LB" help no-such-command 2>"$T/e"
is $? 2 "lockbench help of an unknown command exits 2"
like "$(cat "$T/e")" "no command 'no-such-command'" "naming it"

# ---- locklab: help is a command ---------------------------------------------------------
out=$("$LL" help)
ok $? "locklab help exits 0"
like "$out" 'locklab report ID' "it gives every command's usage"
rep=$("$LL" help report)
ok $? "locklab help report exits 0"
like "$rep" '^usage: locklab report ID' "it is report's usage"
like "$rep" '--format F' "with report's options"
unlike "$rep" '--wait|--timeout' "and not submit's"
is "$("$LL" report --help)" "$rep" "locklab report --help says the same"
"$LL" help nope 2>"$T/e"
is $? 2 "locklab help of an unknown command exits 2"

# ---- arguments first, the network after ---------------------------------------------------
listen_loopback "$T/conns"
[[ -e $T/conns ]] || bail_out "no loopback listener"
"$LL" --server "http://127.0.0.1:$LPORT" report 999 --format xml 2>"$T/e"
is $? 2 "locklab report 999 --format xml exits 2"
like "$(cat "$T/e")" "--format: 'xml' is not aim7, perf, lkp or text" "saying what --format takes"
"$LL" --server "http://127.0.0.1:$LPORT" status --format lkp 2>"$T/e"
is $? 2 "an option the command does not take exits 2"
like "$(cat "$T/e")" 'status takes no --format' "naming it"
"$LL" --server "ftp://127.0.0.1:$LPORT" status 2>"$T/e"
is $? 2 "a server that is not an http(s) URL exits 2"
LOCKLAB_SERVER="http://127.0.0.1:$LPORT" "$LL" report 0 2>"$T/e"
is $? 2 "a submission ID that is not one exits 2"
is "$(cat "$T/conns")" "" "none of them opened a connection"
# the same listener sees a request that passes the checks (it closes at once: exit 7)
timeout 30 "$LL" --server "http://127.0.0.1:$LPORT" report 999 --format lkp 2>"$T/e"
is $? 7 "locklab report 999 --format lkp goes to the server (which hangs up: exit 7)"
like "$(cat "$T/conns")" '^connection from' "and the listener saw its connection"

# the server: its options, then the database
: >"$T/conns"
db="host=127.0.0.1 port=$LPORT dbname=x user=x connect_timeout=5"
for bad in "--listen nonsense" "--listen 127.0.0.1:99999" "--listen :8080" "--public-url ftp://x" \
  "--smtp-url http://x" "--mail-config $T/no-such.json" "--fetch-allow not/a/cidr"; do
  # shellcheck disable=SC2086
  LOCKLAB_DB=$db timeout 30 "$BIN/locklab-server" $bad 2>"$T/e"
  is $? 2 "locklab-server $bad exits 2"
  like "$(cat "$T/e")" "${bad%% *}|mail config|fetch-allow" "saying which option"
done
is "$(cat "$T/conns")" "" "without connecting to the database"
LOCKLAB_DB=$db timeout 30 "$BIN/locklab-server" --listen "127.0.0.1:$(free_port)" 2>"$T/e"
ok $(($? == 0)) "a server whose options are right goes on to the database (which hangs up)"
like "$(cat "$T/conns")" '^connection from' "and connects to it"

done_testing
