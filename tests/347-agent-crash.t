#!/usr/bin/env bash
# Crashes are findings, through the real server, PostgreSQL, agent and
# lockbench (smoke suite):
#  - a patch whose kmutex_init calls abort (__builtin_abort): the patched lockbench's
#    kmutex points die of SIGABRT where the base runs them clean.  The
#    verdict is `crash` (not `failed`, not an infrastructure failure), and
#    the reply and the API give the signal, the point and the stack (the
#    frame in kmutex_init).
#  - a patch whose lockbench aborts as it starts a run: the patched process
#    itself dies of SIGABRT after the base ran clean: `crash` too.
#  - the base-clean requirement: the same abort already in the tree (the
#    base crashes too) and a comment-only patch on top: not `crash`.
. "$(dirname "$0")/lib/tap.sh"
. "$(dirname "$0")/lib/pg.sh"
. "$(dirname "$0")/lib/server.sh"
. "$(dirname "$0")/lib/agent.sh"

pg_start || exit 1
server_start --min-rounds 3 --max-rounds 6 || exit 1
register_agent
tree_init

cat >"$T/abort.pl" <<'PL'
s/(static int kmutex_init\(void \*p\)\n\{\n)/$1\t__builtin_abort();\n/;
PL
cat >"$T/mainabort.pl" <<'PL'
s/(\nint cmd_run\(int argc, char \*\*argv\)\n\{\n)/$1\tif (getenv("HOME"))\n\t\tabort();\n/;
PL
make_series kabort "perl -0pi '$T/abort.pl' lockbench/locks/kmutex.c"
is "$(grep -c '^+.*abort();' "$T/kabort.mbox")" 1 "the series that aborts in kmutex_init is made"
make_series mabort "perl -0pi '$T/mainabort.pl' lockbench/src/cmd_run.c"
is "$(grep -c '^+.*abort();' "$T/mabort.mbox")" 1 "the series whose lockbench aborts as a run starts is made"

run_job() {
  "$BIN/locklab-agent" --server "$URL" --token "$AGENT_TOKEN" --workdir "$T/agent-$1" \
    --native-tree "$T/tree" --once $AGENT_FLAGS >"$T/agent-$1.log" 2>&1
}

# 1. a point's process crashes in the patched lock
submit_mbox "$T/kabort.mbox"; kabort=$SUB
run_job a
ok $? "the agent runs the job whose kmutex_init aborts"
api GET "/api/v1/submissions/$kabort"
diag "kmutex_init abort: $(jq -c '{state, verdict, reason, lockups: [.lockups[] | {variant, workload, lock, params, kind, message}]}' <<<"$BODY")"
is "$(jq -r .state <<<"$BODY")" done "the job is done, not failed"
is "$(jq -r .verdict <<<"$BODY")" crash "its verdict is crash"
is "$(jq -r '[.lockups[].variant] | unique | join(",")' <<<"$BODY")" patched "only the patched side crashed"
is "$(jq -r '[.lockups[] | select(.lock == "kmutex") | .kind] | unique | join(",")' <<<"$BODY")" crash \
  "the API gives each crashed point of kmutex as a crash"
like "$(jq -r '[.lockups[] | select(.lock == "kmutex")][0].message' <<<"$BODY")" \
  "killed by signal 6 \(Aborted\): [a-z-]+ with kmutex, [0-9]+ threads" "with the signal and the point that ran"
like "$(jq -r '[.lockups[] | select(.lock == "kmutex")][0].stacks' <<<"$BODY")" \
  "in kmutex_init \(.*lockbench/locks/kmutex.c:[0-9]+" "and the stack down to the frame that crashed"
reply=$(curl -s "$URL/api/v1/submissions/$kabort/reply")
# the finding is one paragraph, wrapped: read as one line
flat=$(tr '\n' ' ' <<<"$reply")
like "$flat" "locklab +noticed +a +crash" "the reply calls it a crash"
like "$flat" "signal +6 +\(Aborted\)" "with the signal"
like "$flat" "kmutex_init +at +lockbench/locks/kmutex.c:[0-9]+" "and where"
like "$flat" "base +ran +the +same +point +clean" "and that the base ran it clean"
unlike "$reply" "infrastructure failure" "it is not called an infrastructure failure"
unlike "$reply" "^Tested-by: " "and it carries no Tested-by"
like "$reply" "Reported-by: " "but the tags for a fix"

# 2. the patched lockbench itself dies
submit_mbox "$T/mabort.mbox"; mabort=$SUB
run_job b
ok $? "the agent runs the job whose lockbench aborts"
api GET "/api/v1/submissions/$mabort"
diag "lockbench abort: $(jq -c '{state, verdict, reason, lockups: [.lockups[] | {variant, workload, lock, kind, message}]}' <<<"$BODY")"
is "$(jq -r .state <<<"$BODY")" done "the job is done, not failed"
is "$(jq -r .verdict <<<"$BODY")" crash "its verdict is crash"
like "$(jq -r '.lockups[0].message' <<<"$BODY")" "lockbench \(patched\) was killed by signal 6 \(Aborted\)" \
  "the API gives the signal"
is "$(jq -r '.lockups[0].variant' <<<"$BODY")" patched "on the patched side"
like "$(curl -s "$URL/api/v1/submissions/$mabort/reply" | tr '\n' ' ')" \
  "locklab +noticed +a +crash: +the +patched +lockbench +crashed +\(lockbench \(patched\) +was +killed +by +signal +6" \
  "the reply calls it a crash of lockbench itself, with the signal"
like "$(cat "$T/agent-b.log")" "the base ran clean: posting a crash" "the agent saw the base run clean first"

# 3. the base crashes too: not a crash of the patch
(cd "$T/tree" && perl -0pi "$T/abort.pl" lockbench/locks/kmutex.c && git commit -qam "kmutex: abort in init")
make_series comment "sed -i '1s|^|/* kmutex: a comment */\\n|' lockbench/locks/kmutex.c"
submit_mbox "$T/comment.mbox"; both=$SUB
run_job c
api GET "/api/v1/submissions/$both"
diag "both sides abort: $(jq -c '{state, verdict, reason, lockups: ([.lockups[].variant] | unique)}' <<<"$BODY")"
is "$(jq -r '[.lockups[].variant] | unique | join(",")' <<<"$BODY")" base,patched "the base crashed as well"
v=$(jq -r .verdict <<<"$BODY")
[[ $v != crash ]]
ok $? "a crash on both sides is no crash of the patch (verdict: $v)"
done_testing
