#!/usr/bin/env bash
# notify may name only the series' own people (From, To, Cc of its mails),
# unless the caller is trusted: the admin token or a submitter token
# registered with "trusted": true.  Open submissions cannot make the server
# mail third parties.
source "$(dirname "$0")/lib/tap.sh"
source "$TOP/tests/lib/pg.sh"
source "$TOP/tests/lib/server.sh"

server_setup
count() { sql "SELECT count(*) FROM submissions"; }
# post NOTIFY [curl args]: submit the series with that notify; sets CODE and BODY
post() {
  jq -Rs --arg n "$1" '{mbox: ., notify: $n}' "$T/s/series.mbox" >"$T/req.json"
  shift
  api POST /api/v1/submissions -H 'Content-Type: application/json' -d @"$T/req.json" "$@"
}

post "Waiman <waiman@example.org>"
is "$CODE" 202 "the series' author may be notified"
before=$(count)
post "victim@elsewhere.example"
is "$CODE" 422 "a stranger's address is refused"
is "$(jq -r .error <<<"$BODY")" notify-refused "as notify-refused"
like "$(jq -r .detail <<<"$BODY")" "victim@elsewhere.example is not among the series' From, To and Cc" "naming the address"
post "waiman@example.org, victim@elsewhere.example"
is "$CODE" 422 "one stranger among the series' people is refused too"
post "aiman@example.org"
is "$CODE" 422 "a part of an address is not the address"
is "$(count)" "$before" "nothing refused is stored"

register_agent '{"role": "submitter"}'
plain=$AGENT_TOKEN
register_agent '{"role": "submitter", "trusted": true}'
trusted=$AGENT_TOKEN
post "victim@elsewhere.example" -H "Authorization: Bearer $plain"
is "$CODE" 422 "an untrusted submitter token may not name a stranger"
post "list@elsewhere.example" -H "Authorization: Bearer $trusted"
is "$CODE" 202 "a trusted submitter token may"
post "ops@elsewhere.example" -H "Authorization: Bearer $ADMIN_TOKEN"
is "$CODE" 202 "and so may the admin token"
api POST /api/v1/agents/register -H "Authorization: Bearer $ADMIN_TOKEN" -d '{"role": "agent", "trusted": true}'
is "$CODE" 400 "only a submitter can be trusted"
done_testing
