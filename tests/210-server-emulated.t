#!/usr/bin/env bash
# Figures from a QEMU TCG guest are an emulated CPU's: the mail reply and
# every kept report say so in one sentence, and which lockup thresholds the
# guest kernel used when the documents say; a KVM guest's do not.
source "$(dirname "$0")/lib/tap.sh"
source "$TOP/tests/lib/pg.sh"
source "$TOP/tests/lib/server.sh"

server_setup --min-rounds 2 --max-rounds 4
register_agent
TH='locktorture boots: RCU stall 21 s, soft lockup 20 s, hung task 3 s; lockbench users=2000: RCU stall 300 s, soft lockup 120 s, hung task 120 s'
NOTE='emulated: timing from an emulated CPU (QEMU TCG): lockups, splats and locktorture failures are real; compare figures only within this run'

# run_as MODEL [THRESHOLDS]: submit the series, post rounds whose machine is
# MODEL (the same code on both sides; machine.guest_thresholds THRESHOLDS when
# given) until the job is done (3 paired rounds at least), fetch the reply;
# sets SUB, REPLY
run_as() {
  local r v
  submit_mbox "$T/s/series.mbox"
  claim "$AGENT_TOKEN"
  for r in 0 1 2 3 4 5 6 7; do
    for v in base patched; do
      result_doc $v $r 1 quick | jq --arg m "$1" --arg t "${2:-}" \
        '.machine.model = $m | if $t != "" then .machine.guest_thresholds = $t else . end' >"$T/round.json"
      api POST "/api/v1/jobs/$JOB/results" -H "Authorization: Bearer $AGENT_TOKEN" \
        -H "Idempotency-Key: job-$JOB-$v-$r" -d @"$T/round.json"
      [[ $CODE == 20? ]] || diag "posting $v round $r: $CODE $BODY"
    done
    [[ $(jq -r .state <<<"$BODY") == done ]] && break
  done
  api GET "/api/v1/submissions/$SUB/reply"
  REPLY=$BODY
}

run_as "QEMU TCG guest on Intel(R) Xeon(R) Processor" "$TH"
is "$CODE" 200 "TCG: the reply is served"
body=$(python3 "$TOP/tests/lib/mailinfo.py" <<<"$REPLY" | jq -r .body)
like "$body" '^machine: lab1, 2 CPUs, QEMU TCG guest on' "it names the emulated machine"
# the sentence is wrapped to the reply's width: compare it with its words joined
joined=$(awk '/^emulated: /{on=1} on{printf "%s%s", (n++ ? " " : ""), $0; sub(/^ +/, "")} on && /run$/{exit}' <<<"$body" | tr -s ' ')
is "$joined" "$NOTE" "the reply says the timing is an emulated CPU's, below the machine"
max=$(awk '{ if (length($0) > m) m = length($0) } END { print m }' <<<"$body")
ok $(( max <= 100 ? 0 : 1 )) "and still fits 100 columns ($max)"
joined=$(awk '/^emulated: guest kernel/{on=1} on{printf "%s%s", (n++ ? " " : ""), $0; sub(/^ +/, "")} on && / s$/{exit}' <<<"$body" | tr -s ' ')
is "$joined" "emulated: guest kernel lockup thresholds: $TH" "and which lockup thresholds the guest kernel used"
for fmt in aim7 lkp text perf; do
  api GET "/api/v1/submissions/$SUB/report?format=$fmt"
  like "$BODY" "^emulated: timing from an emulated CPU \\(QEMU TCG\\)" "the kept $fmt report says so too"
  like "$BODY" "emulated: guest kernel lockup thresholds: locktorture boots: RCU stall 21 s" "and the $fmt report its thresholds"
done

run_as "QEMU KVM guest on Intel(R) Xeon(R) Processor"
is "$CODE" 200 "KVM: the reply is served"
unlike "$REPLY" 'emulated' "under KVM the reply carries no emulated mark"
api GET "/api/v1/submissions/$SUB/report?format=lkp"
unlike "$BODY" 'emulated' "nor does the report"
done_testing
