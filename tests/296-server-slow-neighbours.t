#!/usr/bin/env bash
# One address's slow clients cannot lock out the others on that address:
# connections that have not sent a whole request have their own budget per
# address (--header-connections; a newer one cuts the oldest), and only
# connections that sent a request count against --per-ip-connections.  70
# clients trickling header bytes from 127.0.0.1 while fresh clients from
# 127.0.0.1 ask /healthz: at least 95% of those are answered 200.  Agents
# count by their token, not their address: while anonymous clients hold all
# of 127.0.0.1's slots, every one of an agent's posts from there is served.
source "$(dirname "$0")/lib/tap.sh"
source "$TOP/tests/lib/pg.sh"
source "$TOP/tests/lib/server.sh"

pg_start || bail_out "no postgres"
server_start --header-timeout 20 --connection-timeout 600 || bail_out "no server"
PORT=${URL##*:}

out=$(python3 "$TOP/tests/lib/slowclients.py" flood 127.0.0.1 "$PORT" 0 70 127.0.0.1 15 40)
diag "flood: $out"
answered=$(jq -r .probes_200 <<<"$out")
probes=$(jq -r .probes <<<"$out")
ok "$([[ $probes -gt 0 && $((answered * 100)) -ge $((probes * 95)) ]]; echo $?)" \
  "70 slow clients on 127.0.0.1: $answered of $probes fresh clients on 127.0.0.1 get /healthz"
ok "$(jq -e '.most_open >= 32' <<<"$out" >/dev/null; echo $?)" \
  "the slow connections were really open (up to $(jq -r .most_open <<<"$out") at once)"
api GET /metrics
like "$BODY" 'locklab_http_refused_total\{limit="per-ip"\} 0' "no request was refused by the per-address limit"

# past the header budget a newer connection cuts the oldest without a request
server_start --header-connections 16 || bail_out "no second server"
out=$(python3 "$TOP/tests/lib/slowclients.py" flood 127.0.0.1 "${URL##*:}" 30 0 127.0.0.1 3 2)
diag "idle: $out"
ok "$(jq -e '.idle_closed >= 14' <<<"$out" >/dev/null; echo $?)" \
  "30 idle connections past --header-connections 16: the oldest are cut"
api GET /metrics
like "$BODY" 'locklab_http_header_budget_total [1-9]' "/metrics counts the connections cut for the header budget"
# an agent's burst of posts while anonymous slow bodies hold the address's slots
server_start --per-ip-connections 8 || bail_out "no third server"
register_agent
out=$(python3 "$TOP/tests/lib/slowclients.py" agentburst 127.0.0.1 "${URL##*:}" 8 "$AGENT_TOKEN" 60 6)
diag "agent burst: $out"
is "$(jq -r .anonymous <<<"$out")" 503 "8 slow bodies fill 127.0.0.1's 8 slots: an anonymous request is refused"
is "$(jq -c .agent <<<"$out")" '{"200":60}' "all 60 of an agent's posts from 127.0.0.1, 6 at a time, are served"
api GET /metrics
like "$BODY" 'locklab_http_refused_total\{limit="per-agent"\} 0' "none was refused by its token's limit"
done_testing
