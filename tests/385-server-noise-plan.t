#!/usr/bin/env bash
# Rounds planned from the machine's own noise: an agent posts its
# class's A/A spread per suite point (POST /api/v1/noise); a job of that
# class asks for the rounds that reach the target MDE, within the time
# budget; a row whose resolution at the job's most rounds is past its margin
# is said up front ("this machine cannot resolve less than X%"), and when it
# stays inconclusive with what it shows inside its margin it asks for no
# more rounds and is reported as not resolvable, never as no-change: it holds
# the job at inconclusive and back a Tested-by (one needs every deciding row
# shown unchanged); one that moved past its margin keeps the job looking
# (inconclusive at the limit, no Tested-by).  A class without a profile keeps
# the server's rounds; there the job's own rounds find the rows they cannot
# resolve by its limit (futility), and the same documents end inconclusive
# early.
#
# The documents are made by lockbench: one real smoke run of pthread is the
# template (its points, parameter keys, units and figures), and each round's
# copy moves its samples by a seeded amount (+-0.3% for single-thread cost,
# +-40% for contended throughput, as the two kinds of row vary on a loaded
# 2-CPU machine), so the verdicts are the same every time.
source "$(dirname "$0")/lib/tap.sh"
source "$TOP/tests/lib/pg.sh"
source "$TOP/tests/lib/server.sh"
source "$TOP/tests/lib/browser.sh"

pg_start || { echo "Bail out! no postgres"; exit 1; }
server_start --min-rounds 5 --max-rounds 12 --plan-budget 600 || { echo "Bail out! no server"; exit 1; }
make_series "$T/s" || { echo "Bail out! git format-patch failed"; exit 1; }
"$BIN/lockbench" run --suite smoke --locks pthread --json "$T/template.json" >"$T/lb.log" 2>&1 ||
  { echo "Bail out! lockbench run failed: $(tail -3 "$T/lb.log")"; exit 1; }

# doc VARIANT ROUND: a copy of the template for one side of one round
doc() {
  python3 - "$T/template.json" "$1" "$2" <<'PY'
import json, os, random, sys
d = json.load(open(sys.argv[1]))
variant, rnd = sys.argv[2], int(sys.argv[3])
rng = random.Random("%s-%d" % (variant, rnd))
# UNC_SPREAD: uncontended's spread instead of +-0.3%; SLOW: patched's
# uncontended cost that much higher (a fraction); HOT4_SWING: hot
# throughput at 4 threads without noise, patched's that fraction higher in
# even rounds and lower in odd ones, moved by HOT4_SHIFT besides
unc = float(os.environ.get("UNC_SPREAD", "0.003"))
slow = float(os.environ.get("SLOW", "0")) if variant == "patched" else 0.0
swing = float(os.environ.get("HOT4_SWING", "0"))
for run in d["runs"]:
    for m, xs in run.get("samples", {}).items():
        # the template's own samples flattened to their mean: only the seeded
        # noise below moves a round's figures, whatever machine made it
        if xs:
            xs[:] = [sum(xs) / len(xs)] * len(xs)
        spread = 0.40 if (run["workload"] == "hot" and m == "ops_per_sec") else 0.003
        if swing and run["workload"] == "hot" and m == "ops_per_sec" and run["params"]["threads"] == 4:
            spread = 0
            if variant == "patched":
                shift = float(os.environ.get("HOT4_SHIFT", "0"))
                xs[:] = [x * (1 + shift + (swing if rnd % 2 == 0 else -swing)) for x in xs]
        if run["workload"] == "uncontended" and m == "ns_per_pair":
            spread = unc
            xs[:] = [x * (1 + slow) for x in xs]
        xs[:] = [x * (1 + rng.uniform(-spread, spread)) for x in xs]
        if xs:
            run["metrics"][m] = sum(xs) / len(xs)
d["variant"], d["round"] = variant, rnd
d.pop("image", None)  # made-up samples stand for two builds, not one image
print(json.dumps(d))
PY
}
# post JOB TOKEN VARIANT ROUND
post() {
  doc "$3" "$4" >"$T/round.json"
  api POST "/api/v1/jobs/$1/results" -H "Authorization: Bearer $2" \
    -H "Idempotency-Key: job-$1-$3-$4" -d @"$T/round.json"
}
# run_job JOB TOKEN: post rounds until the job asks for none; sets POSTED
run_job() {
  local r=0 more=1
  POSTED=0
  while ((more > 0 && r < 40)); do
    post "$1" "$2" base "$r"
    post "$1" "$2" patched "$r"
    more=$(jq -r '.more_rounds // 0' <<<"$BODY")
    [[ $CODE == 20[01] ]] || { diag "round $r: $CODE $BODY"; break; }
    r=$((r + 1))
  done
  POSTED=$r
}
# submit_one N: a one-patch smoke submission with its own Message-ID; sets SUB
submit_one() {
  sed "s/^Message-ID: .*/Message-ID: <noise-plan-$1@example.org>/I" "$T/s/single.patch" >"$T/one-$1.patch"
  jq -Rs '{mbox: ., suites: ["smoke"]}' "$T/one-$1.patch" >"$T/req.json"
  api POST /api/v1/submissions -d @"$T/req.json"
  SUB=$(jq -r .id <<<"$BODY")
}
# the parameter keys lockbench gives the template's points
lbkey() { # WORKLOAD THREADS
  jq -r --arg w "$1" --argjson t "$2" '.runs[] | select(.workload == $w and .params.threads == $t)
    | .params | to_entries | sort_by(.key) | map("\(.key)=\(.value)") | join(",")' "$T/template.json"
}
UNC=$(lbkey uncontended 1) HOT2=$(lbkey hot 2) HOT4=$(lbkey hot 4)
like "$UNC" 'threads=1' "the template has lockbench's uncontended point ($UNC)"

