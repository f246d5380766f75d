#!/usr/bin/env bash
# `locklab submit --wait` as a CI gate, driven against a real server: one exit
# code per verdict, --json, --timeout, progress as lines when piped and redrawn
# on a terminal, one kept-alive connection per run; `locklab alerts`.  The
# verdicts are reached by posting result documents as an agent would (as in
# tests/211-server-jobs.t); the failed submission also through a real agent.
source "$(dirname "$0")/lib/tap.sh"
source "$TOP/tests/lib/pg.sh"
source "$TOP/tests/lib/server.sh"

server_setup --min-rounds 2 --max-rounds 4
register_agent
A=$AGENT_TOKEN
LL=("$BIN/locklab" --server "$URL")

# proxy NAME: tests/lib/countproxy.py in front of the server; sets NAME_URL
# and NAME_LOG ("connection N" and "request N METHOD PATH" lines)
proxy() {
  local i
  python3 "$TOP/tests/lib/countproxy.py" "$T/$1.port" "$T/$1.log" "${URL##*:}" 2>"$T/$1.err" &
  at_exit "kill $!"
  for ((i = 0; i < 100; i++)); do [[ -s $T/$1.port ]] && break; sleep 0.05; done
  touch "$T/$1.log"
  printf -v "${1}_URL" 'http://127.0.0.1:%s' "$(cat "$T/$1.port")"
  printf -v "${1}_LOG" '%s' "$T/$1.log"
}

# wait_grep REGEX FILE...: until one of the FILEs has a line matching REGEX
# (30 s at most)
wait_grep() {
  local i re=$1
  shift
  for ((i = 0; i < 300; i++)); do
    grep -Eqs "$re" "$@" && return 0
    sleep 0.1
  done
  diag "no line /$re/ in $*:" "$(cat "$@" 2>/dev/null)"
  return 1
}

# gate NAME ARGS...: start `locklab submit --wait ARGS` in the background,
# stdout to $T/NAME.out (a pipe, not a terminal), stderr to $T/NAME.err; wait
# until it has submitted and claim its job; sets GATE_PID, GSUB, JOB
gate() {
  local name=$1 i
  shift
  timeout 120 "$@" >"$T/$name.out" 2>"$T/$name.err" &
  GATE_PID=$!
  at_exit "kill $GATE_PID 2>/dev/null"
  wait_grep '^submission [0-9]+ queued' "$T/$name.out" "$T/$name.err" || return 1
  GSUB=$(sed -n 's/^submission \([0-9]*\) queued.*/\1/p' "$T/$name.out" "$T/$name.err")
  for ((i = 0; i < 100; i++)); do
    claim "$A"
    [[ $JOB != null ]] && return 0
    sleep 0.1
  done
  return 1
}

# rounds JOB FROM TO BASE_SCALE PATCHED_SCALE [NOISE [LOCKUP]]: rounds FROM
# on until the job is done (the server's policy decides how many: 3 paired
# rounds at least, as many again to confirm a change), TO at the least
rounds() {
  local r
  for ((r = $2; r < 16; r++)); do
    post_round "$1" "$A" base "$r" "$4" "${6:-0.002}"
    post_round "$1" "$A" patched "$r" "$5" "${6:-0.002}" "${7:-0}"
    ((r >= $3)) && [[ $(jq -r .state <<<"$BODY") == done ]] && break
  done
}

# finish NAME: wait for the gate; sets RC
finish() {
  wait "$GATE_PID"
  RC=$?
}

# --help documents the codes
help=$("$BIN/locklab" --help)
ok $? "locklab --help exits 0"
for code in '0  no-change or improvement' '1  regression' '2  bad usage' '3  lockup, splat or crash' \
  '4  inconclusive' '5  failed' '6  --timeout' '7  server unreachable'; do
  like "$help" "^ *$code|  $code" "--help documents exit $code"
done

# no-change, through a proxy that counts connections and requests: the client
# polls while the job runs, prints a line only when something changed, and
# keeps one connection for the whole run
proxy P
gate nochange "$BIN/locklab" --server "$P_URL" submit --wait "$T/s/series.mbox" ||
  { echo "Bail out! the gate did not start"; exit 1; }
