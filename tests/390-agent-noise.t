#!/usr/bin/env bash
# The agent measures its machine's noise: at its first job of a
# suite it runs the job's base lockbench against itself for --noise-rounds
# paired rounds, through the path the job's rounds take, compares them and
# posts each point's spread to POST /api/v1/noise; that job (claimed before
# the profile, no result in yet) and the next job of its machine class are
# planned from that profile; within --noise-interval it does not measure again.
. "$(dirname "$0")/lib/tap.sh"
. "$(dirname "$0")/lib/pg.sh"
. "$(dirname "$0")/lib/server.sh"
. "$(dirname "$0")/lib/agent.sh"

pg_start || exit 1
server_start --min-rounds 3 --max-rounds 6 || exit 1
register_agent '{"name": "n1", "machine_class": "noisy2"}'
tree_init

make_series one "sed -i '1s|^|/* kmutex: a comment that changes nothing */\\n|' lockbench/locks/kmutex.c"
make_series two "sed -i '1s|^|/* kmutex: another comment that changes nothing */\\n|' lockbench/locks/kmutex.c"
submit_mbox "$T/one.mbox" smoke; one=$SUB
submit_mbox "$T/two.mbox" smoke; two=$SUB

agent_once() { # LOG: one job with noise measurement on, every hour
  "$BIN/locklab-agent" --server "$URL" --token "$AGENT_TOKEN" --workdir "$T/agent-a" \
    --native-tree "$T/tree" --once --noise-interval 3600 --noise-rounds 3 >"$T/$1" 2>&1
}
agent_once agent-1.log
ok $? "the agent runs the first job and exits (--once)"
log=$(cat "$T/agent-1.log")
like "$log" 'noise: measuring suite smoke, 3 A/A rounds of base' "it measured the machine's A/A noise first, with the base lockbench"
like "$log" 'noise: posted [0-9]+ points of suite smoke \(3 rounds, [0-9.]+ s a round\)' "and posted the profile"
api GET "/api/v1/noise?machine_class=noisy2&suite=smoke"
is "$CODE" 200 "the server has the profile"
n=$(jq '.profiles | length' <<<"$BODY")
ok "$((n > 0 ? 0 : 1))" "with $n points"
is "$(jq -c '[.profiles[] | .rounds] | unique' <<<"$BODY")" "[3]" "each from 3 paired rounds"
is "$(jq '[.profiles[] | select(.sd >= 0 and .sd < 10)] | length' <<<"$BODY")" "$n" "each with a spread that is a relative figure"
is "$(jq -r '[.profiles[] | select(.workload == "uncontended" and .lock == "kmutex" and .metric == "ns_per_pair")] | length' <<<"$BODY")" 1 \
  "the kmutex uncontended point (the series' lock) is in it"
ok "$(jq -e '.profiles[0].round_seconds > 0' <<<"$BODY" >/dev/null; echo $?)" "with the seconds a paired round took"
api GET "/api/v1/submissions/$one"
is "$(jq -r '.state' <<<"$BODY")" done "the first job ran to the end"
ok "$(jq -e '.jobs[0].plan.rows | length > 0' <<<"$BODY" >/dev/null; echo $?)" \
  "it was claimed before any profile, and planned from the profile it posted"
is "$(jq -r '.jobs[0].plan.rounds >= 3 and .jobs[0].plan.max_rounds <= 6' <<<"$BODY")" true \
  "its rounds lie within the paired minimum and --max-rounds"
rc1=$(jq -r '.jobs[0].rounds_complete' <<<"$BODY")
api GET "/api/v1/submissions/$one/results"
is "$(jq '.results | length' <<<"$BODY")" "$((2 * rc1))" "the A/A documents were not posted as the job's results ($rc1 rounds, 2 documents each)"
# the posted spread against one computed here from the A/A documents the
# agent kept (JOBDIR/noise; uncontended in lockstep, as the job's rounds run
# it), the way the agent recovers it from compare's paired test on the log
# ratios of the 3 rounds' figures (an uncontended time's: its fastest sample): that test's 95% interval is exp(m +- t s /
# sqrt(3)) - 1 (m and s the mean and sd of ln(patched / base), t =
# t(0.975, 2)), and the agent posts its half-width times sqrt(3) / t.  (The
# sd of raw differences over the base mean, which this compared before,
# differs from it by the rounds' own level changes: 15% once, on a VM whose
# uncontended cost moves between 18 and 22 ns.)
posted=$(curl -s "$URL/api/v1/noise?machine_class=noisy2" |
  jq -r '.profiles[] | select(.workload == "uncontended" and .lock == "kmutex" and .metric == "ns_per_pair") | .sd')
job1=$(sql "SELECT id FROM jobs WHERE submission_id = $one")
mine=$(python3 - "$T/agent-a/jobs/$job1/noise" <<'PY'
import json, math, statistics, sys
d = sys.argv[1]
def mean(side, r):
    # uncontended ran paired (lockstep: duet-SIDE-rN) or in the side's own run (out-SIDE-rN)
    for sub in ("duet", "out"):
        try:
            doc = json.load(open("%s/%s-%s-r%d/result.json" % (d, sub, side, r)))
        except FileNotFoundError:
            continue
        runs = [x for x in doc["runs"] if x["workload"] == "uncontended" and x["lock"] == "kmutex"]
        if runs:
            break
    s = [v for run in runs for v in (run.get("samples", {}).get("ns_per_pair") or [run["metrics"]["ns_per_pair"]])]
    return min(s)  # an uncontended time's round figure is its fastest sample (lib/compare.c)
logs = [math.log(mean("patched", r) / mean("base", r)) for r in range(3)]
m, s, t = statistics.mean(logs), statistics.stdev(logs), 4.302652729911275
h = t * s / math.sqrt(3)
print((math.exp(m + h) - math.exp(m - h)) / 2 * math.sqrt(3) / t)
PY
)
diag "kmutex uncontended ns_per_pair: posted sd $posted, from the documents $mine"
ok "$(python3 -c "import sys; a, b = float(sys.argv[1]), float(sys.argv[2]); sys.exit(0 if abs(a - b) <= 1e-6 * b else 1)" "$posted" "$mine"; echo $?)" \
  "the posted spread is the A/A documents' own (the paired test's, on the log ratios of the rounds)"
is "$(jq -c '[.runs[] | select(.workload == "uncontended") | .instrument.ns_per_pair] | unique' \
  "$T/agent-a/jobs/$job1/noise/duet-base-r0/result.json" 2>/dev/null)" '["lockstep"]' \
  "the A/A rounds ran uncontended in lockstep, as the job's rounds do"
ok "$([[ -f $T/agent-a/noise-smoke.stamp ]]; echo $?)" "the agent keeps when it measured (workdir noise-smoke.stamp)"

agent_once agent-2.log
ok $? "the agent runs the second job"
unlike "$(cat "$T/agent-2.log")" 'noise: measuring' "within --noise-interval it does not measure again"
api GET "/api/v1/submissions/$two"
is "$(jq -r '.state' <<<"$BODY")" done "the second job ran to the end"
ok "$(jq -e '.jobs[0].plan.rows | length > 0' <<<"$BODY" >/dev/null; echo $?)" "the second job was planned from the profile"
is "$(jq -r '.jobs[0].plan.rounds >= 3 and .jobs[0].plan.max_rounds <= 6' <<<"$BODY")" true \
  "its rounds lie within the paired minimum and --max-rounds"
diag "planned: $(jq -c '.jobs[0] | {rounds: .plan.rounds, max: .plan.max_rounds, unresolvable: .plan.unresolvable}' <<<"$BODY")"

done_testing
