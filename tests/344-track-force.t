#!/usr/bin/env bash
# The tracker past its first version, through the real server, PostgreSQL and
# git (a git daemon on loopback): a tree's mailing list on alert mail,
# sampled history inside a big push, force-pushed branches, an inconclusive
# bisection step measured again and then named as a range, and the fetch
# address policy on tree URLs.
#
# No agent runs here: what this test checks is what the tracker decides
# (which commit it runs next, what it records, when it stops), not what a
# measurement says (tests/343-track-bisect.t does that end to end).  A run's
# end is written into the database as an agent's post would leave it: its
# job and submission failed, or done with one verdict row.  Alerts are rows
# put in the way track_judge_candidates puts them once an A/B confirmed a
# step.
. "$(dirname "$0")/lib/tap.sh"
. "$(dirname "$0")/lib/pg.sh"
. "$(dirname "$0")/lib/server.sh"
. "$(dirname "$0")/lib/browser.sh"

pg_start || exit 1
[[ ${KEEP:-0} == 1 ]] && diag "scratch: $T"
psq() { psql -qAt -c "$1"; }

# the upstream: a small repository served by git daemon on loopback
gport=$(free_port)
git init -q --bare "$T/up.git"
git daemon --export-all --base-path="$T" --listen=127.0.0.1 --port="$gport" --reuseaddr \
  >"$T/git-daemon.log" 2>&1 &
gd=$!
at_exit "kill $gd"
UP="git://127.0.0.1:$gport/up.git"
git init -q -b master "$T/work"
git -C "$T/work" config user.name "Dev One"
git -C "$T/work" config user.email dev@example.org
C=()
commit_n() {
  echo "change $1" >>"$T/work/file.c"
  git -C "$T/work" add file.c
  git -C "$T/work" commit -qm "change $1"
  C[$1]=$(git -C "$T/work" rev-parse HEAD)
}
commit_n 0
git -C "$T/work" push -q "$T/up.git" master 2>/dev/null
for ((i = 0; i < 50; i++)); do git ls-remote "$UP" >/dev/null 2>&1 && break; sleep 0.1; done

server_start --track-interval 3600 --track-dir "$T/track" --fetch-allow "127.0.0.1:$gport" \
  --track-samples 2 --min-rounds 3 --max-rounds 9 || exit 1