before=$(grep -c "^request 1 GET /api/v1/submissions/$GSUB\$" "$P_LOG")
for ((i = 0; i < 100; i++)); do
  [[ $(grep -c "GET /api/v1/submissions/$GSUB\$" "$P_LOG") -ge $((before + 2)) ]] && break
  sleep 0.1
done
polls=$(grep -c "GET /api/v1/submissions/$GSUB\$" "$P_LOG")
ok $((polls < before + 2)) "the client polled twice while the job was running ($polls polls)"
rounds "$JOB" 0 1 1 1
is "$(jq -r .verdict <<<"$BODY")" no-change "(the server's verdict is no-change)"
finish
is "$RC" 0 "submit --wait exits 0 for no-change"
out=$(cat "$T/nochange.out")
is "$(grep -c "^submission $GSUB: running\$" <<<"$out")" 1 \
  "piped, the running state is printed once though it was polled $polls times"
is "$(grep -c "^submission $GSUB: queued\$" <<<"$out")" 1 "the queued state once"
like "$out" "^submission $GSUB: done \\(no-change\\)\$" "the end state as a line"
like "$out" "^  job $JOB quick: done, ([0-9]+)/\\1 rounds, no-change\$" "the job's end as a line"
like "$out" 'hot +pthread .*no-change' "and then the text report"
is "$(tr -cd '\r\033' <"$T/nochange.out" | wc -c)" 0 "piped output holds no carriage return or escape"
is "$(grep -c '^connection' "$P_LOG")" 1 "the whole run used one connection"
like "$(grep -c '^request 1 ' "$P_LOG")" '^([4-9]|[1-9][0-9]+)$' \
  "for the submission, each poll and the report ($(grep -c '^request 1 ' "$P_LOG") requests)"

# improvement
gate improve "${LL[@]}" submit --wait "$T/s/series.mbox" || diag "gate did not start"
rounds "$JOB" 0 3 1 1.1
finish
is "$(jq -r .verdict <<<"$BODY"),$RC" improvement,0 "an improvement exits 0"

# regression
gate regress "${LL[@]}" submit --wait "$T/s/series.mbox" || diag "gate did not start"
rounds "$JOB" 0 3 1 0.9
finish
is "$(jq -r .verdict <<<"$BODY"),$RC" regression,1 "a regression exits 1"
like "$(cat "$T/regress.err")" "^locklab: submission $GSUB done with regression: exit 1\$" \
  "and says why on stderr"
like "$(cat "$T/regress.out")" 'hot +pthread .*regression' "the report is printed"

# lockup
gate lockup "${LL[@]}" submit --wait "$T/s/series.mbox" || diag "gate did not start"
rounds "$JOB" 0 1 1 1 0.002 1
finish
is "$(jq -r .verdict <<<"$BODY"),$RC" lockup,3 "a lockup exits 3"

# inconclusive: noisy rounds up to --max-rounds
gate noisy "${LL[@]}" submit --wait "$T/s/series.mbox" || diag "gate did not start"
rounds "$JOB" 0 3 1 1.01 0.3
finish
is "$(jq -r .verdict <<<"$BODY"),$RC" inconclusive,4 "an inconclusive verdict exits 4"

# failed (the agent gives up: the series does not apply)
gate failed "${LL[@]}" submit --wait "$T/s/series.mbox" || diag "gate did not start"
api POST "/api/v1/jobs/$JOB/fail" -H "Authorization: Bearer $A" -d '{"reason": "git am: patch does not apply"}'
finish
is "$RC" 5 "a failed submission exits 5"
like "$(cat "$T/failed.out")" '^  reason: .*patch does not apply' "its reason is printed"
unlike "$(cat "$T/failed.out")" '^workload' "and no report"

