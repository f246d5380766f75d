#!/usr/bin/env bash
# The fetch policy: a submitted URL reaches loopback, private, link-local ...
# addresses only where --fetch-allow says so.  Refused URLs get a 422
# "fetch-refused" before any connection (the fixture logs every TCP connection
# it accepts, and sees none); a redirect from an allowed fixture to a refused
# port is stopped when curl opens the socket; size caps hold after gunzip.
# Every address aimed at is on loopback.
source "$(dirname "$0")/lib/tap.sh"
source "$TOP/tests/lib/pg.sh"
source "$TOP/tests/lib/server.sh"

pg_start || { echo "Bail out! no postgres"; exit 1; }
make_series "$T/s" || { echo "Bail out! git format-patch failed"; exit 1; }
mkdir -p "$T/www"
cp "$T/s/series.mbox" "$T/www/t.mbox"
# 256 MiB of zeros, about 250 KiB gzip'd: served as a .gz body and as Content-Encoding
head -c 268435456 /dev/zero | gzip -1 >"$T/www/bomb.gz"

fixture ok "$T/www" || { echo "Bail out! no fixture"; exit 1; }
fixture other "$T/www" || { echo "Bail out! no fixture"; exit 1; }
fixture two "$T/www" 127.0.0.2 || { echo "Bail out! no fixture on 127.0.0.2"; exit 1; }
# exactly the ok fixture's port, and the port of "two" but on 127.0.0.1 only
server_start --fetch-allow "127.0.0.1:$ok_PORT, 127.0.0.1:$two_PORT" || { echo "Bail out! no server"; exit 1; }

count() { sql "SELECT count(*) FROM submissions"; }
connections() { grep -c '^connection' "$1"; }

api POST /api/v1/submissions -d "{\"url\": \"$ok_URL/t.mbox\"}"
is "$CODE" 202 "the allowed fixture port is fetched"

# refused NAME URL FIXTURE_LOG DETAIL_REGEX: 422 fetch-refused, nothing stored,
# and the fixture behind the URL saw no connection
refused() {
  local name=$1 url=$2 log=$3 want=$4 before conns
  before=$(count)
  conns=$(connections "$log")
  api POST /api/v1/submissions -d "{\"url\": \"$url\"}"
  is "$CODE" 422 "$name: 422"
  is "$(jq -r .error <<<"$BODY")" fetch-refused "$name: the error is fetch-refused"
  like "$(jq -r .detail <<<"$BODY")" "$want" "$name: the detail says why"
  is "$(count)" "$before" "$name: nothing is stored"
  is "$(connections "$log")" "$conns" "$name: the fixture saw no connection"
}

refused "another loopback port" "$other_URL/t.mbox" "$other_LOG" "refused by the fetch policy: 127\\.0\\.0\\.1 port $other_PORT is not a place"
refused "an allowed port on another loopback address" "$two_URL/t.mbox" "$two_LOG" "refused by the fetch policy: 127\\.0\\.0\\.2 port $two_PORT is not a place"
refused "localhost on another port" "http://localhost:$other_PORT/t.mbox" "$other_LOG" "refused by the fetch policy: localhost port $other_PORT is not a place"
unlike "$(jq -r .detail <<<"$BODY")" "127\\.0\\.0\\.1|::1|loopback" "localhost: what the name resolved to is not said"
refused "the IPv4-mapped loopback" "http://[::ffff:127.0.0.1]:$other_PORT/t.mbox" "$other_LOG" "refused by the fetch policy"
refused "the IPv6 loopback" "http://[::1]:$other_PORT/t.mbox" "$other_LOG" "refused by the fetch policy: ::1 port $other_PORT is not a place"
refused "the unspecified address" "http://0.0.0.0:$other_PORT/t.mbox" "$other_LOG" "refused by the fetch policy"
refused "loopback as one decimal number" "http://2130706433:$other_PORT/t.mbox" "$other_LOG" "refused by the fetch policy"
refused "a redirect from the allowed fixture to a refused port" \
  "$ok_URL/redirect?to=$other_URL/t.mbox" "$other_LOG" "a connection was refused by the fetch policy$"
grep -q 'request "GET /redirect' "$ok_LOG"
ok $? "the redirect itself came from the allowed fixture"
api GET /metrics
like "$BODY" '^locklab_fetch_refused_total 8$' "/metrics counts the eight fetches the policy refused"

