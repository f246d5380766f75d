#!/usr/bin/env bash
# Connections: a fixed pool serves everyone while 200 idle and 50 slowloris
# clients hold connections; headers and bodies have absolute deadlines that a
# trickle of bytes does not extend (408, then closed); a client over the
# per-address or total limit gets 503 with Retry-After, not a reset; URL
# fetches are capped (503 + Retry-After past the cap) and bounded in time.
# Every address is on loopback (clients bind 127.0.0.2-127.0.0.12 as sources).
source "$(dirname "$0")/lib/tap.sh"
source "$TOP/tests/lib/pg.sh"
source "$TOP/tests/lib/server.sh"

pg_start || { echo "Bail out! no postgres"; exit 1; }
mkdir -p "$T/www"
fixture drip "$T/www" || { echo "Bail out! no fixture"; exit 1; }

SLOW="python3 $TOP/tests/lib/slowclients.py"
port_of() { echo "${1##*:}"; }

# Deadlines of 3 s, an idle timeout far longer: only the deadlines can cut.
server_start --header-timeout 3 --body-timeout 3 --connection-timeout 600 \
  --http-threads 4 --per-ip-connections 32 --fetch-max-active 2 --fetch-timeout 4 \
  --fetch-allow "127.0.0.1:$drip_PORT" || { echo "Bail out! no server"; exit 1; }
PORT=$(port_of "$URL")

# --- 200 idle + 50 slowloris (one header byte a second), 25 per source address
sources=$(printf '127.0.0.%d,' $(seq 2 11))
out=$($SLOW flood 127.0.0.1 "$PORT" 200 50 "${sources%,}" 10 8)
diag "flood: $out"
is "$(jq -r '"\(.probes_200)/\(.probes)"' <<<"$out")" "8/8" \
  "200 idle and 50 slowloris connections: every fresh client gets /healthz"
ok "$(jq -e '.most_open >= 240' <<<"$out" >/dev/null; echo $?)" \
  "the hostile connections were really open at once (240 or more)"
ok "$(jq -e '.slow_408 >= 50' <<<"$out" >/dev/null; echo $?)" \
  "each slowloris connection is cut at the header deadline with a 408"
ok "$(jq -e '.longest_slow < 8' <<<"$out" >/dev/null; echo $?)" \
  "no slowloris connection outlives the 3 s header deadline by much (idle timeout is 600 s)"
ok "$(jq -e '.idle_closed >= 200' <<<"$out" >/dev/null; echo $?)" \
  "idle connections are closed at the header deadline too"
api GET /metrics
like "$BODY" 'locklab_http_deadline_total\{phase="headers",status="408"\} [1-9]' "/metrics counts the header deadline cuts"

# --- a body trickling past the body deadline
read -r status secs < <($SLOW slowbody 127.0.0.1 "$PORT" 30)
is "$status" 408 "a body sent one byte a second is refused with 408"
ok "$([[ $secs -le 6 ]]; echo $?)" "the 408 comes at the body deadline (${secs} s, deadline 3 s)"

# --- the per-address limit: 32 open from 127.0.0.20, the 33rd is told 503
mapfile -t lines < <($SLOW over 127.0.0.1 "$PORT" 127.0.0.20 32)
is "${lines[0]:-}" "503 5" "over the per-address limit: 503 with Retry-After"
is "${lines[1]:-}" "200 -" "another address is served meanwhile"
api GET /metrics
like "$BODY" 'locklab_http_refused_total\{limit="per-ip"\} [1-9]' "/metrics counts the per-address refusal"

# --- URL fetches: two dripping fetches fill the cap, the third gets 503
t0=$(date +%s)
pids=()
for i in 1 2; do
  curl -sS -o "$T/fetch$i.json" -w '%{http_code}' -X POST -d "{\"url\": \"$drip_URL/drip\"}" \
    "$URL/api/v1/submissions" >"$T/fetch$i.code" &
  pids+=($!)
done
for ((i = 0; i < 50; i++)); do
  [[ $(grep -c 'GET /drip' "$drip_LOG") -ge 2 ]] && break
  sleep 0.1
done
api POST /api/v1/submissions -D "$T/h3" -d "{\"url\": \"$drip_URL/drip\"}"
is "$CODE:$(jq -r .error <<<"$BODY")" "503:busy" "a URL submission over the fetch cap gets 503 busy"
like "$(cat "$T/h3")" '^Retry-After: 5' "... with Retry-After"
api GET /healthz
is "$CODE" 200 "/healthz is served while the fetch cap is full"
wait "${pids[@]}"
t1=$(date +%s)
is "$(cat "$T/fetch1.code"):$(jq -r .error "$T/fetch1.json")" "422:fetch-failed" \
  "a dripping URL is cut at --fetch-timeout"
ok "$([[ $((t1 - t0)) -le 15 ]]; echo $?)" "both dripping fetches ended in $((t1 - t0)) s (timeout 4 s)"
api POST /api/v1/submissions -d "{\"url\": \"$drip_URL/none\"}"
is "$CODE:$(jq -r .error <<<"$BODY")" "422:fetch-failed" "after them the cap is free again"

# --- the total limit: 6 open, the 7th connection's request gets 503
server_start --max-connections 6 --per-ip-connections 100 || { echo "Bail out! no server"; exit 1; }
mapfile -t lines < <($SLOW over 127.0.0.1 "$(port_of "$URL")" 127.0.0.21 6)
is "${lines[0]:-}" "503 5" "over --max-connections: 503 with Retry-After"
curl -fsS "$URL/healthz" >/dev/null
ok $? "once they close, requests are served again"
api GET /metrics
like "$BODY" 'locklab_http_refused_total\{limit="total"\} [1-9]' "/metrics counts the total refusals"
grep -q "reached connection limit\|Closing inbound" "$SERVER_LOG"
ok "$([[ $? -ne 0 ]]; echo $?)" "libmicrohttpd closed nothing on its own"

done_testing