# --json: the submission as the API returns it, once it ended
gate json "${LL[@]}" submit --wait --json "$T/s/series.mbox" || diag "gate did not start"
rounds "$JOB" 0 3 1 0.9
finish
is "$RC" 1 "--json keeps the exit code"
jq -e . "$T/json.out" >/dev/null
ok $? "--json prints JSON on stdout and nothing else"
api GET "/api/v1/submissions/$GSUB"
is "$(jq -S . "$T/json.out")" "$(jq -S . <<<"$BODY")" "it is the API's document of the submission"
like "$(cat "$T/json.err")" "^submission $GSUB: done \\(regression\\)\$" "the progress went to stderr"
out=$("${LL[@]}" status "$GSUB" --json)
is "$(jq -S . <<<"$out")" "$(jq -S . <<<"$BODY")" "status ID --json prints the same document"
out=$("${LL[@]}" submit --json "$T/s/series.mbox")
is "$(jq -r '[.state, (.id | type)] | join(",")' <<<"$out")" "queued,number" \
  "submit --json without --wait prints the API's answer"
claim "$A"
api POST "/api/v1/jobs/$JOB/fail" -H "Authorization: Bearer $A" -d '{"reason": "cleared by the test"}'

# --timeout: nobody claims the job
SECONDS=0
"${LL[@]}" submit --wait --timeout 2 --json "$T/s/series.mbox" >"$T/to.out" 2>"$T/to.err"
RC=$?
took=$SECONDS
is "$RC" 6 "--timeout passing first exits 6"
ok $((took > 10)) "within the bound (took about $took s for --timeout 2)"
like "$(cat "$T/to.err")" 'did not finish within --timeout 2 s; it goes on on the server' "saying so"
is "$(jq -r .state "$T/to.out")" queued "--json still prints the submission as it was last seen"
claim "$A"
api POST "/api/v1/jobs/$JOB/fail" -H "Authorization: Bearer $A" -d '{"reason": "cleared by the test"}'

# usage and connection errors
"${LL[@]}" submit --wait --timeout soon "$T/s/series.mbox" 2>"$T/e.err"
is "$?" 2 "a --timeout that is not a number exits 2"
"${LL[@]}" status --timeout 5 2>"$T/e.err"
is "$?" 2 "--timeout without submit --wait exits 2"
"${LL[@]}" submit --wait "$T/no-such.mbox" 2>"$T/e.err"
is "$?" 2 "an unreadable FILE exits 2"
"${LL[@]}" --bogus status 2>"$T/e.err"
is "$?" 2 "an unknown option exits 2"
"$BIN/locklab" --server "http://127.0.0.1:1" submit --wait "$T/s/series.mbox" 2>"$T/e.err"
is "$?" 7 "a server that cannot be reached exits 7"
like "$(cat "$T/e.err")" '127\.0\.0\.1:1' "naming the server"
"${LL[@]}" report 999999 2>"$T/e.err"
is "$?" 7 "a server error (no such submission) exits 7"

# progress on a terminal: redrawn in place
if script -qec true /dev/null >/dev/null 2>&1; then
  script -qec "$(printf '%q ' "${LL[@]}" submit --wait --timeout 5 "$T/s/series.mbox")" \
    "$T/tty.typescript" >"$T/tty.out" 2>&1
  tty_rc=$?
  is "$tty_rc" 6 "on a terminal the gate runs to its --timeout (script -e passes the exit on)"
  is "$(grep -c $'\033\\[[0-9]*A' "$T/tty.out")" "$(($(grep -c $'\033\\[J' "$T/tty.out") - 1))" \
    "each drawing but the first moves the cursor back up over the last one"
  ok $(($(grep -c $'\033\\[J' "$T/tty.out") < 2)) "it was drawn more than once, in place"
  like "$(cat "$T/tty.out")" '\[[0-9]+ s\]' "with the time waited"
  claim "$A"
  api POST "/api/v1/jobs/$JOB/fail" -H "Authorization: Bearer $A" -d '{"reason": "cleared by the test"}'
else
  skip "progress on a terminal" "script(1) cannot make a pty here"
fi

# the agent's api_post keeps its connection: build/bench-agent-post (make
# bench-keepalive) counts the TCP connections libcurl opened per mode
submit_mbox "$T/s/series.mbox"
claim "$A"
out=$("$BIN/bench-agent-post" "$URL" "$A" "/api/v1/jobs/$JOB/heartbeat" - 20 1)
ok $? "20 agent heartbeats posted each way"
like "$out" '^reuse .* 1 TCP connections opened$' "the agent's api_post sends them over one connection"
like "$out" '^fresh .* 20 TCP connections opened$' "(and a new struct api each time opens 20)"
api POST "/api/v1/jobs/$JOB/fail" -H "Authorization: Bearer $A" -d '{"reason": "cleared by the test"}'