register_agent '{"name": "small", "machine_class": "small2"}'
A=$AGENT_TOKEN A_ID=$AGENT_ID

# posting a profile: who may, and what is refused
profile() { # UNC_SD HOT_SD ROUND_SECONDS
  jq -n --arg u "$UNC" --arg h2 "$HOT2" --arg h4 "$HOT4" --argjson us "$1" --argjson hs "$2" --argjson rs "$3" \
    '{suite: "smoke", rounds: 5, round_seconds: $rs, points: [
       {workload: "uncontended", lock: "pthread", params: $u, metric: "ns_per_pair", users: 1, sd: $us},
       {workload: "hot", lock: "pthread", params: $h2, metric: "ops_per_sec", users: 2, sd: $hs},
       {workload: "hot", lock: "pthread", params: $h4, metric: "ops_per_sec", users: 4, sd: $hs},
       {workload: "hot", lock: "pthread", params: $h2, metric: "cov", users: 2, sd: 0.9}]}'
}
profile 0.02 0.5 20 >"$T/p1.json"
api POST /api/v1/noise -d @"$T/p1.json"
is "$CODE" 401 "posting a noise profile without a token is 401"
api POST /api/v1/noise -H "Authorization: Bearer $ADMIN_TOKEN" -d @"$T/p1.json"
is "$CODE" 403 "the admin token is no agent's: 403"
jq '.points[0].sd = -1' "$T/p1.json" >"$T/bad.json"
api POST /api/v1/noise -H "Authorization: Bearer $A" -d @"$T/bad.json"
is "$CODE" 400 "a negative spread is 400"
like "$(jq -r .detail <<<"$BODY")" 'points\[0\]: sd' "and the reply names the point and the field"
jq '.rounds = 1' "$T/p1.json" >"$T/bad.json"
api POST /api/v1/noise -H "Authorization: Bearer $A" -d @"$T/bad.json"
is "$CODE" 400 "a profile of one round is 400 (no spread from one pair)"
jq '.points[1].extra = 1' "$T/p1.json" >"$T/bad.json"
api POST /api/v1/noise -H "Authorization: Bearer $A" -d @"$T/bad.json"
is "$CODE" 400 "an unknown field is 400"
jq '.points = []' "$T/p1.json" >"$T/bad.json"
api POST /api/v1/noise -H "Authorization: Bearer $A" -d @"$T/bad.json"
is "$CODE" 400 "a profile without points is 400"
is "$(sql "SELECT count(*) FROM noise_profiles")" 0 "nothing refused was stored"
api POST /api/v1/noise -H "Authorization: Bearer $A" -d @"$T/p1.json"
is "$CODE" 201 "the agent's profile is stored (201)"
is "$(jq -r '[.machine_class, .points] | join(",")' <<<"$BODY")" "small2,4" "for the agent's machine class, every point"
api GET "/api/v1/noise?machine_class=small2"
is "$CODE" 200 "GET /api/v1/noise answers 200"
is "$(jq -r --arg k "$UNC" '.profiles[] | select(.workload == "uncontended" and .params == $k) | [.sd, .rounds, .round_seconds, .agent] | join(",")' <<<"$BODY")" \
  "0.02,5,20,$A_ID" "it gives the point's spread, rounds, seconds a round and the agent"
