#!/usr/bin/env bash
# A fault inside one push of a tracked tree is an alert and is bisected: a
# push of 4 commits whose third makes kmutex_init abort.  The head run
# (since -> 4) ends `crash` (the patched side dies, the base runs clean), an
# alert of that fault opens at once (found_by ab-head, metric crash, no
# figure), and bisection judges each commit by whether its job crashes too:
# the second is clean, the third crashes, so the third is named, and its
# mail and the Alerts page (web/test/faultalert.mjs, skipped without
# chromium and web/node_modules) say crash.  One round of the smoke suite, lockstep and noise
# measurements off: the test is about what the tracker does with a fault.
. "$(dirname "$0")/lib/tap.sh"
. "$(dirname "$0")/lib/pg.sh"
. "$(dirname "$0")/lib/server.sh"
. "$(dirname "$0")/lib/agent.sh"
. "$(dirname "$0")/lib/browser.sh"

skip_without_bwrap
pg_start || exit 1
[[ ${KEEP:-0} == 1 ]] && diag "scratch: $T"
server_start --allow-local-trees --track-interval 3600 --track-dir "$T/track" --track-samples 0 \
  --min-rounds 1 --max-rounds 1 || exit 1
register_agent
tree_init
branch=$(git -C "$T/tree" symbolic-ref --short HEAD)
c0=$(git -C "$T/tree" rev-parse HEAD)
cat >"$T/abort.pl" <<'PL'
s/(static int kmutex_init\(void \*p\)\n\{\n)/$1\t__builtin_abort();\n/;
PL
# commit N [abort]: a comment in kmutex.c, or kmutex_init's abort
commit_n() {
  if [[ ${2:-} == abort ]]; then
    perl -0pi "$T/abort.pl" "$T/tree/lockbench/locks/kmutex.c"
  else
    sed -i "1s|^|/* tracked change $1 */\\n|" "$T/tree/lockbench/locks/kmutex.c"
  fi
  git -C "$T/tree" commit -qam "kmutex: tracked change $1"
  git -C "$T/tree" rev-parse HEAD
}
psq() { psql -qAt -c "$1"; }

c1=$(commit_n 1)
c2=$(commit_n 2)
c3=$(commit_n 3 abort)
c4=$(commit_n 4)
is "$(git -C "$T/tree" show "$c3" | grep -c '^+.*__builtin_abort();')" 1 "the third commit makes kmutex_init abort"

agent_spawn fault --allow-local-trees --lockstep off --noise-interval 0
api POST /api/v1/trees -H "Authorization: Bearer $ADMIN_TOKEN" -H 'Content-Type: application/json' \
  -d "$(jq -n --arg u "$T/tree" --arg b "$branch" --arg s "$c0" \
    '{name: "local", url: $u, branch: $b, track: true, since: $s, suites: ["smoke"]}')"
is "$CODE" 201 "the tree is registered for tracking"

# the alert: opened by the head run's crash, then bisected (at most 400 s)
alert=""
for ((i = 0; i < 400; i++)); do
  alert=$(psq "SELECT id FROM alerts WHERE state = 'bisected'")
  [[ -n $alert ]] && break
  sleep 1
done
ok $((${alert:-0} > 0 ? 0 : 1)) "an alert is bisected (alert ${alert:-none})" ||
  diag "$(psq "SELECT purpose, base_commit, commit, s.state, s.verdict FROM track_runs r JOIN submissions s ON s.id = r.submission_id ORDER BY r.id")"
head_verdict=$(psq "SELECT s.verdict FROM track_runs r JOIN submissions s ON s.id = r.submission_id
                    WHERE r.purpose = 'head' AND r.commit = '$c4'")
is "$head_verdict" crash "the head run ($c0..$c4) ends crash"
api GET /api/v1/alerts
a=$(jq -c --arg id "${alert:-0}" '.alerts[] | select(.id == ($id | tonumber))' <<<"$BODY")
is "$(jq -r '[.metric, .found_by, .range] | join(" ")' <<<"$a")" "crash ab-head $c0..$c4" \
  "it is an alert of the crash, found by the head run's A/B, on the push's range" || diag "$a"
is "$(jq -r '[.workload, .lock] | join(" ")' <<<"$a")" "$(psq "SELECT l.workload || ' ' || l.lock FROM lockups l
  JOIN jobs j ON j.id = l.job_id JOIN track_runs r ON r.submission_id = j.submission_id
  WHERE r.purpose = 'head' AND l.variant = 'patched' ORDER BY l.id LIMIT 1")" "on the point that crashed"
is "$(jq -r .commit <<<"$a")" "$c3" "bisection names the commit that aborts"
is "$(jq -c '[.steps[] | [.commit[0:12], .verdict]]' <<<"$a")" \
  "[[\"${c2:0:12}\",\"no-change\"],[\"${c3:0:12}\",\"regression\"]]" \
  "in two steps: the second commit runs clean, the third crashes again" || diag "$a"
like "$(jq -r '.events[] | select(.state == "new") | .note' <<<"$a")" 'ended crash: crash: ' \
  "its first event keeps the finding's words"
mail=$(psq "SELECT subject FROM outbox WHERE kind = 'alert'")
like "$mail" "^\\[locklab alert $alert\\] ${c3:0:12} kmutex: tracked change 3: crash\$" "the alert's mail says crash"
like "$(psq "SELECT message FROM outbox WHERE kind = 'alert'")" "locklab found a new crash in local \\(branch $branch\\)" \
  "and its body names the fault, not a change of a figure"
is "$(psq "SELECT count(*) FROM alerts")" 1 "one alert for the step"
browser_run "the Alerts page shows the fault's alert" faultalert.mjs "$URL" "${alert:-0}" "$c3"
kill "$AGENT_PID" 2>/dev/null
done_testing