# alerts: a server without the route gives a clear error
api GET /api/v1/alerts
if [[ $CODE == 404 ]]; then
  "${LL[@]}" alerts >"$T/a.out" 2>"$T/a.err"
  is "$?" 7 "locklab alerts against a server without alerts exits 7"
  like "$(cat "$T/a.err")" '^locklab: http://127\.0\.0\.1:[0-9]+ has no alerts: GET /api/v1/alerts answered 404' \
    "saying the server has no alerts route"
  is "$(cat "$T/a.out")" "" "and prints nothing on stdout"
  skip "locklab alerts lists the server's alerts" "this server has no GET /api/v1/alerts yet (tracking lands apart)"
else
  "${LL[@]}" alerts --json >"$T/a.json"
  is "$?" 0 "locklab alerts --json against this server exits 0"
  is "$(jq -S . "$T/a.json")" "$(jq -S . <<<"$BODY")" "it prints the server's alerts document"
  n=$(jq '.alerts | length' <<<"$BODY")
  out=$("${LL[@]}" alerts)
  if [[ $n -eq 0 ]]; then is "$out" "no alerts" "the table says there are none"
  else is "$(($(wc -l <<<"$out") - 1))" "$n" "the table has a row per alert"; fi
fi

# alerts: the table and --json from a document in the contract's shape
# (DESIGN.md, "Tracking, alerts, bisection"), served by a static fixture
mkdir -p "$T/alerts"
cat >"$T/alerts/alerts" <<'EOF'
{"alerts": [
 {"id": 7, "tree": "tip", "branch": "locking/core", "state": "bisected",
  "commit": "0123456789abcdef0123456789abcdef01234567", "subject": "locking/mutex: drop the spinner",
  "author": "Dev <dev@example.org>", "range": "aaaa..bbbb", "workload": "hot", "lock": "kmutex",
  "metric": "ops_per_sec", "change": -0.125},
 {"id": 8, "tree": 3, "branch": "main", "state": "confirmed", "commit": "", "subject": null,
  "author": null, "range": "cccccccc..dddddddd", "workload": "cold", "lock": "ticket",
  "metric": "ns_per_op", "change": 0.04}
]}
EOF
fixture F "$T/alerts"
out=$("$BIN/locklab" --server "$F_URL" alerts)
ok $? "locklab alerts reads an alerts document"
like "$out" '^ +7 +bisected +-12\.5% +tip locking/core: hot kmutex ops_per_sec +0123456789ab +locking/mutex: drop the spinner \(Dev <dev@example.org>\)$' \
  "a bisected alert shows its change, series, short commit, subject and author"
like "$out" '^ +8 +confirmed +\+4\.0% +3 main: cold ticket ns_per_op +- +cccccccc\.\.dddddddd$' \
  "an alert not bisected yet shows its range"
out=$("$BIN/locklab" --server "$F_URL" alerts --json)
is "$(jq -S . <<<"$out")" "$(jq -S . "$T/alerts/alerts")" "--json prints the document as served"
echo '{"alerts": 3}' >"$T/alerts/alerts"
"$BIN/locklab" --server "$F_URL" alerts 2>"$T/a.err"
is "$?" 7 "a document that is not the contract's exits 7"

# the real agent: a series that does not apply fails the gate with exit 5
source "$TOP/tests/lib/agent.sh"
tree_init
make_series noapply "sed -i 's/lock_kmutex_ops/lock_kmutex_ops_renamed/' lockbench/locks/kmutex.c"
perl -pi -e 's/^-(.*lock_kmutex_ops)/-$1_not_there/' "$T/noapply.mbox"
"${LL[@]}" submit --wait --timeout 300 --suite smoke "$T/noapply.mbox" >"$T/agent.out" 2>"$T/agent.err" &
GATE_PID=$!
wait_grep '^submission [0-9]+ queued' "$T/agent.out" >/dev/null
agent_spawn a --once
finish
is "$RC" 5 "a series that does not apply, tried by a real agent, exits 5"
like "$(cat "$T/agent.out")" 'reason: .*(does not apply|patch failed)' "with git's reason"

done_testing