api GET "/api/v1/noise?machine_class=nosuch"
is "$(jq -r '.profiles | length' <<<"$BODY")" 0 "a class without a profile has none"

# planned rounds, judged at 0.05 / (12 / 5 rounded up + 2) = 0.01: uncontended
# sd 2% reaches its 3% margin at 9 rounds (resolution (t(0.99, 8) + t(0.9, 8))
# * 0.02 / 3 = (2.896459 + 1.396815) * 0.02 / 3 = 2.86%; at 8 rounds 3.12%);
# hot sd 50% resolves (2.718079 + 1.363430) * 0.5 / sqrt(12) = 58.9% at the
# limit of 12 rounds (budget 600 s / 20 s a round = 30, --max-rounds 12): not
# resolvable
submit_one 1
s1=$SUB
claim "$A"
j1=$JOB
is "$(jq -r '[.job.rounds, .job.more_rounds] | join(",")' <<<"$BODY")" "5,5" \
  "the job looks first at --min-rounds (5), its plan being past that"
api GET "/api/v1/submissions/$s1"
is "$(jq -r '.jobs[0] | [.rounds, .plan.rounds, .max_rounds, .plan.max_rounds] | join(",")' <<<"$BODY")" "5,9,12,12" \
  "its plan asks for the 9 rounds the uncontended row needs to resolve its 3% margin, its limit is --max-rounds (600 s allow 30)"
like "$(jq -r '.jobs[0].plan.unresolvable[]' <<<"$BODY")" \
  "^this machine cannot resolve less than 58\.9% on hot pthread .*threads=2 ops_per_sec" \
  "the plan says up front that this machine cannot resolve less than 58.9% on hot at 2 threads"
is "$(jq -r '.jobs[0].plan.unresolvable | length' <<<"$BODY")" 2 "and at 4 threads (descriptive cov is not planned)"
is "$(jq -r --arg k "$UNC" '.jobs[0].plan.rows[] | select(.params == $k) | [.rounds, .resolvable] | join(",")' <<<"$BODY")" \
  "9,true" "the uncontended row is resolvable in 9 rounds"

run_job "$j1" "$A"
is "$POSTED" 5 "the job was done at its first look (the documents are quieter than the profile)"
is "$(sql "SELECT state || ',' || verdict FROM jobs WHERE id = $j1")" "done,inconclusive" \
  "the comparison is inconclusive: the unresolvable hot rows were not shown unchanged"
api GET "/api/v1/submissions/$s1"
is "$(jq -r '.verdict' <<<"$BODY")" inconclusive "the submission's verdict is inconclusive"
is "$(jq -r '[.verdicts[] | select(.workload == "hot" and .metric == "ops_per_sec") | .verdict] | unique | join(",")' <<<"$BODY")" \
  inconclusive "the hot throughput rows themselves stayed inconclusive (never called no-change)"
is "$(jq -r '[.verdicts[] | select(.workload == "hot" and .metric == "ops_per_sec") | .unresolvable * 1000 | round] | join(",")' <<<"$BODY")" \
  "589,589" "and carry the resolution this machine cannot go below"
is "$(jq -r '.verdicts[] | select(.workload == "uncontended") | .verdict' <<<"$BODY")" no-change \
  "the uncontended row is no-change"
api GET "/api/v1/submissions/$s1/reply"
reply=$BODY
unlike "$reply" '^Tested-by: ' "the reply carries no Tested-by"
like "$(tr '\n' ' ' <<<"$reply" | tr -s ' ')" \
  "cannot resolve less than 58\.9% on .*not resolvable on this machine, so they are not counted as no-change and hold back a Tested-by" \
  "and says which rows this machine cannot resolve and that they hold back the Tested-by"
