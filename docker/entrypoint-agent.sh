#!/bin/sh
# entrypoint-agent.sh - start locklab-agent in its container, registering it
# with the server first when it has no agent token.
#
# The token comes from, in order:
#   1. LOCKLAB_AGENT_TOKEN (an operator registered the agent by hand);
#   2. the token file an earlier start saved (LOCKLAB_AGENT_TOKEN_FILE,
#      default $LOCKLAB_WORKDIR/agent.token, on the workdir volume), so that a
#      restarted container stays the same agent;
#   3. POST /api/v1/agents/register with LOCKLAB_ADMIN_TOKEN, name
#      LOCKLAB_AGENT_NAME (default: the hostname) and machine class
#      LOCKLAB_MACHINE_CLASS (default: "default"); the answer's token is saved
#      to the token file (mode 600).
# The admin token is removed from the environment before the agent starts, so
# neither the agent nor the untrusted builds it runs can see it.  That is why
# this script, not tini, is the image's ENTRYPOINT: it execs tini (as PID 1)
# at the end, and /proc/1/environ then shows the cleaned environment, not the
# one the container was started with.
#
# Arguments are passed to locklab-agent (e.g. --once, --jobs 4); a first
# argument that is not an option is run instead (e.g. `sh` to look around).
# Other variables: LOCKLAB_SERVER, LOCKLAB_WORKDIR, LOCKLAB_WAIT_SECONDS (how
# long to wait for the server's /healthz, default 120).
set -eu
trap 'exit 143' TERM INT   # as PID 1 a shell would ignore `docker stop`

case "${1:-}" in
  '' | -*) ;;
  *) exec "$@" ;;
esac

server=${LOCKLAB_SERVER:-http://server:8080}
server=${server%/}
workdir=${LOCKLAB_WORKDIR:-/var/lib/locklab-agent}
token_file=${LOCKLAB_AGENT_TOKEN_FILE:-$workdir/agent.token}
wait_s=${LOCKLAB_WAIT_SECONDS:-120}

say() { printf 'entrypoint-agent: %s\n' "$*" >&2; }

mkdir -p "$workdir"

if [ -z "${LOCKLAB_AGENT_TOKEN:-}" ] && [ -s "$token_file" ]; then
  LOCKLAB_AGENT_TOKEN=$(cat "$token_file")
  say "using the agent token saved in $token_file"
fi

if [ -z "${LOCKLAB_AGENT_TOKEN:-}" ]; then
  if [ -z "${LOCKLAB_ADMIN_TOKEN:-}" ]; then
    say "no agent token: set LOCKLAB_AGENT_TOKEN, or LOCKLAB_ADMIN_TOKEN to register this agent"
    exit 2
  fi
  i=0
  until curl -fsS -o /dev/null --max-time 5 "$server/healthz" 2>/dev/null; do
    i=$((i + 2))
    if [ "$i" -ge "$wait_s" ]; then
      say "server $server did not answer /healthz within $wait_s s"
      exit 1
    fi
    sleep 2
  done
  name=${LOCKLAB_AGENT_NAME:-$(hostname)}
  class=${LOCKLAB_MACHINE_CLASS:-default}
  body=$(jq -cn --arg n "$name" --arg c "$class" '{name: $n, machine_class: $c}')
  # the header comes from stdin so that the admin token is not in any argv
  if ! reply=$(printf 'Authorization: Bearer %s\n' "$LOCKLAB_ADMIN_TOKEN" |
    curl -sS --fail-with-body --max-time 30 -H @- -H 'Content-Type: application/json' \
      -d "$body" "$server/api/v1/agents/register"); then
    say "registration at $server failed: $reply"
    exit 1
  fi
  if ! LOCKLAB_AGENT_TOKEN=$(printf '%s' "$reply" | jq -er .token); then
    say "registration answer has no token: $reply"
    exit 1
  fi
  (umask 077 && printf '%s\n' "$LOCKLAB_AGENT_TOKEN" >"$token_file.tmp")
  mv "$token_file.tmp" "$token_file"
  say "registered as '$name' (machine class $class, agent id $(printf '%s' "$reply" | jq -r .id)); token saved in $token_file"
fi

unset LOCKLAB_ADMIN_TOKEN
export LOCKLAB_AGENT_TOKEN
trap - TERM INT
# tini reaps the orphans killed builds leave and passes SIGTERM on
if [ "$$" = 1 ] && command -v tini >/dev/null 2>&1; then
  exec tini -- locklab-agent "$@"
fi
exec locklab-agent "$@"
