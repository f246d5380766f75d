#!/usr/bin/env bash
# Ingest keeps what it validated: a result document is stored as jsonb and
# read back for every comparison, so a number that jsonb would turn into
# something jansson cannot read (1e19 comes back as a 20-digit integer) is
# refused at the door with a 4xx, and the edge values that do read back
# (2^53, -0.0, subnormals, 1e18) are stored and the job still reaches its
# verdict.  Strings in a document are bounded.
source "$(dirname "$0")/lib/tap.sh"
source "$TOP/tests/lib/pg.sh"
source "$TOP/tests/lib/server.sh"

server_setup --min-rounds 1 --max-rounds 1
register_agent
A=$AGENT_TOKEN
submit_mbox "$T/s/series.mbox"
sub=$SUB
claim "$A"
job=$JOB
like "$job" '^[0-9]+$' "a job is claimed"

# edit VARIANT PYTHON-EXPR-FOR-RUN0: a round-0 document whose first run gets
# an "edge" metric with the samples the expression gives (raw JSON text so
# that the numbers are written exactly as given)
edge_doc() {
  result_doc "$1" 0 1 >"$T/base.json"
  python3 - "$T/base.json" "$2" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
run = doc["runs"][0]
run["metrics"]["edge"] = 1.0
run["units"]["edge"] = "x"
run["better"]["edge"] = "higher"
run["samples"]["edge"] = "@EDGE@"
print(json.dumps(doc).replace('"@EDGE@"', sys.argv[2]))
PY
}
# post VARIANT SAMPLES-JSON KEY: sets CODE, BODY
post_edge() {
  edge_doc "$1" "$2" >"$T/edge.json"
  api POST "/api/v1/jobs/$job/results" -H "Authorization: Bearer $A" -H "Idempotency-Key: $3" \
    -d @"$T/edge.json"
}
results() { sql "SELECT count(*) FROM results"; }

# refused at the door, and nothing stored
for v in "9223372036854775808" "9.223372036854775808e18" "1e19" "-1e19" "1.7e308" "1.5e300"; do
  before=$(results)
  post_edge patched "[1.0, $v, 2.0]" "bad-$v"
  ok $((CODE < 400 || CODE >= 500)) "a sample of $v is refused with a 4xx ($CODE)"
  like "$(jq -r .detail <<<"$BODY")" '.' "and a reason: $(jq -r .detail <<<"$BODY" | head -c 160)"
  is "$(results)" "$before" "nothing is stored for $v"
done

# accepted: they read back as the same doubles
edge='[9007199254740992, 9007199254740993.0, 9.007199254740992e15, 1e18, -0.0, 0.0, 5e-324, 2.2250738585072014e-308, 1e-310, 1.7e-308]'
post_edge base "$edge" edge-base
is "$CODE" 201 "the base document with 2^53, -0.0, subnormals and 1e18 is stored"
post_edge patched "$edge" edge-patched
is "$CODE" 201 "the patched one too"
is "$(jq -r .state <<<"$BODY")" done "the job finishes (comparison of the stored documents works)"
api GET "/api/v1/submissions/$sub"
is "$CODE" 200 "the submission reads back"
like "$(jq -r .verdict <<<"$BODY")" '^(no-change|regression|improvement|inconclusive|lockup)$' \
  "a verdict is reached: $(jq -r .verdict <<<"$BODY")"
is "$(jq -r '[.verdicts[] | select(.metric == "edge")] | length > 0' <<<"$BODY")" true "the edge metric is compared"
api GET "/api/v1/submissions/$sub/results"
is "$CODE" 200 "the stored documents are served"
got=$(jq -c '[.results[] | select(.variant == "base") | .document.runs[0].samples.edge[]]' <<<"$BODY")
python3 - "$edge" "$got" <<'PY'
import json, sys
want, got = json.loads(sys.argv[1]), json.loads(sys.argv[2])
sys.exit(0 if [float(x) for x in want] == [float(x) for x in got] else 1)
PY
ok $? "every edge value reads back as the same double ($got)"

# strings are bounded: a 10 MB hostname fits in a 16 MiB body but is refused
submit_mbox "$T/s/series.mbox"
claim "$A"
job=$JOB
result_doc base 0 1 >"$T/r.json"
python3 - "$T/r.json" <<'PY' >"$T/host.json"
import json, sys
doc = json.load(open(sys.argv[1]))
doc["machine"]["hostname"] = "h" * 10000000
print(json.dumps(doc))
PY
before=$(results)
api POST "/api/v1/jobs/$job/results" -H "Authorization: Bearer $A" -H 'Idempotency-Key: host' -d @"$T/host.json"
is "$CODE" 422 "a 10 MB machine.hostname is refused"
like "$(jq -r .detail <<<"$BODY")" '^machine\.hostname: a string of 10000000 bytes' "the reason names the field"
is "$(results)" "$before" "nothing is stored for it"
python3 - "$T/r.json" <<'PY' >"$T/unit.json"
import json, sys
doc = json.load(open(sys.argv[1]))
doc["runs"][0]["units"]["ops_per_sec"] = "u" * 5000
print(json.dumps(doc))
PY
api POST "/api/v1/jobs/$job/results" -H "Authorization: Bearer $A" -H 'Idempotency-Key: unit' -d @"$T/unit.json"
is "$CODE" 422 "a 5000-byte unit is refused"
python3 - "$T/r.json" <<'PY' >"$T/stacks.json"
import json, sys
doc = json.load(open(sys.argv[1]))
doc["runs"][0]["lockup"] = {"kind": "stall", "message": "no progress", "stacks": "frame\n" * 50000}
print(json.dumps(doc))
PY
api POST "/api/v1/jobs/$job/results" -H "Authorization: Bearer $A" -H 'Idempotency-Key: stacks' -d @"$T/stacks.json"
is "$CODE" 201 "a lockup with 300 KB of stacks is stored (stacks may be up to 1 MiB)"

done_testing