api GET "/api/v1/submissions/$s1/report?format=text"
like "$BODY" "not resolvable on this machine: 58\.9%" "the text report's verdict column says not resolvable with the resolution"

# a row its plan cannot resolve decides nothing only while what it shows lies
# inside its margin (compare_row_moved).  Patched's hot throughput at 4
# threads 1.10 times base's in even rounds and 0.60 times in odd ones: log
# ratios +0.0953 and -0.5108, at 5 rounds a change of exp(-0.147) - 1 =
# -13.7% (t -0.99), at 9 -16.0% (t -1.6), at 12 -18.8% (sd 0.316, t -2.28, p
# 0.044 two-sided, not below the level the job judges at): past the row's
# 10% margin and not a change found at any look, so the job looks to its
# limit and stays inconclusive.  Before, the row was excused whatever it
# showed: no-change and a Tested-by.  The row at 2 threads, inside its
# margin, is still excused and said.
submit_one 7
s7=$SUB
claim "$A"
jv=$JOB
is "$(sql "SELECT (plan->>'rounds') || ',' || max_rounds FROM jobs WHERE id = $jv")" "9,12" \
  "a job of the first class is planned as the first (9 rounds, at most 12)"
HOT4_SWING=0.25 HOT4_SHIFT=-0.15 run_job "$jv" "$A"
is "$POSTED" 12 "with hot at 4 threads some 19% lower it looks to its limit (12 rounds)"
is "$(sql "SELECT state || ',' || verdict FROM jobs WHERE id = $jv")" "done,inconclusive" \
  "and ends inconclusive, not no-change"
api GET "/api/v1/submissions/$s7"
is "$(jq -r '.verdict' <<<"$BODY")" inconclusive "the submission's verdict is inconclusive"
is "$(jq -r --arg k "$HOT4" '.verdicts[] | select(.final and .workload == "hot" and .metric == "ops_per_sec" and .params == $k)
  | [.verdict, (.change * 1000 | round), (.unresolvable * 1000 | round)] | join(",")' <<<"$BODY")" "inconclusive,-188,589" \
  "its hot row at 4 threads: inconclusive at -18.8%, past its margin, not resolvable (58.9%)"
is "$(jq -r '[.verdicts[] | select(.final and .metric != "lockup" and (.metric == "ns_per_pair" or .metric == "ops_per_sec"))
  | "\(.workload):\(.margin)"] | join(",")' <<<"$BODY")" "hot:0.1,hot:0.1,uncontended:0.03" \
  "each row carries the margin it was judged against: 10% for contended throughput, 3% for single-thread cost"
is "$(jq -r '[.verdicts[] | select(.final and (.metric == "ns_per_pair" or .metric == "ops_per_sec"))
  | "\(.workload)/\(.users):\(.moved)"] | join(",")' <<<"$BODY")" "hot/2:false,hot/4:true,uncontended/1:false" \
  "each row carries whether it moved past its margin as the comparison judged it: only hot at 4 threads (the dashboard reads this flag)"
api GET "/api/v1/submissions/$s7/report?format=text"
like "$BODY" "threads=4 .*not resolvable on this machine: 58\.9%; moved past its margin" \
  "the text report says the row moved past its margin"
unlike "$BODY" "threads=2 .*moved past its margin" "and does not say so of the row at 2 threads"
api GET "/api/v1/submissions/$s7/reply"
unlike "$BODY" '^Tested-by: ' "the reply carries no Tested-by"
reply=$(python3 -c 'import quopri, sys; sys.stdout.write(quopri.decodestring(sys.stdin.buffer.read()).decode())' <<<"$BODY" |
  tr '\n' ' ' | tr -s ' ')
like "$reply" "could not show every deciding row unchanged: 2 rows stayed inconclusive, hot\.pthread\.ops_per_sec \([^)]*\) [-+][0-9.]+% \[[-+][0-9.]+%, [-+][0-9.]+%\] against its \+-10% margin, so no Tested-by" \
  "it says two rows stayed inconclusive and names the widest with its interval"
like "$reply" "cannot resolve less than 58\.9% on hot\.pthread\.ops_per_sec \([^)]*threads=2\) \(margin \+-10%, measured [-+][0-9.]+% \[" \
  "it names the row at 2 threads it cannot resolve, with its interval"
