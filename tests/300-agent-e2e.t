#!/usr/bin/env bash
# From a mailed series to a verdict, through the real server, PostgreSQL, git
# and lockbench: a regression, a harmless change, a series that does not
# apply, and a lock that loses wakeups, which the agent survives.
# run-tests: alone (it judges timings: another test beside it would be noise)
. "$(dirname "$0")/lib/tap.sh"
. "$(dirname "$0")/lib/pg.sh"
. "$(dirname "$0")/lib/server.sh"
. "$(dirname "$0")/lib/agent.sh"

pg_start || exit 1
server_start --min-rounds 10 --max-rounds 30 || exit 1
register_agent
tree_init

# 1. kmutex with full fences on its fast paths ("for safety"): an mfence per
#    lock and unlock.  (Removing kmutex's optimistic spinning was the first
#    choice here, but on this 2-CPU machine it does not move hot's throughput
#    measurably, so it cannot be the regression a test relies on; see
#    docs/measured/peers.md.)
cat >"$T/fence.pl" <<'PL'
s/(static void kmutex_lock\(void \*p\)\n\{\n(?:.*\n){2})/$1\tatomic_thread_fence(memory_order_seq_cst);\n/;
s/(static void kmutex_unlock\(void \*p\)\n\{\n(?:.*\n){2})/$1\tatomic_thread_fence(memory_order_seq_cst);\n/;
PL
make_series nospin "perl -0pi '$T/fence.pl' lockbench/locks/kmutex.c"
is "$(grep -c '^+.*atomic_thread_fence(memory_order_seq_cst)' "$T/nospin.mbox")" 2 "the fence series is made"
submit_mbox "$T/nospin.mbox"; nospin=$SUB
"$BIN/locklab-agent" --server "$URL" --token "$AGENT_TOKEN" --workdir "$T/agent-a" \
  --native-tree "$T/tree" --once --duet on >"$T/agent-a.log" 2>&1
ok $? "the agent runs the job and exits (--once)"
like "$(cat "$T/agent-a.log")" 'measuring pthread,kmutex \(pthread as the untouched control\)' "a kmutex-only series is measured on kmutex and the pthread baseline"
api GET "/api/v1/submissions/$nospin"
is "$(jq -r .state <<<"$BODY")" done "the fence submission is done"
is "$(jq -r .verdict <<<"$BODY")" regression "and its verdict is regression"
is "$(jq '.jobs[0].confirm_from | type' <<<"$BODY")" '"number"' "found, then confirmed on rounds of its own"
like "$(cat "$T/agent-a.log")" 'rounds 0-[0-9]+ found a change: rounds [0-9]+ and later must confirm it' \
  "the agent says it is confirming"
report=$(curl -s "$URL/api/v1/submissions/$nospin/report?format=text")
# the fences cost kmutex on every path: ns per uncontended pair, and on hot throughput and CPU time
# per operation.  Which of those rows is found and then confirmed varies with this machine's noise
# (hot's throughput is bimodal on 2 vCPUs; under make asan hot's rows once stayed unconfirmed at
# q = 0.17), so the test asks for a kmutex row flagged as a regression, shown with kmutex's rows.
like "$(grep -E '^(uncontended|hot) +kmutex ' <<<"$report")" ' regression$' "the table flags kmutex as a regression"
# the untouched pthread is the live A/A: shown, marked, never the verdict's cause
is "$(jq '[.verdicts[] | select(.lock == "pthread") | .control] | (length > 0 and all)' <<<"$BODY")" true \
  "every pthread row is a control row"
is "$(jq '[.verdicts[] | select(.lock == "kmutex") | .control] | (length > 0 and (any | not))' <<<"$BODY")" true \
  "no kmutex row is"
unlike "$report" 'hot +pthread .*(regression|improvement|no-change|inconclusive)$' \
  "the text table marks each pthread row (control)"
like "$report" 'control = a lock the change did not touch' "and the legend says what that means"
like "$report" 'rounds 0-[0-9]+ found the change and rounds [0-9]+ and later found it again' \
  "the legend says which rounds found and which confirmed"
# duets (--duet on): a round's single-thread points ran for base and patched at once, each on its own CPU
api GET "/api/v1/submissions/$nospin/results"
is "$(jq -c '[.results[].document.runs[] | select(.workload == "uncontended") | .instrument.ns_per_pair] | unique' <<<"$BODY")" \
  '["duet"]' "every uncontended run of the stored documents says instrument duet"
is "$(jq -c '[.results[].document.runs[] | select(.workload != "uncontended") | .instrument // empty] | length' <<<"$BODY")" \
  0 "no other run does (they ran one side after the other)"
is "$(jq '[.results[].document.runs[] | select(.workload == "uncontended") | .disturbance.ns_per_pair.lost_pct | length] | (length > 0 and all(. > 0))' <<<"$BODY")" \
  true "and their samples carry their disturbance"
like "$(cat "$T/agent-a.log")" 'round [0-9]+: duet of uncontended: base on CPU [01], patched on CPU [01]' \
  "the agent says which side ran on which CPU"
like "$report" 'duet: [0-9]+ row\(s\) measured base and patched at the same time' "the report's legend says which rows were duets"
perf=$(curl -s "$URL/api/v1/submissions/$nospin/report?format=perf")
like "$perf" '\| threads \|' "the perf-style table renders"

# 2. a comment only: no regression
make_series comment "sed -i '1s|^|/* kmutex: a comment that changes nothing */\\n|' lockbench/locks/kmutex.c"
# 3. a series that does not apply
make_series noapply "sed -i 's/lock_kmutex_ops/lock_kmutex_ops_renamed/' lockbench/locks/kmutex.c"
perl -pi -e 's/^-(.*lock_kmutex_ops)/-$1_not_there/' "$T/noapply.mbox"
# 4. futex3 that never wakes a waiter: a lockup, and the agent goes on
make_series lostwake "sed -i 's/^\\(\\s*\\)futex_wake(&lock->word, 1);/\\1(void)0; \\/* wakeup lost *\\//' lockbench/locks/futex3.c"
grep -q 'wakeup lost' "$T/lostwake.mbox"; ok $? "the lost-wakeup series is made"
submit_mbox "$T/lostwake.mbox"; lostwake=$SUB
submit_mbox "$T/noapply.mbox"; noapply=$SUB
submit_mbox "$T/comment.mbox"; comment=$SUB
agent_spawn b --abba on --lockstep off
wait_state "$comment" done failed 600; ok $? "one agent works through the three jobs"
kill -TERM "$AGENT_PID"; wait "$AGENT_PID" 2>/dev/null

api GET "/api/v1/submissions/$lostwake"
is "$(jq -r .verdict <<<"$BODY")" lockup "the lost-wakeup futex3 is a lockup"
like "$(jq -c '.lockups' <<<"$BODY")" 'futex3' "the lockup names futex3"
like "$(jq -r '[.lockups[]?.stacks // empty] | join("\n")' <<<"$BODY")" 'futex' "with stacks of threads asleep on a futex"
like "$(curl -s "$URL/api/v1/submissions/$lostwake/report?format=lkp")" 'fail:runs' "the LKP report has a fail:runs block"

api GET "/api/v1/submissions/$noapply"
is "$(jq -r .state <<<"$BODY")" failed "the series that does not apply fails"
like "$(jq -r '.reason // ([.jobs[]?.reason] | join(" "))' <<<"$BODY")" 'does not apply' "saying it does not apply"
like "$(jq -r '.reason // ([.jobs[]?.reason] | join(" "))' <<<"$BODY")" '(patch failed|does not apply|error:)' "with git's own message"

api GET "/api/v1/submissions/$comment"
is "$(jq -r .state <<<"$BODY")" done "the comment-only series is done"
v=$(jq -r .verdict <<<"$BODY")
[[ $v != regression && $v != lockup ]]; ok $? "the comment-only series is no regression (verdict: $v)"
like "$(cat "$T/agent-b.log")" 'job handed back|agent stopped' "SIGTERM stops the agent cleanly"
# ABBA (--abba on): base's and patched's single-thread samples took turns, a sample a side
like "$(cat "$T/agent-b.log")" 'round [0-9]+: ABBA of uncontended, a sample a side in turn: base side [01], patched side [01]' \
  "with --abba on the agent runs uncontended as ABBA"
# each side's lockbench says which slot each of its samples took: together, every slot once
blog=$(grep -l 'abba side' "$T"/agent-b/*/*/duet-base-r0.log 2>/dev/null | head -1)
slots() { grep -o 'slot [0-9]* ' "$1" | awk '{ print $2 }'; }
if [[ -n $blog ]]; then
  all=$(cat <(slots "$blog") <(slots "${blog%/duet-base-r0.log}/duet-patched-r0.log") | sort -n | tr '\n' ' ')
  n=$(wc -w <<<"$all")
  is "$all" "$(seq 0 $((n - 1)) | tr '\n' ' ')" "base and patched took turns: every slot of round 0 went to one side ($n samples)"
else
  ok 1 "base and patched took turns: no side log of round 0 with slots under $T/agent-b"
fi
api GET "/api/v1/submissions/$comment/results"
is "$(jq '[.results[].document.runs[] | select(.workload == "uncontended" and .lock == "kmutex")] | length > 0' <<<"$BODY")" true \
  "the stored documents of both sides hold the ABBA runs of uncontended"
is "$(jq -c '[.results[].document.runs[] | .instrument // empty | .[]] | unique' <<<"$BODY")" '["timed"]' \
  "timed one side at a time, as a round's are: the agent marks them timed, no run says duet or lockstep"

# 5. a git ref instead of a mail: the agent fetches it (git daemon on loopback)
gport=$(free_port)
git daemon --export-all --base-path="$T" --listen=127.0.0.1 --port="$gport" --reuseaddr \
  >"$T/git-daemon.log" 2>&1 &
gd=$!
at_exit "kill $gd"
for ((i = 0; i < 50; i++)); do git ls-remote "git://127.0.0.1:$gport/work-comment" >/dev/null 2>&1 && break; sleep 0.1; done
ref=$(git -C "$T/work-comment" symbolic-ref HEAD)
api POST /api/v1/submissions -H 'Content-Type: application/json' \
  -d "$(jq -n --arg u "git://127.0.0.1:$gport/work-comment" --arg r "$ref" '{git: {url: $u, ref: $r}, suites: ["smoke"]}')"
is "$CODE" 202 "a git ref is submitted"
gsub=$(jq -r .id <<<"$BODY")
# loopback is an internal address: the operator allows the git daemon's port
LOCKLAB_FETCH_ALLOW="127.0.0.1:$gport" "$BIN/locklab-agent" --server "$URL" --token "$AGENT_TOKEN" --workdir "$T/agent-g" \
  --native-tree "$T/tree" --once >"$T/agent-g.log" 2>&1
ok $? "the agent runs the git job"
like "$(cat "$T/agent-g.log")" 'measuring pthread,kmutex' "the fetched commit is measured on the lock it touches"
is "$(sub_state "$gsub")" done "the git submission is done"
# by default (no --duet) single-thread points run in lockstep: base and patched take
# turns of 0.5 ms on one CPU; hot takes turns of 1 ms on every CPU; every other point
# runs one side after the other
api GET "/api/v1/submissions/$gsub/results"
is "$(jq -c '[.results[].document.runs[] | select(.workload == "uncontended") | .instrument.ns_per_pair] | unique' <<<"$BODY")" '["lockstep"]' \
  "by default every uncontended run of the stored documents says instrument lockstep"
is "$(jq -c '[.results[].document.runs[] | select(.workload == "hot") | .instrument.ops_per_sec] | unique' <<<"$BODY")" '["lockstep"]' \
  "and every hot run says instrument lockstep for its ops/s"
is "$(jq '[.results[].document.runs[] | select(.workload == "hot")] | length > 0' <<<"$BODY")" true \
  "(the stored documents hold hot runs)"
is "$(jq '[.results[].document.runs[] | select(.workload != "uncontended" and .workload != "hot") | .instrument // empty] | length' <<<"$BODY")" 0 \
  "and no other run carries an instrument: they ran one side at a time"
like "$(cat "$T/agent-g.log")" 'round [0-9]+: lockstep of uncontended,hot on CPU [0-9]+ \(hot on every CPU\), turns of 0.5 ms \(hot 1 ms, longer past 2 threads a CPU\): base side [01], patched side [01]' \
  "the agent says it runs uncontended and hot in lockstep"
unlike "$(cat "$T/agent-g.log")" 'duet of' "and runs no duet"

# git keeps house before a job measures, never beside it: the first job's
# mirror, unpacked into loose objects and given a threshold it is over
# (gc.auto 256), is packed by the agent's own `git gc --auto` after the next
# job's fetch, in the foreground, before the job goes on.
# The job is a series that does not apply: nothing after git am runs.
m=$(ls -d "$T"/agent-a/mirrors/*.git)
mkdir "$T/packs" && mv "$m"/objects/pack/pack-* "$T/packs/"
for pk in "$T"/packs/*.pack; do git -C "$m" unpack-objects -q <"$pk"; done
git -C "$m" config gc.auto 256
loose=$(git -C "$m" count-objects | cut -d' ' -f1)
((loose > 1000)); ok $? "the mirror holds loose objects ($loose)"
make_series gcloose "echo '/* appended */' >>lockbench/locks/kmutex.c"
# every context line changed: the patch applies to no version of the file
perl -pi -e '$d = 1 if /^@@/; s/$/ (changed)/ if $d && /^ /' "$T/gcloose.mbox"
submit_mbox "$T/gcloose.mbox"; gcloose=$SUB
"$BIN/locklab-agent" --server "$URL" --token "$AGENT_TOKEN" --workdir "$T/agent-a" \
  --native-tree "$T/tree" --once >"$T/agent-a2.log" 2>&1
is "$(sub_state "$gcloose")" failed "a series that does not apply fails the job"
# (what stays loose is unreachable: git gc keeps it for two weeks)
after=$(git -C "$m" count-objects | cut -d' ' -f1)
((after < 256)); ok $? "by then the agent's git gc --auto had packed the mirror's loose objects ($loose -> $after)"
ls "$m"/objects/pack/*.pack >/dev/null 2>&1; ok $? "into a pack"
unlike "$(cat "$T/agent-a2.log")" 'git gc --auto in .* (did not run|failed)' "the agent logs no failed maintenance"
done_testing
