#!/usr/bin/env bash
# A tree registered by local path (--allow-local-trees: server and agents on
# one filesystem) and tracked: the tracker's A/B run of a new head is a git
# submission of the tree's own path, which an agent started with
# --allow-local-trees fetches, builds and measures, and an agent without it
# refuses with the words the server uses at registration.  One round of the
# smoke suite, lockstep and noise measurements off: the test is about where
# the code comes from, not about what it measures.
. "$(dirname "$0")/lib/tap.sh"
. "$(dirname "$0")/lib/pg.sh"
. "$(dirname "$0")/lib/server.sh"
. "$(dirname "$0")/lib/agent.sh"

skip_without_bwrap
pg_start || exit 1
[[ ${KEEP:-0} == 1 ]] && diag "scratch: $T"
server_start --allow-local-trees --track-interval 3600 --track-dir "$T/track" --track-samples 0 \
  --min-rounds 1 --max-rounds 1 || exit 1
register_agent
tree_init
branch=$(git -C "$T/tree" symbolic-ref --short HEAD)
c0=$(git -C "$T/tree" rev-parse HEAD)
# commit N: a comment in kmutex.c (the run measures kmutex, pthread the control)
commit_n() {
  sed -i "1s|^|/* tracked change $1 */\\n|" "$T/tree/lockbench/locks/kmutex.c"
  git -C "$T/tree" commit -qam "kmutex: tracked change $1"
}
psq() { psql -qAt -c "$1"; }
# run_of COMMIT: the submission of the tracker's run of COMMIT (waits up to 60 s)
run_of() {
  local i s
  for ((i = 0; i < 300; i++)); do
    s=$(psq "SELECT submission_id FROM track_runs WHERE commit = '$1'")
    [[ -n $s ]] && break
    sleep 0.2
  done
  echo "$s"
}
agent_opts=(--lockstep off --noise-interval 0)

commit_n 1
c1=$(git -C "$T/tree" rev-parse HEAD)
api POST /api/v1/trees -H "Authorization: Bearer $ADMIN_TOKEN" -H 'Content-Type: application/json' \
  -d "$(jq -n --arg u "$T/tree" --arg b "$branch" --arg s "$c0" \
    '{name: "local", url: $u, branch: $b, track: true, since: $s, suites: ["smoke"]}')"
is "$CODE" 201 "a tree by local path is registered for tracking"
tree=$(jq -r .id <<<"$BODY")
s1=$(run_of "$c1")
ok $((${s1:-0} > 0 ? 0 : 1)) "the tracker runs the new head against 'since' (submission ${s1:-none})"
is "$(psq "SELECT git_url FROM submissions WHERE id = ${s1:-0}")" "$T/tree" \
  "the run's git URL is the tree's own path"

# 1. an agent without --allow-local-trees refuses it, saying why
agent_spawn plain --once "${agent_opts[@]}"
wait_state "$s1" failed done 180 >/dev/null
api GET "/api/v1/submissions/$s1"
is "$(jq -r .state <<<"$BODY")" failed "without --allow-local-trees the tracked run fails"
like "$(jq -r '[.jobs[]?.reason] | join(" ")' <<<"$BODY")" \
  "refused: git url '$T/tree' is not an http, https, git or ssh URL \\(local trees need --allow-local-trees\\)" \
  "the reason is the server's words for a local tree, naming the option"
wait "$AGENT_PID"
unlike "$(cat "$T/agent-plain.log")" 'built ' "nothing was built"

# 2. the next head, to an agent with --allow-local-trees: fetched, built, measured
commit_n 2
c2=$(git -C "$T/tree" rev-parse HEAD)
api POST "/api/v1/trees/$tree/poke" -H "Authorization: Bearer $ADMIN_TOKEN"
is "$CODE" 202 "the tree is poked"
s2=$(run_of "$c2")
ok $((${s2:-0} > 0 ? 0 : 1)) "the tracker runs the next head (submission ${s2:-none})"
# and a job of that tree whose git URL names another local path (written into the
# database: the server takes no local git URL) is refused even then
api POST /api/v1/submissions -H 'Content-Type: application/json' \
  -d "$(jq -n --arg r "$c2" '{git: {url: "https://h/l.git", ref: $r}, tree: "local", suites: ["smoke"]}')"
s3=$(jq -r .id <<<"$BODY")
psq "UPDATE submissions SET git_url = '$T/track' WHERE id = $s3" >/dev/null
agent_spawn local --allow-local-trees "${agent_opts[@]}"
wait_state "$s2" done failed 900 >/dev/null
api GET "/api/v1/submissions/$s2"
is "$(jq -r .state <<<"$BODY")" done "with --allow-local-trees the agent fetches, builds and measures it"
[[ $(jq -r .state <<<"$BODY") == done ]] || diag "$(jq -c '[.jobs[]? | {state, reason}]' <<<"$BODY")"
ok $(($(psq "SELECT count(*) FROM results r JOIN jobs j ON j.id = r.job_id WHERE j.submission_id = $s2") > 0 ? 0 : 1)) \
  "its results are stored"
like "$(psq "SELECT string_agg(DISTINCT v.lock, ',') FROM verdicts v JOIN comparisons cm ON cm.id = v.comparison_id JOIN jobs j ON j.id = cm.job_id WHERE j.submission_id = $s2")" \
  kmutex "the patched side is the tracked commit (kmutex is judged)"

wait_state "$s3" failed done 180 >/dev/null
api GET "/api/v1/submissions/$s3"
like "$(jq -r '[.jobs[]?.reason] | join(" ")' <<<"$BODY")" \
  "refused: git url '$T/track' is a local path other than its tree's" \
  "a job's git URL naming another local path is refused"
kill -0 "$AGENT_PID"
ok $? "the agent goes on"
done_testing
