#!/usr/bin/env bash
# make demo from a fresh clone, as a newcomer runs it: the whole service comes
# up on a private cluster, the example series gets its tables and reply, the
# dashboard answers, and make demo-stop leaves nothing running.  The clone is
# made where root naturally clones, in a private (0700) folder like a home
# directory, which the cluster's `postgres` user cannot enter.
. "$(dirname "$0")/lib/tap.sh"
. "$(dirname "$0")/lib/server.sh"

mkdir -m 700 "$T/home" && git clone -q "$TOP" "$T/home/clone" || exit 1
C="$T/home/clone"
# the npm packages are already fetched for this checkout: reuse them
[[ -d $TOP/web/node_modules ]] && cp -a "$TOP/web/node_modules" "$C/web/" &&
  touch "$C/web/node_modules/.package-lock.json"
port=$(free_port)
# the first run is the newcomer's (the quick suite, a few minutes); the second
# reruns the series with the smoke suite
export LOCKLAB_LISTEN="127.0.0.1:$port" MAKEFLAGS=-j2
unset LOCKLAB_DB DEMO_VAR DEMO_SUITE
mkdir -p "$C/var"
pgdir=$("$C/scripts/demo-pgdir.sh" "$C/var")
at_exit "rm -rf '$(dirname "$pgdir")'"
at_exit "make -C '$C' demo-stop"
out=$(make -C "$C" demo 2>&1); rc=$?
printf '%s\n' "$out" >"${TEST_OUTPUT:-$T}/demo.log"
is "$rc" 0 "make demo exits 0"
if [[ $(id -u) -eq 0 ]]; then
  like "$pgdir" "^/var/lib/locklab-demo/[0-9a-f]{16}/pg$" "as root, a clone under a 0700 folder keeps its cluster where postgres can reach it"
  like "$out" "creating a private PostgreSQL cluster in $pgdir" "make demo says where the cluster is"
  like "$out" "the postgres user cannot enter $C/var" "and why it is not under var/"
else
  is "$pgdir" "$C/var/pg" "not root: the cluster is under var/"
fi
like "$out" "time: [0-9]+ s from make demo to the tables \([0-9]+ s from submission to verdict and tables\)" \
  "make demo prints its own start-to-tables time"
unlike "$out" "deps: installing.*(chromium|qemu|linux-source|docker-compose)" "it installs nothing only tests need"
like "$out" "submission [0-9]+: \[PATCH 0/2\] locking/kmutex: woken waiters stop spinning" "it submits the example series with its cover letter"
like "$out" "job [0-9]+ quick: running, round [0-9]+/" "it shows progress while the job runs"
unlike "$out" "could not change directory" "nothing complains of a folder it cannot enter"
lines=$(wc -l <<<"$out")
diag "make demo printed $lines lines"
[[ $lines -le 40 ]]
ok $? "make demo fits a screen: $lines lines, at most 40"
unlike "$out" "(^|[^a-z])(cc|gcc) .*-o build/" "the compiler's output is not shown when the build works"
like "$out" "== verdict: [a-z-]+" "it prints the verdict"
like "$out" "finding: locklab [a-z]" "it prints the finding in one line, as the reply says it"
like "$out" "== the rows that decided" "it prints the rows that decided"
like "$out" "base +%sd +%change +patched +%sd +\+-ci95 +n +metric" "under the reply's table header"
[[ $(grep -n -m1 '^.*finding: ' <<<"$out" | cut -d: -f1) -lt $(grep -n -m1 'the rows that decided' <<<"$out" | cut -d: -f1) ]]
ok $? "the finding comes before the table"
sub=$(sed -n 's/^submission \([0-9]*\): .*/\1/p' <<<"$out" | head -n 1)
files="var/submission-$sub"
like "$out" "full reports: $files/report-aim7\.txt, $files/report-perf\.txt; reply: $files/reply\.eml" \
  "it says where the full reports and the reply are kept"
like "$(cat "$C/$files/report-aim7.txt" 2>/dev/null)" "\| +(users|threads) +\| avg throughput +\| avg throughput +\|" \
  "the AIM7-style report is in its file"
like "$(cat "$C/$files/report-perf.txt" 2>/dev/null)" "\| threads \| baseline" "the perf-style report is in its file"
like "$(cat "$C/$files/reply.eml" 2>/dev/null)" "In-Reply-To: <cover\.[0-9]+\.git\.dana@example\.org>" \
  "the reply, kept in its file, threads to the cover letter"
unlike "$out" "In-Reply-To: " "the reply's text is not printed by default"
like "$out" "stop everything with: make demo-stop" "it says how to stop it"
like "$out" "dashboard: http://127\.0\.0\.1:$port/" "it prints the dashboard URL"
curl -fsS "http://127.0.0.1:$port/" | grep -qi '<html'; ok $? "the dashboard answers"
curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null; ok $? "the server is healthy"