tree_field() { curl -s "$URL/api/v1/trees" | jq -r --argjson t "$1" ".trees[] | select(.id == \$t) | $2"; }
poke() {
  api POST "/api/v1/trees/$1/poke" -H "Authorization: Bearer $ADMIN_TOKEN"
  [[ $CODE == 202 ]] || diag "poke $1: $CODE $BODY"
}
# wait_for SQL VALUE: until the query prints VALUE (up to 60 s); 0 or 1
wait_for() {
  local i
  for ((i = 0; i < 300; i++)); do
    [[ $(psq "$1") == "$2" ]] && return 0
    sleep 0.2
  done
  diag "waited for '$2' from: $1" "it says: $(psq "$1")"
  return 1
}
# one whole look of the tracker (poll, sample, read, judge, bisect) has
# passed: the refused tree (below) was looked at again after a poke
tracker_turn() {
  local before
  before=$(psq "SELECT track_checked FROM trees WHERE name = 'far'")
  poke "$FAR"
  wait_for "SELECT track_checked > '$before' FROM trees WHERE name = 'far'" t >/dev/null
  # read before the poke: a look that ends before the read would be waited for
  # in vain (60 s)
  before=$(psq "SELECT track_checked FROM trees WHERE name = 'far'")
  poke "$FAR"
  wait_for "SELECT track_checked > '$before' FROM trees WHERE name = 'far'" t >/dev/null
}
# end_run SUBMISSION: its jobs fail, as when an agent reports a failure
end_run() {
  psq "UPDATE jobs SET state = 'failed' WHERE submission_id = $1; UPDATE submissions SET state = 'failed' WHERE id = $1" >/dev/null
}
# verdict_run SUBMISSION VERDICT [LO HI]: its job is done with one verdict row on futex3
# uncontended, the change's interval LO..HI (default -0.1..0.5)
verdict_run() {
  psq "WITH j AS (UPDATE jobs SET state = 'done' WHERE submission_id = $1 RETURNING id),
       cm AS (INSERT INTO comparisons (job_id, suite, machine, base_rounds, patched_rounds, overall,
              final, alpha, min_effect, equiv_margin, min_samples)
              SELECT id, 'smoke', '{}', 3, 3, '$2', true, 0.05, 0.02, 0.02, 3 FROM j RETURNING id)
       INSERT INTO verdicts (comparison_id, idx, workload, lock, metric, unit, params_key, users,
              higher_better, base_n, base_mean, base_stddev, base_min, base_max, patched_n,
              patched_mean, patched_stddev, patched_min, patched_max, change, p, q, change_lo,
              change_hi, verdict, base_lockups, patched_lockups, base_runs, patched_runs, tested,
              significant)
       SELECT id, 0, 'uncontended', 'futex3', 'ns_per_pair', 'ns', 'threads=1', 1, false, 15, 20,
              5, 10, 40, 15, 24, 9, 10, 60, 0.2, 0.2, 0.3, ${3:--0.1}, ${4:-0.5}, '$2', 0, 0, 3, 3, true, false
       FROM cm; UPDATE submissions SET state = 'done' WHERE id = $1" >/dev/null
}
# alert GOOD BAD: a confirmed alert of futex3's uncontended row on the range, as the tracker opens one
alert() {
  psq "INSERT INTO alerts (tree_id, branch, machine_class, workload, lock, metric, params_key, state,
       good, bad, bisect_good, bisect_bad, change, before_mean, after_mean, unit, confirm_run)
       VALUES ($TREE, 'master', 'default', 'uncontended', 'futex3', 'ns_per_pair', 'threads=1',
       'confirmed', '$1', '$2', '$1', '$2', 0.8, 20, 36, 'ns',
       (SELECT min(id) FROM track_runs WHERE tree_id = $TREE)) RETURNING id"
}

# ---- trees: the list field, the fetch address policy ----
mk_tree() {
  api POST /api/v1/trees -H "Authorization: Bearer $ADMIN_TOKEN" -H 'Content-Type: application/json' -d "$1"
}
mk_tree "$(jq -n --arg u "$UP" '{name: "bad", url: $u, track: true, list: "two@a.org, three@b.org"}')"
is "$CODE" 400 "a list that is not one mail address is refused"
like "$BODY" 'list: one mail address' "and the reply says what a list is"
mk_tree "$(jq -n --arg u "$UP" --arg s "${C[0]}" \
  '{name: "lab", url: $u, branch: "master", track: true, since: $s, list: "locks@lists.example.org"}')"
is "$CODE" 201 "a tracked tree is registered with a list"
TREE=$(jq -r .id <<<"$BODY")
is "$(tree_field "$TREE" .list)" "locks@lists.example.org" "the trees API gives its list"

# git://127.0.0.1 on a port --fetch-allow does not name: refused before git connects
far_port=$(free_port)
mk_tree "$(jq -n --arg u "git://127.0.0.1:$far_port/up.git" '{name: "far", url: $u, track: true}')"
is "$CODE" 201 "a second tracked tree on an address the fetch policy refuses"
FAR=$(jq -r .id <<<"$BODY")
poke "$FAR"
wait_for "SELECT track_error IS NOT NULL FROM trees WHERE id = $FAR" t
like "$(tree_field "$FAR" .error)" "^refused: 127.0.0.1 port $far_port: refused by the fetch policy" \
  "the tracker refuses its URL under the fetch address policy, and says why"
is "$(psq "SELECT count(*) FROM track_runs WHERE tree_id = $FAR")" 0 "and runs nothing of it"

