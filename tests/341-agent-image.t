#!/usr/bin/env bash
# The image rule end to end (result.h "image", compare.h identical_code),
# through the real server, PostgreSQL, git, agent and lockbench, smoke suite:
#  - a patch to the README only: base and patched build one image, so the
#    job is an A/A of this machine: no-change at the first look, every row a
#    control, and the reply says why and carries a Tested-by;
#  - a patch whose lockbench claims the base's image in its documents (the
#    base's hash written into main.c): the image is the agent's word, hashed
#    from the binary that ran, so the claim is replaced, the sides differ,
#    and the statistics judge the job.
#  - patched builds start from the base's objects: the README patch builds
#    nothing, the liar's recompiles one file, and the binary is the one a
#    clean build of the patched tree makes; a patch to the Makefile's flags
#    (which make's .d files do not follow) gets a clean build;
#  - a base the agent's cache lacks starts from the nearest cached base's
#    objects: the tree moved on by the liar's commit, its base recompiles one
#    file, and the binary is the clean build's again.
. "$(dirname "$0")/lib/tap.sh"
. "$(dirname "$0")/lib/pg.sh"
. "$(dirname "$0")/lib/server.sh"
. "$(dirname "$0")/lib/agent.sh"

pg_start || exit 1
server_start --min-rounds 3 --max-rounds 3 || exit 1
register_agent
unpaired # the image rule is exact: this test judges no timing
tree_init

# the base's image, from a build of the tree as the agent builds it
make -s -C "$T/tree" BUILD=build LOCKLAB_VERSION=agent-build build/lockbench >"$T/base-build.log" 2>&1 ||
  { echo "Bail out! the base tree does not build: $(tail -3 "$T/base-build.log")"; exit 1; }
base_image=$("$T/tree/build/lockbench" image "$T/tree/build/lockbench" | cut -d' ' -f1)
like "$base_image" '^sha256:[0-9a-f]{64}$' "lockbench image gives the base build's image"
rm -rf "$T/tree/build"

make_series readme "printf '\nA line that builds nothing.\n' >>README.md"
make_series flags "sed -i 's/^OPT     ?= -O2 -g\$/OPT     ?= -O1 -g/' Makefile"
is "$(grep -c '^+OPT.*-O1' "$T/flags.mbox")" 1 "the series that changes the Makefile's flags is made"
make_series liar "perl -0pi -e 's/res->image = strdup\\(image\\);/res->image = strdup(\"$base_image\");/' lockbench/src/cmd_run.c"
is "$(grep -c "^+.*$base_image" "$T/liar.mbox")" 1 "the series that claims the base's image is made"

run_job() { # run_job NAME: one agent run of the queued job
  "$BIN/locklab-agent" --server "$URL" --token "$AGENT_TOKEN" --workdir "$T/agent-$1" \
    --native-tree "$T/tree" --once $AGENT_FLAGS >"$T/agent-$1.log" 2>&1
}
# images VARIANT: the distinct images the submission's VARIANT documents carry
images() { curl -s "$URL/api/v1/submissions/$SUB/results" | jq -r --arg v "$1" '[.results[] | select(.variant == $v) | .document.image] | unique | .[]'; }

submit_mbox "$T/readme.mbox"
run_job a; ok $? "the agent runs the README-only job"
api GET "/api/v1/submissions/$SUB"
is "$(jq -r .state <<<"$BODY")" done "the README-only submission is done"
is "$(jq -r .verdict <<<"$BODY")" no-change "and it is no-change"
is "$(jq -r '.jobs[0].identical_code' <<<"$BODY")" true "because both sides ran one image"
is "$(jq -r '.jobs[0].image' <<<"$BODY")" "$base_image" "the base's, as lockbench image gives it"
is "$(jq '[.verdicts[] | select(.control != true)] | length' <<<"$BODY")" 0 "every row is a control"
is "$(jq -r '.jobs[0].rounds_complete' <<<"$BODY")" 3 "decided at the first look"
is "$(images base)" "$base_image" "the base documents carry the base's image"
is "$(images patched)" "$base_image" "and so do the patched ones"
# hashed once per binary, when it was kept, not every round
is "$(grep -c 'msg="image of patched: ' "$T/agent-a.log")" 1 "the agent hashed the patched binary once for its 3 rounds"
is "$(grep -c 'msg="image of base: ' "$T/agent-a.log")" 1 "and the base's once"
like "$(grep -o 'image of patched: sha256:[0-9a-f]*' "$T/agent-a.log")" "$base_image\$" "the logged image is the one posted"
is "$(grep -c 'hashed again' "$T/agent-a.log")" 0 "no image was hashed again (the files did not change)"
is "$(grep -c 'patched: built on the base.s objects (1 file changed)' "$T/agent-a.log")" 1 \
  "the README patch is built on the base's objects"
