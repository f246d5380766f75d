#!/usr/bin/env bash
# git am's fallbacks a maintainer uses by hand, in the agent: a patch made
# with --no-prefix (no a/ b/ in its paths) applies with -p0 and is measured;
# a patch that applies neither way still fails saying git am's words.
. "$(dirname "$0")/lib/tap.sh"
. "$(dirname "$0")/lib/pg.sh"
. "$(dirname "$0")/lib/server.sh"
. "$(dirname "$0")/lib/agent.sh"

pg_start || bail_out "no postgres"
server_start --min-rounds 2 --max-rounds 4 || bail_out "no server"
register_agent
unpaired # how a patch applies: no timing is judged
tree_init

# a top-level file: git am's default -p1 cannot strip a prefix from its name
d=$T/work-noprefix
git clone -q "$T/tree" "$d"
printf '\n# a waiter that spins gives up after a while\n' >>"$d/Makefile"
git -C "$d" -c user.name=Dev -c user.email=dev@example.org commit -qam 'build: say when a spinner gives up'
git -C "$d" format-patch -q --stdout --no-prefix -1 >"$T/noprefix.mbox"
like "$(cat "$T/noprefix.mbox")" $'\n--- Makefile' "the patch has no a/ b/ prefixes"
submit_mbox "$T/noprefix.mbox"
is "$CODE" 202 "it is taken"
nsub=$SUB
"$BIN/locklab-agent" --server "$URL" --token "$AGENT_TOKEN" --workdir "$T/agent" --native-tree "$T/tree" \
  --once >"$T/agent.log" 2>&1
ok $? "the agent runs its job"
is "$(sub_state "$nsub")" done "the --no-prefix patch is measured" || diag "$(tail -n 20 "$T/agent.log")"
like "$(cat "$T/agent.log")" 'patch 1 of 1 applied with git am -p0' "and the agent says how it applied it"

# a patch that applies neither way still fails, with git am's own words
awk '/^@@/ {h = 1; print; next} h && /^ / {print " this line is not in the Makefile"; h = 0; next} {print}' \
  "$T/noprefix.mbox" | sed 's/^Message-I[Dd]: <\(.*\)>/Message-ID: <broken-\1>/I' >"$T/broken.mbox"
submit_mbox "$T/broken.mbox"
bsub=$SUB
"$BIN/locklab-agent" --server "$URL" --token "$AGENT_TOKEN" --workdir "$T/agent" --native-tree "$T/tree" \
  --once >"$T/agent2.log" 2>&1
is "$(sub_state "$bsub")" failed "a patch that applies neither way fails"
api GET "/api/v1/submissions/$bsub"
like "$(jq -r '[.jobs[].reason] | join(" ")' <<<"$BODY")" 'does not apply \(git am -3\)' "saying it does not apply"
done_testing