# ---- sampling: ten commits in one push ----
for n in 1 2 3 4 5 6 7 8 9 10; do commit_n $n; done
git -C "$T/work" push -q "$T/up.git" master 2>/dev/null
poke "$TREE"
wait_for "SELECT track_head FROM trees WHERE id = $TREE" "${C[10]}"
ok $? "c1..c10 arrive in one push and the tracker takes c10"
is "$(psq "SELECT purpose || ' ' || base_commit || ' ' || commit FROM track_runs WHERE tree_id = $TREE")" \
  "head ${C[0]} ${C[10]}" "the newest head runs first, against the start of the history"
tracker_turn
is "$(psq "SELECT count(*) FROM track_runs WHERE purpose = 'sample'")" 0 \
  "no commit inside the push is sampled while a job waits"
end_run "$(psq "SELECT submission_id FROM track_runs WHERE purpose = 'head'")"
wait_for "SELECT count(*) FROM track_runs WHERE purpose = 'sample'" 1
is "$(psq "SELECT base_commit || ' ' || commit FROM track_runs WHERE purpose = 'sample'")" "${C[0]} ${C[5]}" \
  "once agents are idle the middle of the push (c5) is sampled against c0"
end_run "$(psq "SELECT submission_id FROM track_runs WHERE purpose = 'sample'")"
wait_for "SELECT count(*) FROM track_runs WHERE purpose = 'sample'" 2
is "$(psq "SELECT base_commit || ' ' || commit FROM track_runs WHERE purpose = 'sample' ORDER BY id DESC LIMIT 1")" \
  "${C[5]} ${C[7]}" "then the middle of the widest gap left (c5..c10: c7)"
end_run "$(psq "SELECT submission_id FROM track_runs WHERE purpose = 'sample' ORDER BY id DESC LIMIT 1")"
tracker_turn
is "$(psq "SELECT count(*) FROM track_runs WHERE purpose = 'sample'")" 2 "and no more than --track-samples (2) per new head"

# ---- alert mail: To the author, Cc the tree's list ----
A1=$(alert "${C[1]}" "${C[2]}")
wait_for "SELECT state FROM alerts WHERE id = $A1" bisected
is "$(curl -s "$URL/api/v1/alerts" | jq -r --argjson a "$A1" '.alerts[] | select(.id == $a) | .commit')" "${C[2]}" \
  "an alert with nothing left to split names its bad end"
mail=$(psq "SELECT message FROM outbox WHERE kind = 'alert'")
like "$mail" "^To: Dev One <dev@example.org>" "its mail goes To the commit's author"
like "$mail" "^Cc: locks@lists.example.org" "and Cc the tree's list"
is "$(psq "SELECT recipients FROM outbox WHERE kind = 'alert'")" "dev@example.org, locks@lists.example.org" \
  "the outbox lists both recipients"

# ---- an inconclusive bisection step: measured again, then the range is named ----
A3=$(alert "${C[2]}" "${C[4]}")
wait_for "SELECT count(*) FROM bisect_steps WHERE alert_id = $A3" 1
is "$(psq "SELECT commit FROM bisect_steps WHERE alert_id = $A3")" "${C[3]}" "bisection tests the one commit inside c2..c4"
verdict_run "$(psq "SELECT r.submission_id FROM bisect_steps st JOIN track_runs r ON r.id = st.run_id WHERE st.alert_id = $A3")" inconclusive
wait_for "SELECT first_verdict FROM bisect_steps WHERE alert_id = $A3" inconclusive
is "$(psq "SELECT r.attempt || ' ' || j.rounds_wanted || ' ' || coalesce(st.verdict, 'open') FROM bisect_steps st JOIN track_runs r ON r.id = st.run_id JOIN jobs j ON j.submission_id = r.submission_id WHERE st.alert_id = $A3")" \
  "1 9 open" "an inconclusive step is not counted good: it is measured again, with --max-rounds (9) from the start"