api POST /api/v1/submissions -d "{\"url\": \"$ok_URL/redirect?to=$ok_URL/t.mbox\"}"
is "$CODE" 202 "a redirect to an allowed port is followed"

api POST /api/v1/submissions -d '{"url": "http://[::1"}'
is "$CODE:$(jq -r .error <<<"$BODY")" "400:bad-url" "a URL without a parsable host is refused at the door"

# size caps after decompression: the gzip bomb stops at --fetch-max-bytes
before=$(count)
api POST /api/v1/submissions -d "{\"url\": \"$ok_URL/bomb.gz\"}"
is "$CODE:$(jq -r .error <<<"$BODY")" "422:fetch-failed" "a 256 MiB .gz bomb is refused"
like "$(jq -r .detail <<<"$BODY")" 'over 16777216 bytes once unpacked' "at the 16 MiB cap"
api POST /api/v1/submissions -d "{\"url\": \"$ok_URL/gz/bomb.gz\"}"
is "$CODE:$(jq -r .error <<<"$BODY")" "422:fetch-failed" "a 256 MiB Content-Encoding bomb is refused"
like "$(jq -r .detail <<<"$BODY")" 'over 16777216 bytes' "at the 16 MiB cap"
is "$(count)" "$before" "nothing is stored for the bombs"
api GET /healthz
is "$CODE" 200 "the server is fine after them"

# a .gz of two members (cat a.gz b.gz) is unpacked whole
head -c 300 "$T/s/series.mbox" | gzip >"$T/www/two.gz"
tail -c +301 "$T/s/series.mbox" | gzip >>"$T/www/two.gz"
api POST /api/v1/submissions -d "{\"url\": \"$ok_URL/two.gz\"}"
is "$CODE:$(jq -r .patches <<<"$BODY")" "202:2" "a two-member .gz is unpacked whole"

# a CIDR entry allows a range; a proxy in the environment is not used
http_proxy="$other_URL" HTTP_PROXY="$other_URL" server_spawn --fetch-allow 127.0.0.0/8
server_wait "$URL" "$SERVER_PID" "$SERVER_LOG" || { echo "Bail out! no second server"; exit 1; }
conns=$(connections "$other_LOG")
api POST /api/v1/submissions -d "{\"url\": \"$two_URL/t.mbox\"}"
is "$CODE" 202 "--fetch-allow 127.0.0.0/8 allows 127.0.0.2"
is "$(connections "$other_LOG")" "$conns" "http_proxy is not used (the policy must see the real peer)"
api POST /api/v1/submissions -d "{\"url\": \"http://[::1]:$other_PORT/t.mbox\"}"
is "$(jq -r .error <<<"$BODY")" fetch-refused "but not ::1, which is outside that range"

# the time cap: a body dripping one byte a second stops at --fetch-timeout
server_start --fetch-allow "127.0.0.1:$ok_PORT" --fetch-timeout 2 || { echo "Bail out! no third server"; exit 1; }
api POST /api/v1/submissions -d "{\"url\": \"$ok_URL/drip\"}"
is "$CODE:$(jq -r .error <<<"$BODY")" "422:fetch-failed" "a URL that drips is refused"
like "$(jq -r .detail <<<"$BODY")" 'timed out' "when --fetch-timeout runs out"

# bad allow lists stop the server at start, with the reason
# (no unresolvable name here: resolving one may ask a DNS server off this machine)
for bad in "127.0.0.1" "127.0.0.1:0" "127.0.0.0/33" "[::1]80" "a:b:c"; do
  out=$(LOCKLAB_DB=dbname=nowhere timeout 10 "$BIN/locklab-server" --listen 127.0.0.1:1 --fetch-allow "$bad" 2>&1)
  rc=$?
  if [[ $bad == 127.0.0.1 ]]; then
    unlike "$out" "fetch-allow" "a bare address is a /32 entry: accepted (the server then stops on the database)"
    continue
  fi
  is "$rc" 2 "--fetch-allow '$bad' stops the server as bad usage (exit 2)"
  like "$out" "^locklab-server: --fetch-allow: " "and says why: $(head -n1 <<<"$out")"
done

done_testing
