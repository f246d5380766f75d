#!/usr/bin/env bash
# One push of 8 commits holds a step at either end: the head run's
# interleaved A/B says `regression`, one alert opens at once (found_by
# ab-head) and bisection names the first or the last commit, through the
# real server, PostgreSQL, git (a git daemon on loopback) and two agents,
# with a sample run per head that waits while its tree bisects.  Then a
# commit that reverts the last branch's step: its head run's A/B says
# `improvement` and the alert becomes fixed, by that commit.
#
# Two tracked trees, one branch each of the same upstream, every branch
# 8 commits on top of this repository, each touching
# lockbench/locks/futex3.c (so the agent measures futex3).  The step: a
# busy loop of 400 iterations in futex3's lock path (about 20 ns a pair
# become several hundred) at commit 1 (first) or 8 (last) of the push.
# Each tree is registered after its push with `since` the common base: its
# first look is the push, one head run of 0 -> 8.  E-Divisive cannot see a
# step in two history points; the A/B can.  A step inside the push and a
# comment-only push: tests/349-track-push-step.t.
. "$(dirname "$0")/lib/tap.sh"
. "$(dirname "$0")/lib/pg.sh"
. "$(dirname "$0")/lib/server.sh"
. "$(dirname "$0")/lib/agent.sh"
. "$(dirname "$0")/lib/track.sh"

pg_start || exit 1
[[ ${KEEP:-0} == 1 ]] && diag "scratch: $T"
gport=$(free_port)
# one sample run per head, taken when nothing else waits
server_start --min-rounds 4 --max-rounds 8 --lease-seconds 15 --track-interval 3600 \
  --track-dir "$T/track" --fetch-allow "127.0.0.1:$gport" --track-samples 1 || exit 1
register_agent

track_upstream "$gport"

# a branch of 8 commits on C0, the step at commit $2 (0: none); C[branch.n] their hashes
make_branch() {
  track_branch "$T/work" "$C0" "$1" 8 "$2"
  git -C "$T/work" push -q "$T/up.git" "$1" 2>/dev/null
}
make_branch first 1
make_branch last 8
psq() { psql -qAt -c "$1"; }

declare -A TREE
for b in first last; do
  api POST /api/v1/trees -H "Authorization: Bearer $ADMIN_TOKEN" -H 'Content-Type: application/json' \
    -d "$(jq -n --arg u "$UP" --arg b "$b" --arg s "$C0" '{name: ("push-" + $b), url: $u, branch: $b, track: true, since: $s, suites: ["smoke"]}')"
  [[ $CODE == 201 ]] || diag "tree $b: $CODE $BODY"
  TREE[$b]=$(jq -r .id <<<"$BODY")
done
ok $([[ -n ${TREE[last]} && ${TREE[last]} != null ]]; echo $?) "two tracked trees are registered after their pushes"

# two agents: the two head runs and the bisections go on side by side
export LOCKLAB_FETCH_ALLOW="127.0.0.1:$gport"
# one base cache for both agents (make test's for the whole run), as agents of
# one machine share it: a new base starts from the nearest cached one's objects
export LOCKLAB_BASE_CACHE=${LOCKLAB_BASE_CACHE:-$T/base-cache}
agent_spawn a
register_agent '{"name": "b"}'
agent_spawn b

# until both trees have alerts, all bisected, and nothing is queued or running; an alert is
# one headline row of a step (futex3's uncontended ns per pair, hot ops per second ...)
alerts_of() { curl -s "$URL/api/v1/alerts?tree=push-$1" | jq -c '.alerts'; }
start=$(date +%s)
for ((i = 0; i < 3600; i++)); do
  all=$(curl -s "$URL/api/v1/alerts")
  trees=$(jq '[.alerts[].tree] | unique | length' <<<"$all")
  open=$(jq '[.alerts[] | select(.state != "bisected")] | length' <<<"$all")
  busy=$(psq "SELECT count(*) FROM jobs WHERE state IN ('queued', 'running')")
  sampled=$(psq "SELECT count(*) FROM trees WHERE track AND track_sampled < 1")
  [[ $trees -ge 2 && $open == 0 && $busy == 0 && $sampled == 0 ]] && break
  sleep 1
done
diag "bench: $(($(date +%s) - start)) s from registration to the bisected alerts and idle agents"
is "$(psq "SELECT count(*) FROM track_runs WHERE purpose = 'head'")" 2 "each push is one head run"
is "$(psq "SELECT count(*) FROM track_runs WHERE purpose = 'confirm'")" 0 \
  "no step waited for a change point: the head runs' A/B was the confirmation"

