#!/usr/bin/env bash
# A tracked branch gets one push of 8 commits, the fifth of which slows
# futex3's lock path down: the head run's interleaved A/B says
# `regression`, one alert opens at once for the step (on the row the A/B was
# surest of) and bisection names commit 5; a
# second tracked branch gets a push of 8 comment-only commits and no alert.
# Through the real server, PostgreSQL, one agent and a git daemon on
# loopback, with the cheapest settings that keep the A/B real: the smoke
# suite, 4 to 8 interleaved rounds, no A/A noise measurement, no samples.
#
# make bench-track runs it for other pushes (bench/bench-track.sh):
#   TRACK_COMMITS=N  commits in the push (8)
#   TRACK_STEP=K     the commit holding the step, 1..N (5)
#   TRACK_COMMENTS=0 leaves the comment-only branch out (1)
#   TRACK_SAMPLES=S  the server's --track-samples (0)
#   TRACK_SLOWDOWN=atomic  the step is a global atomic counter in the lock
#                    path (about +30%), not a busy loop (spin; tests/lib/track.sh)
# and reads its "# bench:" line.
. "$(dirname "$0")/lib/tap.sh"
. "$(dirname "$0")/lib/pg.sh"
. "$(dirname "$0")/lib/server.sh"
. "$(dirname "$0")/lib/agent.sh"
. "$(dirname "$0")/lib/track.sh"

N=${TRACK_COMMITS:-8}
K=${TRACK_STEP:-5}
COMMENTS=${TRACK_COMMENTS:-1}
pg_start || bail_out "no postgres"
[[ ${KEEP:-0} == 1 ]] && diag "scratch: $T"
gport=$(free_port)
server_start --min-rounds 4 --max-rounds 8 --lease-seconds 15 --track-interval 3600 \
  --track-dir "$T/track" --fetch-allow "127.0.0.1:$gport" --track-samples "${TRACK_SAMPLES:-0}" ||
  bail_out "no server"
register_agent

track_upstream "$gport"
psq() { psql -qAt -c "$1"; }

branches=(step)
[[ $COMMENTS == 1 ]] && branches+=(comments)
# each branch starts at C0 and is tracked from there before anything is pushed
declare -A TREE
for b in "${branches[@]}"; do
  git -C "$T/work" push -q "$T/up.git" "$C0:refs/heads/$b" 2>/dev/null
  api POST /api/v1/trees -H "Authorization: Bearer $ADMIN_TOKEN" -H 'Content-Type: application/json' \
    -d "$(jq -n --arg u "$UP" --arg b "$b" --arg s "$C0" '{name: ("push-" + $b), url: $u, branch: $b, track: true, since: $s, suites: ["smoke"]}')"
  [[ $CODE == 201 ]] || diag "tree $b: $CODE $BODY"
  TREE[$b]=$(jq -r .id <<<"$BODY")
done
for ((i = 0; i < 600; i++)); do
  [[ $(psq "SELECT count(*) FROM trees WHERE track AND track_head = '$C0'") == "${#branches[@]}" ]] && break
  sleep 0.5
done
is "$(psq "SELECT count(*) FROM trees WHERE track AND track_head = '$C0'")" "${#branches[@]}" \
  "the tracked branches are at their first commit"

# the push: N commits on C0, each touching futex3 (so the agent measures it); the
# step branch's commit K slows futex3's lock path down (tests/lib/track.sh)
push_branch() {
  track_branch "$T/work" "$C0" "$1" "$N" "$2" "${TRACK_SLOWDOWN:-spin}"
  git -C "$T/work" push -q "$T/up.git" "$1" 2>/dev/null
  api POST "/api/v1/trees/${TREE[$1]}/poke" -H "Authorization: Bearer $ADMIN_TOKEN"
  [[ $CODE == 202 ]] || diag "poke $1: $CODE $BODY"
}
push_branch step "$K"
[[ $COMMENTS == 1 ]] && push_branch comments 0
start=$(date +%s)
agent_spawn a --noise-interval 0 --fetch-allow "127.0.0.1:$gport"

alerts_of() { curl -s "$URL/api/v1/alerts?tree=push-$1" | jq -c '.alerts'; }
# until the step branch's alerts are all bisected and, with the comment-only
# branch, its head run ended
named=
for ((i = 0; i < 3600; i++)); do
  AS=$(alerts_of step)
  if [[ -z $named && $(jq 'length > 0 and all(.[]; .state == "bisected")' <<<"$AS") == true ]]; then
    named=$(($(date +%s) - start))
    diag "bench: ${named} s ($((named / 60)) min $((named % 60)) s) from the push of $N commits to the alert naming commit $K ($(jq -r '[.[].commit[0:12]] | unique | join(",")' <<<"$AS"))"
  fi
  ended=$(psq "SELECT count(*) FROM track_runs r JOIN submissions s ON s.id = r.submission_id WHERE r.purpose = 'head' AND s.state IN ('done', 'failed')")
  [[ -n $named && $ended == "${#branches[@]}" ]] && break
  sleep 1
done
diag "runs: $(psq "SELECT r.purpose || ' ' || left(r.base_commit, 7) || '..' || left(r.commit, 7) || ' ' || s.state || ' ' || to_char(s.updated - s.created, 'MI:SS') FROM track_runs r JOIN submissions s ON s.id = r.submission_id ORDER BY r.id" | paste -sd';')"

AS=$(alerts_of step)
A=$(jq -c '.[0] // empty' <<<"$AS")
diag "alerts: $(jq -c '[.[] | {row: (.workload + " " + .lock + " " + .metric + " " + .params), state, found_by, commit: .commit[0:12], change, reason, steps: [.steps[] | {c: .commit[0:12], verdict}]}]' <<<"$AS")"
is "$(psq "SELECT count(*) FROM track_runs WHERE tree_id = ${TREE[step]} AND purpose = 'head'")" 1 \
  "the push is one head run, 0..$N"
is "$(jq -r '[.[].commit] | unique | join(",")' <<<"$AS")" "${C[step.$K]}" \
  "the alerts of the push name commit $K"
is "$(jq -r '[.[].found_by] | unique | join(",")' <<<"$AS")" ab-head "  found by the A/B of the head run"
is "$(jq length <<<"$AS")" 1 "  one alert for the step"
is "$(jq -r '.lock' <<<"$A")" futex3 "  on a row of futex3 ($(jq -r '.workload + " " + .metric + " " + .params' <<<"$A"))"
like "$(jq -r '.events[0].note' <<<"$A")" "A/B of the head run .*: regression [-+][0-9]" \
  "  its first event says which A/B found it"
is "$(psq "SELECT count(*) FROM track_runs WHERE tree_id = ${TREE[step]} AND purpose = 'confirm'")" 0 \
  "  no step waited for a change point"
mail=$(psq "SELECT message FROM outbox WHERE kind = 'alert' AND subject LIKE '%${C[step.$K]:0:12}%'")
like "$mail" "found by the interleaved A/B of a new head" "  its mail says how the step was found"

if [[ $COMMENTS == 1 ]]; then
  is "$(psq "SELECT s.state FROM track_runs r JOIN submissions s ON s.id = r.submission_id WHERE r.tree_id = ${TREE[comments]} AND r.purpose = 'head'")" done \
    "comment-only push: its head run ended"
  is "$(alerts_of comments)" "[]" "comment-only push: no alert"
  is "$(psq "SELECT count(*) FROM track_runs WHERE tree_id = ${TREE[comments]} AND purpose IN ('bisect', 'confirm')")" 0 \
    "comment-only push: no bisection"
fi
done_testing