reply=$(curl -s "$URL/api/v1/submissions/$SUB/reply")
like "$reply" 'code[[:space:]]+identical[[:space:]]+to[[:space:]]+the[[:space:]]+base' "the reply says no code changed"
like "$reply" '^Tested-by: ' "and carries a Tested-by"

submit_mbox "$T/liar.mbox"
run_job b; ok $? "the agent runs the job whose binary claims the base's image"
api GET "/api/v1/submissions/$SUB"
is "$(jq -r .state <<<"$BODY")" done "that submission is done"
is "$(jq -r '.jobs[0].identical_code' <<<"$BODY")" false "the claim does not make it an A/A"
is "$(images base)" "$base_image" "its base documents carry the base's image"
liar=$(images patched)
like "$liar" '^sha256:[0-9a-f]{64}$' "its patched documents carry an image"
[[ -n $liar && $liar != "$base_image" ]]
ok $? "hashed by the agent from the binary that ran, not the image it claimed"
is "$(jq '[.verdicts[] | select(.lock == "kmutex" and .control == true)] | length' <<<"$BODY")" 0 \
  "and the touched lock's rows are judged, not controls"
is "$(grep -c 'patched: built on the base.s objects (1 file changed)' "$T/agent-b.log")" 1 \
  "the liar is built on the base's objects"
# the same tree built clean, as the agent builds it
make -s -C "$T/work-liar" BUILD=build LOCKLAB_VERSION=agent-build build/lockbench >"$T/liar-build.log" 2>&1 ||
  diag "the liar's tree does not build: $(tail -3 "$T/liar-build.log")"
is "$("$T/work-liar/build/lockbench" image "$T/work-liar/build/lockbench" | cut -d' ' -f1)" "$liar" \
  "its image is the image of a clean build of the patched tree"

submit_mbox "$T/flags.mbox"
run_job c; ok $? "the agent runs the job that changes the Makefile's flags"
like "$(grep -o 'patched: a clean build: .*' "$T/agent-c.log")" 'it changes Makefile, which make does not follow' \
  "a change make does not follow gets a clean build"
api GET "/api/v1/submissions/$SUB"
is "$(images base)" "$base_image" "its base documents carry the base's image"
flags=$(images patched)
[[ $flags =~ ^sha256: && $flags != "$base_image" ]]
ok $? "and its patched binary is built with the new flags: another image"

# the tree moves on by the liar's commit: a base the cache lacks, one file
# from the base agent a cached with its objects
git -C "$T/tree" pull -q --ff-only "$T/work-liar" 2>/dev/null
is "$(git -C "$T/tree" rev-parse HEAD)" "$(git -C "$T/work-liar" rev-parse HEAD)" "the tree moves on by one commit"
submit_mbox "$T/readme.mbox"
run_job a; ok $? "the agent that cached the old base runs the README-only job on the new one"
old=$(git -C "$T/tree" rev-parse HEAD~1)
like "$(grep -o 'base: built on the objects of base [0-9a-f]* ([0-9]* files\? changed)' "$T/agent-a.log")" \
  "^base: built on the objects of base ${old:0:12} \(1 file changed\)" "the new base is built on the cached base's objects"
is "$(images base)" "$liar" "and its image is the clean build's of that tree"
is "$(images patched)" "$liar" "  (the README patch on it, too)"
cache=${LOCKLAB_BASE_CACHE:-$T/agent-a/base-cache}
new=$(git -C "$T/tree" rev-parse HEAD)
ls -d "$cache/$old"-*/build "$cache/$new"-*/build >/dev/null
ok $? "both bases are in the cache, with their objects"
done_testing
