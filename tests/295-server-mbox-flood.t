#!/usr/bin/env bash
# Submitted mboxes are parsed off the HTTP threads, at most
# --parse-max-active at once: while a big one is parsed /healthz and
# /metrics are answered, and one more mbox past the bound gets 503 with
# Retry-After instead of waiting; once the parse is over it is taken.  A
# submission declaring more than 64 KiB gets that 503 from its headers,
# before its body is sent; the parse runs at --parse-priority low
# (SCHED_BATCH, nice 10).
source "$(dirname "$0")/lib/tap.sh"
source "$TOP/tests/lib/pg.sh"
source "$TOP/tests/lib/server.sh"

server_setup --parse-max-active 1 --max-mbox-messages 1000000 --max-body 67108864
parses() { curl -sS "$URL/metrics" | awk '$1 == "locklab_mbox_parses" {print $2}'; }

# 400,000 empty mails, then the series: seconds of parsing
python3 - "$T/s/series.mbox" >"$T/flood.json" <<'PY'
import json, sys
flood = "From x@y Mon Sep 17 00:00:00 2001\nSubject: a\n\n" * 400000
print(json.dumps({"mbox": flood + open(sys.argv[1]).read()}))
PY
jq -Rs '{mbox: .}' "$T/s/series.mbox" >"$T/small.json"

is "$(parses)" 0 "no parse runs at first"
curl -sS -o "$T/flood.out" -w '%{http_code}' -H 'Content-Type: application/json' \
  --data-binary @"$T/flood.json" "$URL/api/v1/submissions" >"$T/flood.code" &
flood=$!
seen=0
for ((i = 0; i < 600; i++)); do
  [[ $(parses) == 1 ]] && { seen=1; break; }
  kill -0 $flood 2>/dev/null || break
  sleep 0.1
done
is "$seen" 1 "the flood's parse is seen running"
hz=$(curl -sS -o /dev/null -w '%{http_code}' "$URL/healthz")
still=$(parses)
is "$hz" 200 "/healthz is answered while it runs"
is "$still" 1 "and the parse was still running after that answer"
# the parse thread's policy and nice value (/proc: stat fields 41 and 19)
low=0
for st in /proc/"$SERVER_PID"/task/*/stat; do
  read -r -a f < <(sed 's/.*) //' "$st")
  [[ ${f[38]} == 3 && ${f[16]} == 10 ]] && low=1
done
is "$low" 1 "a server thread runs at SCHED_BATCH and nice 10 (--parse-priority low)"
# headers declaring 10 MB and no body: the reply comes before any of it is sent
early=$(python3 "$TOP/tests/lib/slowclients.py" headersonly 127.0.0.1 "${URL##*:}" 10000000)
like "$early" "^503 [0-9]+$" "a 10 MB submission while the parse slot is busy: 503 + Retry-After before its body"
api POST /api/v1/submissions -D "$T/busy.headers" -H 'Content-Type: application/json' -d @"$T/small.json"
is "$CODE" 503 "one more mbox past --parse-max-active 1 gets 503"
grep -qi '^Retry-After: [0-9]' "$T/busy.headers"; ok $? "with Retry-After"
like "$(jq -r .detail <<<"$BODY")" 'parse-max-active' "naming the option"
wait $flood
like "$(cat "$T/flood.code")" '^(202|422)$' "the flood itself is answered ($(cat "$T/flood.code"))"
is "$(parses)" 0 "and no parse runs after it"
api POST /api/v1/submissions -H 'Content-Type: application/json' -d @"$T/small.json"
is "$CODE" 202 "the small mbox is taken now"
"$BIN/locklab-server" --parse-priority high --listen 127.0.0.1:1 >"$T/prio.log" 2>&1
is "$?" 2 "--parse-priority takes low, idle or normal only"
like "$(cat "$T/prio.log")" "'high' is not low, idle or normal" "saying so"
done_testing
