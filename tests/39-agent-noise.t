#!/usr/bin/env bash
# The agent measures its machine's noise (issue 12): at its first job of a
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
# agent kept (JOBDIR/noise; uncontended in lockstep, as the job's rounds run it):
# the sd of the per-round paired difference of
# kmutex's uncontended ns per pair over the base mean (within 10%: the
# agent recovers it from compare's interval, whose test may be on log ratios)
posted=$(curl -s "$URL/api/v1/noise?machine_class=noisy2" |
  jq -r '.profiles[] | select(.workload == "uncontended" and .lock == "kmutex" and .metric == "ns_per_pair") | .sd')
job1=$(sql "SELECT id FROM jobs WHERE submission_id = $one")
mine=$(python3 - "$T/agent-a/jobs/$job1/noise" <<'PY'
import json, statistics, sys
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
    run = runs[0]
    s = run.get("samples", {}).get("ns_per_pair") or [run["metrics"]["ns_per_pair"]]
    return sum(s) / len(s)
b = [mean("base", r) for r in range(3)]
p = [mean("patched", r) for r in range(3)]
print(statistics.stdev([y - x for x, y in zip(b, p)]) / statistics.mean(b))
PY
)
diag "kmutex uncontended ns_per_pair: posted sd $posted, from the documents $mine"
ok "$(python3 -c "import sys; a, b = float(sys.argv[1]), float(sys.argv[2]); sys.exit(0 if abs(a - b) <= 0.1 * b else 1)" "$posted" "$mine"; echo $?)" \
  "the posted spread is the A/A documents' own (per-round paired differences)"
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