is "$(psq "SELECT bisect_good || ' ' || state FROM alerts WHERE id = $A3")" "${C[2]} confirmed" "and the range is as it was"
verdict_run "$(psq "SELECT r.submission_id FROM bisect_steps st JOIN track_runs r ON r.id = st.run_id WHERE st.alert_id = $A3")" inconclusive
wait_for "SELECT state FROM alerts WHERE id = $A3" bisected
a3=$(curl -s "$URL/api/v1/alerts" | jq -c --argjson a "$A3" '.alerts[] | select(.id == $a)')
is "$(jq -r '.commit + "|" + .bisect_range' <<<"$a3")" "|${C[2]}..${C[4]}" \
  "inconclusive twice: bisection stops, names no commit and keeps the range c2..c4"
like "$(jq -r .reason <<<"$a3")" "inconclusive twice .* not guessed" "and says why"
is "$(jq -r '[.steps[] | .verdict] | join(",")' <<<"$a3")" inconclusive "one step, recorded as inconclusive"
is "$(psq "SELECT count(*) FROM outbox WHERE subject LIKE '%alert $A3]%'")" 0 "no mail names a commit it did not find"
# inconclusive twice, but the whole interval of the change (-5%..+5%) is below half the step (+80%)
A4=$(alert "${C[3]}" "${C[5]}")
wait_for "SELECT count(*) FROM bisect_steps WHERE alert_id = $A4" 1
verdict_run "$(psq "SELECT r.submission_id FROM bisect_steps st JOIN track_runs r ON r.id = st.run_id WHERE st.alert_id = $A4")" inconclusive -0.05 0.05
wait_for "SELECT first_verdict FROM bisect_steps WHERE alert_id = $A4" inconclusive
verdict_run "$(psq "SELECT r.submission_id FROM bisect_steps st JOIN track_runs r ON r.id = st.run_id WHERE st.alert_id = $A4")" inconclusive -0.05 0.05
wait_for "SELECT state FROM alerts WHERE id = $A4" bisected
is "$(psq "SELECT coalesce(commit, 'none') || ' ' || bisect_good FROM alerts WHERE id = $A4")" "${C[5]} ${C[4]}" \
  "an inconclusive step whose change is clearly smaller than the step counts good: c5 is named"
is "$(psq "SELECT verdict FROM bisect_steps WHERE alert_id = $A4")" inconclusive "the step is still recorded as inconclusive"

# ---- a force-push ----
A2=$(alert "${C[6]}" "${C[10]}")
wait_for "SELECT count(*) FROM bisect_steps WHERE alert_id = $A2" 1
git -C "$T/work" reset -q --hard "${C[6]}"
for n in 7 8; do
  echo "rewritten $n" >>"$T/work/file.c"
  git -C "$T/work" commit -qam "rewritten $n"
  R[$n]=$(git -C "$T/work" rev-parse HEAD)
done
git -C "$T/work" push -q --force "$T/up.git" master 2>/dev/null
poke "$TREE"
wait_for "SELECT track_head FROM trees WHERE id = $TREE" "${R[8]}"
ok $? "the force-pushed head is taken"
tr=$(curl -s "$URL/api/v1/trees" | jq -c --argjson t "$TREE" '.trees[] | select(.id == $t)')
is "$(jq -r '.segment' <<<"$tr")" 1 "the trees API says the history is in its second segment"
is "$(jq -r '.rewrites | map(.old_head + " " + .new_head + " " + .merge_base + " " + (.segment | tostring)) | join(";")' <<<"$tr")" \
  "${C[10]} ${R[8]} ${C[6]} 1" "and records the rewrite: old head c10, new head, merge base c6"
is "$(psq "SELECT base_commit FROM track_runs WHERE purpose = 'head' AND commit = '${R[8]}'")" "${C[6]}" \
  "the new head is measured against the merge base, not the old head"
is "$(psq "SELECT string_agg(commit, ' ' ORDER BY seq) FROM track_commits WHERE tree_id = $TREE AND segment = 1")" \
  "${C[0]} ${C[1]} ${C[2]} ${C[3]} ${C[4]} ${C[5]} ${C[6]} ${R[7]} ${R[8]}" \
  "the new segment holds the commits still on the branch, in order"
is "$(psq "SELECT string_agg(commit, ' ' ORDER BY seq) FROM track_commits WHERE tree_id = $TREE AND segment = 0")" \
  "${C[7]} ${C[8]} ${C[9]} ${C[10]}" "the dropped commits stay in the old one"
