#!/usr/bin/env bash
# Build locklab's images with Debian's tools and run the compose stack end to
# end: base image (mmdebstrap), the postgres, server and agent images
# (podman build), the stack up (podman-compose), the example series
# submitted and its verdict awaited, the stack down.  Prints each step's
# time.  Needs root (rootful podman) and the packages of
# `scripts/deps.sh --images`.
#
#   scripts/images-run.sh        (make images-run)
#
# Variables:
#   IMAGES_CACHE    where the base image's tar is kept
#                   [/var/cache/locklab/images]
#   IMAGES_PROJECT  compose project name [locklab-images]
#   IMAGES_PORT     the server's port on 127.0.0.1 [18080]
#   IMAGES_SUITE    suite the example runs [smoke]
#   IMAGES_ROUNDS   the server's --min-rounds and --max-rounds [3]
#   IMAGES_TIMEOUT  seconds to wait for the verdict [1800]
#   IMAGES_CA_BUNDLE  CA bundle npm trusts in the build
#                   [/etc/ssl/certs/ca-certificates.crt]
#   IMAGES_NO_CACHE=1  build every layer again (podman build --no-cache)
#   IMAGES_KEEP=1   leave the stack up at the end (podman-compose down
#                   with the same -p and -f files removes it)
#
# podman settings (runtime runc, cgroupfs, the ulimits a container may ask
# for) come from docker/podman/containers.conf through CONTAINERS_CONF.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
CACHE=${IMAGES_CACHE:-/var/cache/locklab/images}
PROJECT=${IMAGES_PROJECT:-locklab-images}
PORT=${IMAGES_PORT:-18080}
SUITE=${IMAGES_SUITE:-smoke}
ROUNDS=${IMAGES_ROUNDS:-3}
TIMEOUT=${IMAGES_TIMEOUT:-1800}
URL="http://127.0.0.1:$PORT"
BASE=docker.io/library/debian:bookworm-slim
export CONTAINERS_CONF=$top/docker/podman/containers.conf

say() { printf '== %s\n' "$*"; }
die() { echo "images-run: $*" >&2; exit 1; }
now() { date +%s.%N; }
STEPS=()
T=$(now)
step_done() { # NAME: record the time since the last step
  local t
  t=$(now)
  STEPS+=("$(awk -v a="$T" -v b="$t" -v n="$1" 'BEGIN { printf "%-28s %6.0f s", n, b - a }')")
  T=$t
}

for c in podman podman-compose mmdebstrap curl jq; do
  command -v "$c" >/dev/null 2>&1 || die "'$c' is missing: scripts/deps.sh --images installs it"
done
[[ $(id -u) -eq 0 ]] || die "run as root: the stack uses rootful podman"
[[ ! -e docker/.env ]] || die "docker/.env exists and podman-compose would read it over this run's settings: move it aside"

# 1. the base image, made from Debian's packages
if podman image exists "$BASE"; then
  say "base image $BASE is present"
else
  tar=$CACHE/bookworm-minbase.tar
  if [[ ! -s $tar ]]; then
    say "making the base image with mmdebstrap (a few minutes)"
    mkdir -p "$CACHE"
    mmdebstrap --quiet --variant=minbase --include=ca-certificates bookworm "$tar.tmp" ||
      die "mmdebstrap failed"
    mv "$tar.tmp" "$tar"
  fi
  podman import --quiet "$tar" "$BASE" >/dev/null || die "podman import $tar failed"
  podman tag "$BASE" localhost/debian:bookworm-slim
  say "base image $BASE imported from $tar"
fi
step_done "base image"

# 2. the three images; the build logs go to a file, shown on failure.  The
# host's CA bundle is mounted into the builds and handed to npm, so that a
# host behind a TLS-intercepting proxy (whose CA it trusts) can build too.
LOG=$(mktemp -d /tmp/locklab-images.XXXXXX)
CA=${IMAGES_CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}
ca_args=() # and --no-cache
[[ ${IMAGES_NO_CACHE:-0} == 1 ]] && ca_args+=(--no-cache)
[[ -s $CA ]] && ca_args+=(--volume "$CA:/run/host-ca.crt:ro" --build-arg NODE_EXTRA_CA_CERTS=/run/host-ca.crt)
for i in postgres server agent; do
  say "building locklab-$i:local (log: $LOG/build-$i.log)"
  if ! podman build --pull=never --format docker "${ca_args[@]}" -f "docker/Dockerfile.$i" -t "locklab-$i:local" . \
    >"$LOG/build-$i.log" 2>&1; then
    tail -n 30 "$LOG/build-$i.log" >&2
    die "building locklab-$i failed"
  fi
  step_done "build locklab-$i"
