#!/usr/bin/env bash
# The route table is the access rule: every route that `locklab-server
# --routes` prints is called with no token, a wrong token and every other
# role's token, and gets what its access column says (401 no or unknown
# token, 403 a known token of another role, never 401/403 where anyone may
# call).  Other methods on each path are 405 with Allow.
source "$(dirname "$0")/lib/tap.sh"
source "$TOP/tests/lib/pg.sh"
source "$TOP/tests/lib/server.sh"

pg_start || { echo "Bail out! no postgres"; exit 1; }
server_start --submit-token-required || { echo "Bail out! no server"; exit 1; }
register_agent
AGENT=$AGENT_TOKEN
register_agent '{"role": "submitter"}'
SUBMITTER=$AGENT_TOKEN

"$BIN/locklab-server" --routes >"$T/routes"
ok $? "--routes prints the table"
is "$(grep -vcE '^(GET|POST|PATCH) /[^ ]* (anyone|submit|agent|admin)$' "$T/routes")" 0 "every line is METHOD PATH ACCESS"
n=$(wc -l <"$T/routes")
ok $((n >= 10 ? 0 : 1)) "it lists the routes ($n)"
like "$(cat "$T/routes")" 'POST /api/v1/jobs/\{id\}/results agent' "results are for agents"
like "$(cat "$T/routes")" 'POST /api/v1/trees admin' "trees are added by the admin"

# call METHOD PATH TOKEN-NAME: sets CODE (an empty {} body on POST and PATCH)
call() {
  local method=$1 path=$2 who=$3 auth=()
  case $who in
  none) ;;
  wrong) auth=(-H "Authorization: Bearer 0123456789abcdef-not-a-token") ;;
  agent) auth=(-H "Authorization: Bearer $AGENT") ;;
  submitter) auth=(-H "Authorization: Bearer $SUBMITTER") ;;
  admin) auth=(-H "Authorization: Bearer $ADMIN_TOKEN") ;;
  esac
  if [[ $method == POST || $method == PATCH ]]; then
    api "$method" "$path" "${auth[@]}" -H 'Idempotency-Key: auth-walk' -d '{}'
  else
    api GET "$path" "${auth[@]}"
  fi
}
# want ACCESS WHO: the status class that access rule gives a caller
want() {
  case "$1:$2" in
  anyone:*) echo open ;;
  *:none | *:wrong) echo 401 ;;
  submit:submitter | submit:admin | agent:agent | admin:admin) echo open ;;
  *) echo 403 ;;
  esac
}
while read -r method pattern access; do
  path=${pattern//\{id\}/999999}
  for who in none wrong agent submitter admin; do
    call "$method" "$path" "$who"
    w=$(want "$access" "$who")
    if [[ $w == open ]]; then
      ok $((CODE == 401 || CODE == 403)) "$method $pattern ($access) with $who token: not refused ($CODE)"
    else
      is "$CODE" "$w" "$method $pattern ($access) with $who token: $w"
    fi
  done
  api DELETE "$path" -D "$T/h"
  is "$CODE" 405 "DELETE $pattern: 405"
  like "$(tr -d '\r' <"$T/h")" "^Allow: .*$method" "with Allow naming $method"
done <"$T/routes"

# and the anyone/submit rows without --submit-token-required
server_start || { echo "Bail out! no second server"; exit 1; }
call POST /api/v1/submissions none
ok $((CODE == 401 || CODE == 403)) "without --submit-token-required anyone may submit ($CODE)"

done_testing