a2=$(curl -s "$URL/api/v1/alerts" | jq -c --argjson a "$A2" '.alerts[] | select(.id == $a)')
like "$(jq -r .reason <<<"$a2")" "force-pushed .* bisection does not cross a rewrite" \
  "an alert whose range the rewrite dropped stops bisecting, and says so"
tracker_turn
is "$(psq "SELECT count(*) FROM bisect_steps WHERE alert_id = $A2")" 1 "no bisection step is started across the rewrite"
is "$(psq "SELECT state || ' ' || coalesce(reason, '') FROM alerts WHERE id = $A1")" "bisected " \
  "an alert inside the history the branch kept is left as it was"

# ---- the Alerts page in a real browser ----
# the bisected alert's history (the measurement is faked as above: a level of 20 ns, then 36 from c2)
psq "INSERT INTO track_points (tree_id, branch, commit, machine_class, workload, lock, metric, params_key,
     higher_better, value, run_id) SELECT $TREE, 'master', commit, 'default', 'uncontended', 'futex3',
     'ns_per_pair', 'threads=1', false, CASE WHEN seq < (SELECT seq FROM track_commits WHERE commit = '${C[2]}')
     THEN 20 ELSE 36 END + (seq % 3), (SELECT min(id) FROM track_runs) FROM track_commits WHERE tree_id = $TREE
     AND segment = 1" >/dev/null
api PATCH "/api/v1/alerts/$A1" -H "Authorization: Bearer $ADMIN_TOKEN" -H 'Content-Type: application/json' \
  -d '{"state": "wontfix", "who": "maintainer"}'
is "$CODE" 200 "an admin marks the bisected alert wontfix"
browser_run "the Alerts page lists the alerts, their state, reasons, the rewrite and a history chart" \
  alerts.mjs "$URL" "$A1" "$A3" "$A2" "${C[6]}" "$ADMIN_TOKEN"

# ---- a step reported and fixed is not reported again ----
# a later A/B over its commit (a head or sample run, a change point's
# confirmation) shows the step again while the range does not hold the fix:
# the fixed alert's commit stands for it and no other alert opens
echo "rewritten 9" >>"$T/work/file.c"
git -C "$T/work" commit -qam "rewritten 9"
R[9]=$(git -C "$T/work" rev-parse HEAD)
git -C "$T/work" push -q "$T/up.git" master 2>/dev/null
poke "$TREE"
wait_for "SELECT count(*) FROM track_runs WHERE purpose = 'head' AND commit = '${R[9]}'" 1
ok $? "the next head, r9, is run against r8"
A5=$(psq "INSERT INTO alerts (tree_id, branch, machine_class, workload, lock, metric, params_key, state,
       good, bad, bisect_good, bisect_bad, commit, change, before_mean, after_mean, unit, confirm_run)
       VALUES ($TREE, 'master', 'default', 'uncontended', 'futex3', 'ns_per_pair', 'threads=1',
       'fixed', '${R[8]}', '${R[9]}', '${R[8]}', '${R[9]}', '${R[9]}', 0.8, 20, 36, 'ns',
       (SELECT min(id) FROM track_runs WHERE tree_id = $TREE)) RETURNING id")
hs=$(psq "SELECT submission_id FROM track_runs WHERE purpose = 'head' AND commit = '${R[9]}'")
verdict_run "$hs" regression 0.1 0.3
wait_for "SELECT processed IS NOT NULL FROM track_runs WHERE submission_id = $hs" t
ok $? "the head run r8 -> r9 ends regression and the tracker reads it"
is "$(psq "SELECT count(*) FROM alerts WHERE tree_id = $TREE AND bad = '${R[9]}'")" 1 \
  "no alert opens for a step whose commit a fixed alert names"
like "$(cat "$SERVER_LOG")" "alert $A5 already stands for the step ${R[8]:0:12}..${R[9]:0:12}" \
  "the tracker says the fixed alert stands for it"
done_testing