for b in first last; do
  case $b in first) n=1 ;; last) n=8 ;; esac
  AS=$(alerts_of $b)
  A=$(jq -c '.[0] // empty' <<<"$AS")
  diag "$b: $(jq -c '[.[] | {row: (.workload + " " + .lock + " " + .metric + " " + .params), state, found_by, commit: .commit[0:12], change, reason, steps: [.steps[] | {c: .commit[0:12], verdict}]}]' <<<"$AS")"
  is "$(jq -r '[.[].commit] | unique | join(",")' <<<"$AS")" "${C[$b.$n]}" \
    "push with the step at commit $n: its alerts name commit $n"
  is "$(jq -r '[.[].found_by] | unique | join(",")' <<<"$AS")" ab-head "  found by the A/B of the head run"
  is "$(jq -r '[.[].range] | unique | join(",")' <<<"$AS")" "$C0..${C[$b.8]}" "  their range is the head run's, 0..8"
  is "$(jq length <<<"$AS")" 1 "  one alert for the step"
  is "$(jq -r '.lock' <<<"$A")" futex3 "  on a row of futex3 ($(jq -r '.workload + " " + .metric + " " + .params' <<<"$A"))"
  is "$(jq -r '[.events[].state] | join(" ")' <<<"$A")" "new confirmed bisected" "  new, confirmed, bisected"
  like "$(jq -r '.events[0].note' <<<"$A")" "A/B of the head run .*: regression [-+][0-9]" \
    "  the first event says which A/B found it"
  steps=$(jq '.steps | length' <<<"$A")
  [[ $steps -ge 1 && $steps -le 4 ]]
  ok $? "  bisection took $steps A/B steps for the 7 commits inside"
  runs=$(psq "SELECT count(*) FROM track_runs WHERE tree_id = ${TREE[$b]} AND purpose = 'bisect'")
  # each step once, or twice when inconclusive (attempt 1, --max-rounds)
  [[ $runs -le $((2 * steps)) ]]
  ok $? "  its bisection took $runs A/B runs"
done
is "$(curl -s "$URL/api/v1/alerts" | jq '[.alerts[] | select(.lock != "futex3")] | length')" 0 \
  "no alert on the untouched control lock"
nb=$(cat "$T"/agent-*.log | grep -c 'base: built on the objects of base')
[[ $nb -ge 1 ]]; ok $? "bisection's bases start from the nearest cached base's objects ($nb of them)"
is "$(cat "$T"/agent-*.log | grep -c 'base: the build on cached objects failed')" 0 "  and none of those builds failed"

# sampling waited while a tree bisected: a tree's sample run comes after its alert is bisected
is "$(psq "SELECT count(*) FROM track_runs r JOIN alerts a ON a.tree_id = r.tree_id JOIN submissions s ON s.id = r.submission_id WHERE r.purpose = 'sample' AND s.created < (SELECT max(at) FROM alert_events e WHERE e.alert_id = a.id AND e.state = 'bisected')")" 0 \
  "no sample run started while its tree's alert was being bisected"

mail=$(psq "SELECT message FROM outbox WHERE kind = 'alert' AND subject LIKE '%${C[last.8]:0:12}%'")
like "$mail" "^Subject: \[locklab alert [0-9]+\] ${C[last.8]:0:12} futex3: wait a little" "the alert mail names commit 8"
like "$mail" "found by the interleaved A/B of a new head" "and says how the step was found"

# the fix: a ninth commit on the last branch takes the busy loop out again; its
# head run (8 -> 9) ends `improvement` and the alert of commit 8 becomes fixed by it
git -C "$T/work" checkout -q last
git -C "$T/work" revert --no-edit "${C[last.8]}" >/dev/null
C[last.9]=$(git -C "$T/work" rev-parse HEAD)
git -C "$T/work" push -q "$T/up.git" last 2>/dev/null
api POST "/api/v1/trees/${TREE[last]}/poke" -H "Authorization: Bearer $ADMIN_TOKEN"
is "$CODE" 202 "a ninth commit that reverts the step is pushed"
for ((i = 0; i < 1800; i++)); do
  st=$(alerts_of last | jq -r '.[0].state')
  busy=$(psq "SELECT count(*) FROM jobs WHERE state IN ('queued', 'running')")
  [[ $st != bisected && $busy == 0 ]] && break
  sleep 1
done
AS=$(alerts_of last)
A=$(jq -c '.[0] // empty' <<<"$AS")
diag "after the revert: $(jq -c '[.[] | {state, fixed_by: .fixed_by[0:12], events: [.events[] | .state + ": " + .note]}]' <<<"$AS")"
is "$(psq "SELECT count(*) FROM track_runs WHERE tree_id = ${TREE[last]} AND purpose = 'head' AND base_commit = '${C[last.8]}' AND commit = '${C[last.9]}'")" 1 \
  "the revert is one head run, 8 -> 9"
is "$(jq -r '.state + " " + .fixed_by' <<<"$A")" "fixed ${C[last.9]}" "the alert of commit 8 is fixed, by commit 9"
like "$(jq -r '.events[-1].state + " " + .events[-1].who + ": " + .events[-1].note' <<<"$A")" \
  "^fixed tracker: .*A/B of the head run .*: improvement [-+][0-9]" "  its last event says which A/B showed the improvement"
is "$(jq length <<<"$AS")" 1 "  no other alert opened on that tree"
is "$(psq "SELECT count(*) FROM track_runs WHERE tree_id = ${TREE[last]} AND purpose IN ('bisect', 'confirm') AND commit = '${C[last.9]}'")" 0 \
  "  and nothing is bisected for it"
done_testing