# a second run reuses the cluster and the running programs; DEMO_VERBOSE=1
# prints everything: the build, the whole reports and the reply
touch "$C/client/locklab.c"
out2=$(DEMO_SUITE=smoke DEMO_VERBOSE=1 make -C "$C" demo 2>&1); rc=$?
printf '%s\n' "$out2" >"${TEST_OUTPUT:-$T}/demo-2.log"
is "$rc" 0 "make demo works a second time"
like "$out2" "locklab-server already running" "it reuses the running server"
unlike "$out2" "creating a private PostgreSQL cluster" "and the cluster"
like "$out2" "-o build/locklab( |$)" "DEMO_VERBOSE=1 shows the compiler's commands"
like "$out2" "\| +(users|threads) +\| avg throughput +\| avg throughput +\|" "DEMO_VERBOSE=1 prints the AIM7-style report"
like "$out2" "\| threads \| baseline" "and the perf-style report"
like "$out2" "== reply mail" "and the reply"
like "$out2" "In-Reply-To: <cover\.[0-9]+\.git\.dana@example\.org>" "the whole of it, headers included"
sub2=$(sed -n 's/^submission \([0-9]*\): .*/\1/p' <<<"$out2" | head -n 1)

# The example's second patch costs kmutex's uncontended unlock an mfence:
# one instruction a pair more (30 -> 31, exact under valgrind, quick suite)
# and ns_per_pair +25-36% on a 2-vCPU VM.  So the series gets a decisive
# verdict: a regression, an improvement, or no-change with a Tested-by,
# never "could not tell".  Measured on a shared 2-vCPU machine at load
# 5-23 (docs/measured/demo.md): regression in 12 of 12 quick runs
# (instructions_per_pair in all, ns_per_pair in 7 of 10) and in 5 of 5 smoke
# runs (ns_per_pair alone, q 0.0001-0.05).  The second (smoke) run above is
# the one retry, and the test says when it was needed.
verdict_of() { sed -n 's/.*== verdict: \([a-z-]*\).*/\1/p' <<<"$1" | head -n 1; }
finding_of() { sed -n 's/.*== finding: \(.*\)/\1/p' <<<"$1" | sed 's/\x1b\[0m$//' | head -n 1; }
decisive() {
  case $(verdict_of "$1") in
  regression | improvement) return 0 ;;
  no-change) grep -q '^Tested-by: ' "$2" ;;
  *) return 1 ;;
  esac
}
decided=$out decided_reply=$C/$files/reply.eml
if ! decisive "$out" "$decided_reply"; then
  diag "the first run was not decisive (verdict $(verdict_of "$out"): $(finding_of "$out")); the second run is its one retry"
  decided=$out2 decided_reply=$C/var/submission-$sub2/reply.eml
fi
decisive "$decided" "$decided_reply"
ok $? "the example series gets a decisive verdict (regression, improvement, or no-change with Tested-by)"
diag "first run (quick): $(verdict_of "$out"); second run (smoke): $(verdict_of "$out2")" \
  "finding: $(finding_of "$decided")"
case $(verdict_of "$decided") in
regression | improvement) re="finding: locklab noticed a [0-9.]+% $(verdict_of "$decided") of " ;;
*) re="finding: locklab found no change beyond .* - Tested-by below" ;;
esac
like "$decided" "$re" "its one-line finding says that verdict"

make -C "$C" demo-stop >"$T/stop.log" 2>&1; ok $? "make demo-stop exits 0"
like "$(cat "$T/stop.log")" "stopped PostgreSQL \($pgdir\)" "it stops the cluster where make demo put it"
sleep 1
pgrep -f "$C/build/" >/dev/null; is $? 1 "no locklab process is left running"
pgrep -f "$pgdir" >/dev/null; is $? 1 "PostgreSQL is stopped"
curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1; is $? 7 "nothing answers on the demo's port"

# what make demo installs, against what make test installs
demo_pkgs=$("$TOP/scripts/deps.sh" --demo --list)
all_pkgs=$("$TOP/scripts/deps.sh" --list)
for p in chromium qemu-system-x86 linux-source-6.1 docker-compose libcmocka-dev; do
  grep -qx "$p" <<<"$demo_pkgs"; is $? 1 "make demo does not install $p"
  grep -qx "$p" <<<"$all_pkgs"; ok $? "make test does"
done
for p in postgresql-15 libmicrohttpd-dev bubblewrap; do
  grep -qx "$p" <<<"$demo_pkgs"; ok $? "make demo installs $p"
done
# a clone postgres can reach keeps the cluster under var/
mkdir -p "$T/open/var"
is "$("$TOP/scripts/demo-pgdir.sh" "$T/open/var")" "$T/open/var/pg" "a reachable clone keeps its cluster under var/"
done_testing
