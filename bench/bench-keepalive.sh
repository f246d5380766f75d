#!/usr/bin/env bash
# bench/bench-keepalive.sh - `make bench-keepalive`: what keeping the
# connection alive is worth to the agent (the agent and the locklab
# client reuse connections).  Against a real locklab-server on
# loopback with its own PostgreSQL, build/bench-agent-post posts through the
# agent's api_post (agents/api.c) POSTS times per mode, REPS times,
# alternating: "fresh" opens a new connection for each post, "reuse" is the
# agent as it runs (one libcurl handle for its life).  Two kinds of post:
#   heartbeat  POST /api/v1/jobs/{id}/heartbeat (an UPDATE of the lease)
#   result     POST /api/v1/jobs/{id}/results, one 3-run document under one
#              Idempotency-Key: stored once, then answered as a duplicate
# Prints posts per second (median), and the TCP connections each mode opened.
# Needs build/locklab-server, build/bench-agent-post, PostgreSQL 15, jq, python3.
set -uo pipefail
POSTS=${POSTS:-500}
REPS=${REPS:-3}
source "$(dirname "$0")/../tests/lib/tap.sh"
source "$TOP/tests/lib/pg.sh"
source "$TOP/tests/lib/server.sh"

printf 'machine: %s, %s CPUs, %s, kernel %s\n' "$(hostname)" "$(nproc)" \
  "$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)" "$(uname -r)"
echo "libcurl $(curl-config --version 2>/dev/null | cut -d' ' -f2), server and PostgreSQL on this machine, loopback"
pg_start || exit 1
server_start --lease-seconds 3600 --min-rounds 2 --max-rounds 4 || exit 1
register_agent
make_series "$T/s" >/dev/null || exit 1
submit_mbox "$T/s/series.mbox"
claim "$AGENT_TOKEN"
[[ $JOB != null ]] || { echo "bench-keepalive: no job to post for" >&2; exit 1; }
result_doc base 0 1 >"$T/result.json"

echo "heartbeat: $POSTS posts per mode, $REPS repetitions"
"$BIN/bench-agent-post" "$URL" "$AGENT_TOKEN" "/api/v1/jobs/$JOB/heartbeat" - "$POSTS" "$REPS" || exit 1
echo "result (stored once, then duplicates): $POSTS posts per mode, $REPS repetitions"
"$BIN/bench-agent-post" "$URL" "$AGENT_TOKEN" "/api/v1/jobs/$JOB/results" "$T/result.json" \
  "$POSTS" "$REPS" || exit 1
