#!/usr/bin/env bash
# Two servers on one database with different --min-rounds/--max-rounds
# finish each other's jobs: the limits a job was made with travel with it,
# so the server that takes its rounds bounds and judges them by those.
source "$(dirname "$0")/lib/tap.sh"
source "$TOP/tests/lib/pg.sh"
source "$TOP/tests/lib/server.sh"

server_setup --min-rounds 3 --max-rounds 6
WIDE=$URL
server_start --min-rounds 2 --max-rounds 2 || bail_out "no second server"
NARROW=$URL
register_agent
A=$AGENT_TOKEN

# a job made by the wide server, its rounds taken by the narrow one
URL=$WIDE submit_mbox "$T/s/series.mbox"
s1=$SUB
URL=$NARROW claim "$A"
j1=$JOB
is "$(sql "SELECT min_rounds || ',' || max_rounds || ',' || rounds_wanted FROM jobs WHERE id = $j1")" "3,6,3" \
  "the job keeps the limits it was made with"
URL=$NARROW
for r in 0 1 2; do post_round "$j1" "$A" base $r 1; post_round "$j1" "$A" patched $r 0.9; done
is "$(jq -r '[.state, .rounds, .confirm_from] | join(",")' <<<"$BODY")" "running,6,3" \
  "the narrow server asks for the wide job's confirmation: rounds 3 to 5"
codes=
for r in 3 4 5; do
  post_round "$j1" "$A" base $r 1; codes+="$CODE "
  post_round "$j1" "$A" patched $r 0.9; codes+="$CODE "
done
is "$codes" "201 201 201 201 201 201 " "rounds 4 and 5, past twice its own --max-rounds, are taken"
is "$(jq -r '[.state, .verdict] | join(",")' <<<"$BODY")" "done,regression" \
  "the narrow server finishes the wide server's job"

# a job made by the narrow server, its rounds taken by the wide one
URL=$NARROW submit_mbox "$T/s/series.mbox"
URL=$WIDE claim "$A"
j2=$JOB
is "$(sql "SELECT min_rounds || ',' || max_rounds || ',' || rounds_wanted FROM jobs WHERE id = $j2")" "2,2,2" \
  "the narrow job keeps its limits"
URL=$WIDE
for r in 0 1; do post_round "$j2" "$A" base $r 1 0.2; post_round "$j2" "$A" patched $r 1 0.2; done
is "$(jq -r '[.state, .rounds, .more_rounds] | join(",")' <<<"$BODY")" "done,2,0" \
  "the wide server finishes it at its 2 rounds instead of asking for its own 6"
done_testing