like "$reply" "[0-9.]+% on hot\.pthread\.ops_per_sec \([^)]*threads=4\) \(margin \+-10%, measured -18\.8%" "and the row that moved"
browser_run "the dashboard shows each row's margin and which rows this machine cannot resolve" \
  noiseplan.mjs "$URL" "$s7"

# a faster round and a quieter machine: a new profile moves the plan of the
# next job (uncontended sd 1%: 5 rounds, resolution (3.746947 + 1.533206) *
# 0.01 / sqrt(5) = 2.36%, 3.09% at 4; 100 s a round: 6 rounds in 600 s)
register_agent '{"name": "big", "machine_class": "other"}'
O=$AGENT_TOKEN
profile 0.01 0.5 100 >"$T/p2.json"
api POST /api/v1/noise -H "Authorization: Bearer $A" -d @"$T/p2.json"
is "$CODE" 201 "a new profile replaces the class's figures"
is "$(sql "SELECT count(*) FROM noise_profiles WHERE machine_class = 'small2'")" 4 "one row per point, replaced"
submit_one 2
s2=$SUB
claim "$A"
j2=$JOB
is "$(jq -r '[.job.rounds] | join(",")' <<<"$BODY")" 5 "the next job asks for the 5 rounds the new spread needs"
is "$(sql "SELECT max_rounds FROM jobs WHERE id = $j2")" 6 "and its limit is what 600 s allow at 100 s a round"
like "$(sql "SELECT plan->'unresolvable'->>0 FROM jobs WHERE id = $j2")" "less than 98\.8% on hot" \
  "at 6 rounds hot resolves 98.8% ((3.364930 + 1.475884) * 0.5 / sqrt(6)), said up front"

# the class without a profile keeps --min-rounds/--max-rounds; there the
# job's own rounds show the hot rows' spread (+-40% a sample) cannot fit
# inside their 10% margin by its limit (plan_mark_futile): they stop asking
# for rounds and are reported as not resolvable, with the MDE at 12 rounds
claim "$O"
jo=$JOB
is "$(jq -r '.job.rounds' <<<"$BODY")" 5 "a class without a profile asks for --min-rounds"
is "$(sql "SELECT coalesce(plan::text, 'none') || ',' || coalesce(max_rounds::text, 'none') FROM jobs WHERE id = $jo")" \
  "none,12" "and has no plan; its limit is the server's --max-rounds, kept with the job"
run_job "$jo" "$O"
ok $((!(POSTED >= 5 && POSTED < 12))) "it stopped before --max-rounds (12): at $POSTED"
is "$(sql "SELECT verdict FROM jobs WHERE id = $jo")" inconclusive "and ended inconclusive: rows its rounds cannot resolve were not shown unchanged"
is "$(sql "SELECT count(*) FROM verdicts v JOIN comparisons c ON c.id = v.comparison_id WHERE c.job_id = $jo
  AND c.final AND v.workload = 'hot' AND v.metric = 'ops_per_sec' AND v.verdict = 'inconclusive' AND v.unresolvable > 0.10")" 2 \
  "both hot throughput rows stayed inconclusive and carry an MDE at 12 rounds past their 10% margin"
is "$(sql "SELECT count(*) FROM verdicts v JOIN comparisons c ON c.id = v.comparison_id WHERE c.job_id = $jo
  AND c.final AND v.unresolvable IS NOT NULL AND NOT (v.workload = 'hot' AND v.metric = 'ops_per_sec')")" 0 \
  "no other row is marked (the uncontended row is +-0.3% a sample)"
js=$(sql "SELECT submission_id FROM jobs WHERE id = $jo")
api GET "/api/v1/submissions/$js"
is "$(jq -r --argjson j "$jo" '[.verdicts[] | select(.job == $j and .workload == "hot" and .metric == "ops_per_sec") | .unresolvable > 0.1] | unique | join(",")' <<<"$BODY")" \
  true "the submission shows the MDE of those rows (no plan: from the job's own rounds)"
api GET "/api/v1/submissions/$js/report?format=text"
like "$BODY" "not resolvable on this machine: [0-9.]+%" "and the text report says not resolvable"

