#!/usr/bin/env bash
# Real lockbench documents through the server: accepted as they are, and
# the server's tables (rendered from what it stored) are the ones
# `lockbench compare` prints for the same documents.
source "$(dirname "$0")/lib/tap.sh"
source "$TOP/tests/lib/pg.sh"
source "$TOP/tests/lib/server.sh"

[[ -x "$BIN/lockbench" ]] || { echo "1..0 # SKIP build/lockbench is not built"; exit 0; }
server_setup --min-rounds 1 --max-rounds 1

register_agent
A=$AGENT_TOKEN
jq -Rs '{mbox: ., suites: ["smoke"]}' "$T/s/series.mbox" >"$T/req.json"
api POST /api/v1/submissions -d @"$T/req.json"
s=$(jq -r .id <<<"$BODY")
claim "$A"
j=$JOB
# round 0, and round 1 too when round 0 found a change that must be confirmed
bs= ps= confirm=()
for r in 0 1; do
  for v in base patched; do
    "$BIN/lockbench" run --suite smoke --locks pthread,ticket --workloads hot --repeat 5 \
      --variant $v --round $r --json "$T/$v-$r.json" --quiet
    ok $? "lockbench run of the $v variant, round $r"
    api POST "/api/v1/jobs/$j/results" -H "Authorization: Bearer $A" -H "Idempotency-Key: lb-$v-$r" \
      -d @"$T/$v-$r.json"
    is "$CODE" 201 "the server takes lockbench's $v document of round $r"
  done
  bs+=${bs:+,}$T/base-$r.json ps+=${ps:+,}$T/patched-$r.json
  [[ $(jq -r .state <<<"$BODY") == done ]] && break
  is "$(jq -r '[.state, .confirm_from, .more_rounds] | join(",")' <<<"$BODY")" running,1,1 \
    "round 0 found a change: one more round must confirm it"
  confirm=(--confirm-from 1)
done
is "$(jq -r .state <<<"$BODY")" done "one round each finishes the job (--max-rounds 1), or two with a confirmation"
is "$(sql "SELECT count(*) FROM runs r JOIN results x ON x.id = r.result_id WHERE x.job_id = $j")" \
  "$(cat "$T"/base-*.json "$T"/patched-*.json | jq -s '[.[].runs | length] | add')" \
  "every run of every document is stored"
is "$(sql "SELECT document->'runs'->0->>'lock' FROM results WHERE idempotency_key = 'lb-base-0'")" \
  "$(jq -r '.runs[0].lock' "$T/base-0.json")" "the document is kept as posted"
for f in text lkp; do
  api GET "/api/v1/submissions/$s/report?format=$f"
  # the server plans 2 looks (--max-rounds 1 and a confirmation): alpha / 2 for no-change
  "$BIN/lockbench" compare "$bs" "$ps" "${confirm[@]}" --looks 2 --format $f >"$T/want.$f"
  printf '%s\n' "$BODY" >"$T/got.$f"
  diff -u "$T/want.$f" "$T/got.$f" >"$T/diff.$f"
  ok $? "the $f report equals lockbench compare on the same documents"
  [[ -s "$T/diff.$f" ]] && diag "$(head -n 30 "$T/diff.$f")"
done
api GET "/api/v1/submissions/$s"
is "$(jq -r .verdict <<<"$BODY")" \
  "$("$BIN/lockbench" compare "$bs" "$ps" "${confirm[@]}" --format json | jq -r .overall)" \
  "the overall verdict is lockbench's"
# --min-rounds 1: one round a side pairs once, too few to test; the server
# says so and answers nothing beyond inconclusive (no Welch over pooled samples)
api GET "/api/v1/submissions/$s/report?format=text"
like "$BODY" "too few rounds to test: [0-9]+ row" "the server's report says there were too few rounds to test"
is "$(sql "SELECT count(*) FROM verdicts v JOIN comparisons c ON c.id = v.comparison_id WHERE c.job_id = $j AND v.verdict NOT IN ('inconclusive', 'lockup')")" \
  0 "and no row of one round a side has a verdict beyond inconclusive"

done_testing