done

# 3. the stack, with fresh secrets, podman's override (what bubblewrap needs
# in the agent's container) and one for this run's rounds
POSTGRES_PASSWORD=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
LOCKLAB_ADMIN_TOKEN=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
export POSTGRES_PASSWORD LOCKLAB_ADMIN_TOKEN
export LOCKLAB_HTTP_BIND=127.0.0.1 LOCKLAB_HTTP_PORT=$PORT
cat >"$LOG/override.yml" <<YML
services:
  server:
    environment:
      LOCKLAB_MIN_ROUNDS: "$ROUNDS"
      LOCKLAB_MAX_ROUNDS: "$ROUNDS"
YML
DC=(podman-compose -p "$PROJECT" -f docker/docker-compose.yml -f docker/podman/compose.podman.yml
  -f "$LOG/override.yml")
down() {
  local rc=$?
  if [[ $rc -ne 0 ]]; then
    for s in postgres server agent; do
      echo "--- last lines of $s's log" >&2
      podman logs --tail 15 "${PROJECT}_${s}_1" >&2 2>&1 || true
    done
  fi
  if [[ ${IMAGES_KEEP:-0} == 1 ]]; then
    say "the stack stays up (IMAGES_KEEP=1): ${DC[*]} down -v"
  else
    say "tearing the stack down"
    "${DC[@]}" down -v >"$LOG/down.log" 2>&1 || tail -n 5 "$LOG/down.log" >&2
    # podman-compose 1.0.3 leaves the project's networks behind
    podman network rm "${PROJECT}_db" "${PROJECT}_lab" >>"$LOG/down.log" 2>&1 || true
    step_done "down"
  fi
  say "times"
  printf '  %s\n' "${STEPS[@]}"
  exit $rc
}
trap down EXIT
say "bringing the stack up (project $PROJECT, $URL)"
"${DC[@]}" up -d >"$LOG/up.log" 2>&1 || { tail -n 30 "$LOG/up.log" >&2; die "podman-compose up failed"; }
for ((i = 0; i < 180; i++)); do curl -fsS -o /dev/null "$URL/healthz" 2>/dev/null && break; sleep 1; done
curl -fsS -o /dev/null "$URL/healthz" || die "the server did not answer $URL/healthz within 180 s"
step_done "up (server healthy)"

# the agent registers itself; its first lines say what isolation builds get
for ((i = 0; i < 120; i++)); do
  podman logs "${PROJECT}_agent_1" 2>&1 | grep -q 'registered as\|using the agent token' && break
  sleep 1
done
say "agent: $(podman logs "${PROJECT}_agent_1" 2>&1 | grep -m1 -i 'sandbox\|isolation\|bubblewrap' || echo '(no isolation line yet)')"

# 4. the example series and its verdict
say "submitting examples/kmutex-woken-waiter.mbox (suite $SUITE, $ROUNDS rounds)"
body=$(jq -n --rawfile m examples/kmutex-woken-waiter.mbox --arg s "$SUITE" '{mbox: $m, suites: [$s]}')
answer=$(curl -sS -X POST -H 'Content-Type: application/json' -d "$body" "$URL/api/v1/submissions")
id=$(jq -r '.id // empty' <<<"$answer")
[[ -n $id ]] || die "the server refused the example: $answer"
step_done "submit"
# progress: the submission's state and each job's rounds, printed when they
# change, with the seconds since the submission
t0=$(date +%s) last="" state=""
until [[ $state == done || $state == failed ]]; do
  ((SECONDS_WAITED = $(date +%s) - t0)) || true
  [[ $SECONDS_WAITED -le $TIMEOUT ]] || die "no verdict within $TIMEOUT s (IMAGES_TIMEOUT)"
  [[ -z $state ]] || sleep 5
  sub=$(curl -sS "$URL/api/v1/submissions/$id")
  read -r state progress < <(jq -r '[.state, ([.jobs[]? | "\(.suite)=\(.state):\(.rounds_complete // 0)/\(.rounds // "?")"] | join(","))] | join(" ")' <<<"$sub")
  if [[ "$state $progress" != "$last" ]]; then
    printf '  +%4d s  %s %s\n' "$SECONDS_WAITED" "$state" "$progress"
    last="$state $progress"
  fi
done
step_done "submission to verdict"
[[ $state == done ]] || die "the submission failed: $(jq -r '.reason // ([.jobs[]?.reason] | join("; "))' <<<"$sub")"
say "verdict: $(jq -r .verdict <<<"$sub")"
curl -sS "$URL/api/v1/submissions/$id/report?format=text" | head -n 25