# a plan is made once: a job claimed again after its lease ran out keeps it,
# whatever the profile says by then
api POST /api/v1/noise -H "Authorization: Bearer $A" -d @"$T/p1.json"
sql "UPDATE jobs SET lease_expires = now() - interval '1 second' WHERE id = $j2" >/dev/null
claim "$A"
is "$JOB" "$j2" "the job whose lease ran out is claimed again"
is "$(jq -r '.job.rounds' <<<"$BODY")" 5 "and keeps the rounds it was planned with"
api GET /api/v1/noise
is "$(jq -r '[.profiles[].machine_class] | unique | join(",")' <<<"$BODY")" small2 "GET without a class lists every class's profile"

# an agent measures a suite's noise at its first job of that suite, after the
# claim (which found no profile to plan from): the profile it then posts plans
# that job, which has no result yet; a job with a result is left alone
register_agent '{"name": "late", "machine_class": "late2"}'
L=$AGENT_TOKEN
submit_one 3
claim "$L"
jl=$JOB
is "$(jq -r '.job.rounds' <<<"$BODY")" 5 "a first job claimed before its class had a profile asks for --min-rounds"
api POST /api/v1/noise -H "Authorization: Bearer $L" -d @"$T/p1.json"
is "$CODE" 201 "its agent then posts the class's first profile"
is "$(sql "SELECT rounds_wanted || ',' || (plan->>'rounds') || ',' || max_rounds FROM jobs WHERE id = $jl")" "5,9,12" \
  "which plans that job: a first look at 5, 9 rounds planned, at most 12 (as the first plan above)"
like "$(sql "SELECT plan->'unresolvable'->>0 FROM jobs WHERE id = $jl")" "less than 58\.9% on hot" \
  "and says up front what this class cannot resolve"
run_job "$jl" "$L"
is "$POSTED" 5 "the job was done at its first look"
is "$(sql "SELECT verdict FROM jobs WHERE id = $jl")" inconclusive "and ended (inconclusive: hot cannot be resolved), where unplanned it ran to 12"
register_agent '{"name": "later", "machine_class": "late3"}'
M=$AGENT_TOKEN
submit_one 4
claim "$M"
jm=$JOB
post "$jm" "$M" base 0
api POST /api/v1/noise -H "Authorization: Bearer $M" -d @"$T/p2.json"
is "$CODE" 201 "a first profile posted while its agent holds a job with a result in is stored"
is "$(sql "SELECT coalesce(plan::text, 'none') || ',' || rounds_wanted FROM jobs WHERE id = $jm")" "none,5" \
  "but that job is not planned: it keeps the rounds it began with"

# a plan past --min-rounds (uncontended sd 2.4%: 11 rounds, resolution
# (2.763769 + 1.372184) * 0.024 / sqrt(11) = 2.99%, 3.19% at 10) looks first at
# --min-rounds and then at its planned rounds; a change found at the first
# look is confirmed on as many rounds again
register_agent '{"name": "wide", "machine_class": "wide2"}'
W=$AGENT_TOKEN
profile 0.024 0.5 20 >"$T/p3.json"
api POST /api/v1/noise -H "Authorization: Bearer $W" -d @"$T/p3.json"
submit_one 5
claim "$W"
jw=$JOB
is "$(jq -r '.job.rounds' <<<"$BODY")" 5 "a plan of 11 rounds looks first at --min-rounds"
is "$(sql "SELECT (plan->>'rounds') || ',' || max_rounds FROM jobs WHERE id = $jw")" "11,12" \
  "and keeps its planned rounds (11) and its limit (12)"
for ((r = 0; r < 5; r++)); do
  UNC_SPREAD=0.04 post "$jw" "$W" base "$r"
  UNC_SPREAD=0.04 post "$jw" "$W" patched "$r"
done
is "$(sql "SELECT rounds_wanted || ',' || coalesce(verdict, 'none') FROM jobs WHERE id = $jw")" "11,none" \
  "inconclusive at 5 rounds (uncontended spread +-4%), it asks for the planned 11"
submit_one 6
claim "$W"
jz=$JOB
SLOW=0.10 run_job "$jz" "$W"
is "$POSTED" 10 "a 10% slowdown found at the first look is confirmed on 5 more (10 in all, not 11 + 11)"
is "$(sql "SELECT verdict FROM jobs WHERE id = $jz")" regression "and is a regression"

done_testing
