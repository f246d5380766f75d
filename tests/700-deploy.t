#!/usr/bin/env bash
# Deployment files, checked without a Docker engine: the compose file through
# `docker compose config` (or Debian's docker-compose), the Dockerfiles
# through scripts/lint-docker.sh and against the programs they package, the
# agent's registering entrypoint against a real server, and the systemd
# units through systemd-analyze verify and the programs' --help.
. "$(dirname "$0")/lib/tap.sh"
. "$(dirname "$0")/lib/pg.sh"
. "$(dirname "$0")/lib/server.sh"

cd "$TOP" || exit 1
COMPOSE_FILE=docker/docker-compose.yml
SERVER_HELP=$("$BIN/locklab-server" --help 2>&1)
AGENT_HELP=$("$BIN/locklab-agent" --help 2>&1)

# ---- docker compose config ---------------------------------------------------
if docker compose version >/dev/null 2>&1; then
  DC=(docker compose)
elif command -v docker-compose >/dev/null 2>&1; then
  DC=(docker-compose)
else
  DC=()
fi
ok "$([[ ${#DC[@]} -gt 0 ]]; echo $?)" "a compose tool is installed (docker compose, or Debian's docker-compose)"
[[ ${#DC[@]} -gt 0 ]] || DC=(false)

# with an env file that lacks the secrets (and so ignoring any docker/.env
# of this checkout) the file refuses to render
: >"$T/empty.env"
out=$(env -u POSTGRES_PASSWORD -u LOCKLAB_ADMIN_TOKEN "${DC[@]}" -f "$COMPOSE_FILE" \
  --env-file "$T/empty.env" config 2>&1)
rc=$?
ok "$([[ $rc -ne 0 ]]; echo $?)" "compose config fails when the secrets are not set"
like "$out" 'POSTGRES_PASSWORD|LOCKLAB_ADMIN_TOKEN' "and names the missing secret"

# rendered with the example env file, as an operator's first run would be
cp docker/.env.example "$T/test.env"
sed -i 's/^POSTGRES_PASSWORD=.*/POSTGRES_PASSWORD=pw-70/; s/^LOCKLAB_ADMIN_TOKEN=.*/LOCKLAB_ADMIN_TOKEN=admin-70/' "$T/test.env"
env -u POSTGRES_PASSWORD -u LOCKLAB_ADMIN_TOKEN "${DC[@]}" -f "$COMPOSE_FILE" \
  --env-file "$T/test.env" config >"$T/compose.yml" 2>"$T/compose.err"
ok $? "compose config renders docker/docker-compose.yml with docker/.env.example"
[[ -s $T/compose.err ]] && diag "$(cat "$T/compose.err")"
python3 -c 'import json, sys, yaml; json.dump(yaml.safe_load(sys.stdin), sys.stdout)' \
  <"$T/compose.yml" >"$T/compose.json" 2>"$T/yaml.err" || diag "$(cat "$T/yaml.err")"
C=$T/compose.json
q() { jq -r "$@" "$C" 2>/dev/null; }

is "$(q '.services | keys | join(" ")')" "agent postgres server" "services: postgres, server, agent"

# postgres
is "$(q '.services.postgres.image')" "locklab-postgres:local" "postgres runs the locklab-postgres image"
is "$(q '.services.postgres.build.dockerfile')" "docker/Dockerfile.postgres" \
  "which compose builds from Debian's postgresql-15 (docker/Dockerfile.postgres)"
pgvol=$(q '.services.postgres.volumes[] | if type == "string" then . else "\(.source):\(.target)" end' | grep -c ':/var/lib/postgresql/data')
is "$pgvol" 1 "postgres keeps its data in a volume"
like "$(q '.services.postgres.healthcheck.test | if type == "array" then join(" ") else . end')" \
  'pg_isready .*-h 127\.0\.0\.1' "postgres health check is pg_isready over TCP"
is "$(q '.services.postgres.environment.POSTGRES_PASSWORD')" "pw-70" "postgres password comes from the env file"

# server
is "$(q '.services.server.depends_on.postgres.condition')" "service_healthy" "server waits for a healthy postgres"
like "$(q '.services.server.healthcheck.test | join(" ")')" 'curl .*/healthz' "server health check fetches /healthz"
is "$(q '.services.server.environment.LOCKLAB_ADMIN_TOKEN')" "admin-70" "server admin token comes from the env file"
like "$(q '.services.server.environment.LOCKLAB_DB')" 'host=postgres .*dbname=locklab' "server LOCKLAB_DB points at the postgres service"
listen_port=$(q '.services.server.environment.LOCKLAB_LISTEN' | sed 's/.*://')
hc_port=$(q '.services.server.healthcheck.test | join(" ")' | sed -n 's|.*127\.0\.0\.1:\([0-9]*\)/healthz.*|\1|p')
pub_port=$(q '.services.server.ports[0] | if type == "string" then . else "\(.target)" end' | sed 's|/tcp||; s|.*:||')
is "$listen_port $hc_port $pub_port" "8080 8080 8080" "server listens, is checked and is published on one port"
is "$(q '.services.server.ports[0] | if type == "string" then . else .host_ip end' | sed 's/:.*//')" \
  "127.0.0.1" "the published port is local unless the operator opens it"

# agent
is "$(q '.services.agent.depends_on.server.condition')" "service_healthy" "agent waits for a healthy server"
workdir=$(q '.services.agent.environment.LOCKLAB_WORKDIR')
agvol=$(q '.services.agent.volumes[] | if type == "string" then . else "\(.source):\(.target)" end' | grep -c ":$workdir\(:rw\)\{0,1\}\$")
is "$agvol" 1 "agent workdir ($workdir) is a volume"
is "$(q '.services.agent.environment.LOCKLAB_SERVER')" "http://server:8080" "agent talks to the server service"
like "$(q '.services.agent.healthcheck.test | join(" ")')" 'healthz' "agent has a health check"
is "$(q '.services.agent.networks | keys | join(" ")')" "lab" "agent is not on the database network"
is "$(q '.networks.db.internal')" "true" "database network is internal"
is "$(q '.volumes | keys | join(" ")')" "agent-work pgdata" "named volumes are declared"
for s in postgres server agent; do
  df=$(q ".services.$s.build.dockerfile")
  ctx=$(q ".services.$s.build.context")
  ok "$([[ -f "$ctx/$df" && $(cd "$ctx" && pwd) == "$TOP" ]]; echo $?)" \
    "$s builds $df with the repository root as context"
done

# every LOCKLAB_* variable handed to a program is one it knows
bad=
for v in $(q '.services.server.environment | keys[]' | grep '^LOCKLAB_'); do
  grep -q "\[\$${v}[],=]" <<<"$SERVER_HELP" || bad+=" server:$v"
done
for v in $(q '.services.agent.environment | keys[]' | grep '^LOCKLAB_'); do
  grep -q "\[\$${v}[],]" <<<"$AGENT_HELP" || grep -q "$v" docker/entrypoint-agent.sh || bad+=" agent:$v"
done
is "$bad" "" "compose passes only variables the programs (or the agent entrypoint) read"

bad=
for v in $(sed -n 's/^#\{0,1\}\([A-Z_][A-Z0-9_]*\)=.*/\1/p' docker/.env.example); do
  [[ $v == COMPOSE_PROJECT_NAME ]] && continue
  grep -q "\${${v}[:}]" "$COMPOSE_FILE" || bad+=" $v"
done
is "$bad" "" "every variable of .env.example is used by the compose file"

# ---- Dockerfiles ---------------------------------------------------------------
out=$(scripts/lint-docker.sh 2>&1)
ok $? "scripts/lint-docker.sh passes on docker/Dockerfile.*"
[[ $out == *clean* ]] || diag "$out"

# a deliberately bad Dockerfile: every rule must fire, at the right line
cat >"$T/Dockerfile.bad" <<'EOF'
FROM debian AS build
RUN apt-get update
RUN apt-get install gcc && rm -rf /var/lib/apt/lists/*
RUN apt-get update && apt-get install -y --no-install-recommends \
      make \
 && apt-get dist-upgrade -y
FROM ubuntu:latest
ADD local.tar.gz /opt/
COPY no/such/file /opt/
COPY --from=nosuchstage /x /y
RUN apt install -y curl
USER root
CMD /usr/bin/foo --bar
EOF
out=$(scripts/lint-docker.sh "$T/Dockerfile.bad" 2>&1)
rc=$?
is "$rc" 1 "the lint fails on a bad Dockerfile"
f=$T/Dockerfile.bad
for want in \
  "$f:1: from-pin: FROM debian has no tag" \
  "$f:2: apt-update-alone:" \
  "$f:2: apt-lists:" \
  "$f:3: apt-yes:" \
  "$f:3: apt-recommends:" \
  "$f:4: apt-lists:" \
  "$f:4: apt-upgrade:" \
  "$f:7: from-pin: FROM ubuntu:latest uses :latest" \
  "$f:7: healthcheck:" \
  "$f:8: add:" \
  "$f:9: copy-source: COPY source 'no/such/file' does not exist" \
  "$f:10: copy-from:" \
  "$f:11: apt-not-apt-get:" \
  "$f:12: user: the final stage ends as USER root" \
  "$f:13: exec-form:"; do
  grep -qF -- "$want" <<<"$out" || { ok 1 "lint reports '$want'"; diag "$out"; continue; }
  ok 0 "lint reports '$want'"
done
unlike "$out" "$f:3: apt-lists:" "no apt-lists report where the lists are removed"

# and passes a minimal good one (so it is not failing on everything)
printf 'FROM debian:bookworm-slim\nCOPY Makefile /x/\nUSER nobody\nHEALTHCHECK CMD ["true"]\nCMD ["true"]\n' \
  >"$T/Dockerfile.good"
out=$(scripts/lint-docker.sh "$T/Dockerfile.good" 2>&1)
ok $? "the lint passes a minimal good Dockerfile"
[[ $out == *clean* ]] || diag "$out"

# the build stages copy enough of the repository to build the program: do
# their COPY lines and RUN make outside Docker, in a scratch folder
build_stage() { # DOCKERFILE TARGET
  local df=$1 target=$2 dir=$T/ctx-$2 src dst
  mkdir -p "$dir"
  awk '/^FROM /{n++} n==1 && /^COPY /' "$df" | grep -v -- '--from' | while read -r _ src dst; do
    if [[ -d $TOP/$src ]]; then
      mkdir -p "$dir/$dst" && cp -a "$TOP/$src/." "$dir/$dst"  # COPY dir/ dst/: the contents
    else
      mkdir -p "$dir/$(dirname "$dst/x")" && cp -a "$TOP/$src" "$dir/$dst"
    fi
  done
  # without the checkout's build/ (a COPY of a folder would bring it along)
  rm -rf "$dir/build"
  # as the image builds it: default BUILD, no sanitizers (make asan exports them)
  env -u BUILD -u SAN -u OPT make -C "$dir" -j"$(nproc)" BUILD=build "build/$target" \
    >"$T/build-$target.log" 2>&1
}
build_stage docker/Dockerfile.server locklab-server
ok $? "the server's build stage has what make build/locklab-server needs"
[[ -x $T/ctx-locklab-server/build/locklab-server ]] || diag "$(tail -n 15 "$T/build-locklab-server.log")"
build_stage docker/Dockerfile.agent locklab-agent
ok $? "the agent's build stage has what make build/locklab-agent needs"
[[ -x $T/ctx-locklab-agent/build/locklab-agent ]] || diag "$(tail -n 15 "$T/build-locklab-agent.log")"

# the runtime stages install the Debian package of every library the
# programs link (libc6 comes with the base image)
runtime_pkgs() { # DOCKERFILE: the packages apt-get installs in the last stage
  awk '/^FROM /{n++; buf=""} {print n "\t" $0}' "$1" |
    awk -F'\t' -v last="$(grep -c '^FROM ' "$1")" '$1 == last {print $2}' |
    awk '/^[ \t]*#/ {next} {l = l $0} /\\[ \t]*$/ {sub(/\\[ \t]*$/, " ", l); next} {print l; l = ""}' |
    grep '^RUN ' | sed 's/&&/\n/g; s/;/\n/g' | grep -E 'apt-get( [^ ]+)* install' |
    sed 's/.* install //' | tr -s ' ' '\n' | grep -E '^[a-z0-9][a-z0-9.+-]+$'
}
triplet=$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
for prog in server agent; do
  pkgs=$(runtime_pkgs "docker/Dockerfile.$prog")
  missing=
  for so in $(readelf -d "$BIN/locklab-$prog" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p'); do
    lib=$(ldconfig -p | awk -v s="$so" '$1 == s {print $NF; exit}')
    real=$(basename "$(readlink -f "$lib")")
    pkg=$(dpkg -S "/lib/$triplet/$real" "/usr/lib/$triplet/$real" 2>/dev/null | head -n 1 | cut -d: -f1)
    [[ $pkg == libc6 ]] && continue
    [[ $so =~ ^lib(asan|ubsan|lsan|tsan|hwasan)\. ]] && continue  # make asan's build
    grep -qx -- "$pkg" <<<"$pkgs" && continue
    # or a -dev package that depends on it (the agent's runtime has those)
    found=
    for d in $(apt-cache rdepends --installed "$pkg" 2>/dev/null | sed -n 's/^[ |]*\([^ ]*-dev\)$/\1/p'); do
      grep -qx -- "$d" <<<"$pkgs" && found=1
    done
    [[ -n $found ]] || missing+=" $so($pkg)"
  done
  is "$missing" "" "the $prog runtime image installs every linked library's package"
done

# the agent builds lockbench from each tree at run time: its image needs the
# tools, and the -dev package of every module the Makefile asks pkg-config
# for (all at once: one missing .pc file empties the whole link line)
pkgs=$(runtime_pkgs docker/Dockerfile.agent)
missing=
for p in git make gcc libc6-dev pkg-config gdb bubblewrap; do
  grep -qx -- "$p" <<<"$pkgs" || missing+=" $p"
done
for mod in $(sed -n 's/^PKGS *:= *//p' Makefile); do
  pc=$(pkg-config --variable=pcfiledir "$mod" 2>/dev/null)/$mod.pc
  dev=$(dpkg -S "$pc" 2>/dev/null | head -n 1 | cut -d: -f1)
  grep -qx -- "$dev" <<<"$pkgs" || missing+=" $mod(${dev:-no package found})"
done
is "$missing" "" "the agent runtime image has the build tools and every -dev package of the Makefile's PKGS"

if apt-cache policy libc6 2>/dev/null | grep -q 'Candidate: [0-9]'; then
  # shellcheck disable=SC2046  # one package name per word
  found=$(apt-cache policy $(runtime_pkgs docker/Dockerfile.server) $(runtime_pkgs docker/Dockerfile.agent) 2>/dev/null |
    awk '/^[^ ].*:$/ {p = $0; sub(/:$/, "", p)} /Candidate: [0-9]/ {print p}')
  bad=
  for p in $(runtime_pkgs docker/Dockerfile.server) $(runtime_pkgs docker/Dockerfile.agent); do
    grep -qx -- "$p" <<<"$found" || bad+=" $p"
  done
  is "$bad" "" "every package the runtime images install exists in Debian"
else
  ok 0 "every package the runtime images install exists in Debian # SKIP no apt lists (apt-get update)"
fi

ok "$([[ -x docker/entrypoint-agent.sh ]]; echo $?)" "the agent entrypoint is executable (COPY keeps the mode)"

# ---- the agent entrypoint registers against a real server --------------------
pg_start || exit 1
server_start || exit 1
ep() { # WORKDIR [VAR=VALUE...] -- ARGS: run the entrypoint with the built agent
  local wd=$1
  shift
  env -i PATH="$BIN:/usr/bin:/bin" HOME="$T" LOCKLAB_SERVER="$URL" LOCKLAB_WORKDIR="$wd" \
    LOCKLAB_WAIT_SECONDS=10 "$@"
}
ep "$T/ag1" LOCKLAB_ADMIN_TOKEN="$ADMIN_TOKEN" LOCKLAB_AGENT_NAME=box-70 \
  docker/entrypoint-agent.sh --once >"$T/ep1.log" 2>&1
ok $? "entrypoint with only the admin token registers and runs the agent (--once)"
like "$(cat "$T/ep1.log")" "registered as 'box-70'" "it says it registered"
is "$(stat -c %a "$T/ag1/agent.token" 2>/dev/null)" 600 "the agent token is saved, mode 600"
api GET /api/v1/agents
is "$(jq -r '[.agents[] | select(.name == "box-70")] | length' <<<"$BODY")" 1 "the server lists the agent once"

ep "$T/ag1" docker/entrypoint-agent.sh --once >"$T/ep2.log" 2>&1
ok $? "a restart without the admin token uses the saved token"
api GET /api/v1/agents
is "$(jq -r '[.agents[] | select(.name == "box-70")] | length' <<<"$BODY")" 1 "and registers no second agent"

ep "$T/ag2" docker/entrypoint-agent.sh --once >"$T/ep3.log" 2>&1
is "$?" 2 "no token of either kind: exit 2"
like "$(cat "$T/ep3.log")" 'no agent token' "with a message saying what to set"

ep "$T/ag3" LOCKLAB_ADMIN_TOKEN=wrong docker/entrypoint-agent.sh --once >"$T/ep4.log" 2>&1
is "$?" 1 "a wrong admin token: exit 1"
like "$(cat "$T/ep4.log")" 'registration .*failed.*"unauthorized".*unknown token' "with the server's reason"
ok "$([[ ! -e $T/ag3/agent.token ]]; echo $?)" "and no token file"

# the agent, and so every build it runs, never sees the admin token
mkdir -p "$T/fakebin"
printf '#!/bin/sh\nenv >"%s"\n' "$T/agent.env" >"$T/fakebin/locklab-agent"
chmod +x "$T/fakebin/locklab-agent"
env -i PATH="$T/fakebin:/usr/bin:/bin" LOCKLAB_SERVER="$URL" LOCKLAB_WORKDIR="$T/ag4" \
  LOCKLAB_ADMIN_TOKEN="$ADMIN_TOKEN" LOCKLAB_AGENT_NAME=box-71 docker/entrypoint-agent.sh >/dev/null 2>&1
env_seen=$(cat "$T/agent.env" 2>/dev/null)
like "$env_seen" '^LOCKLAB_AGENT_TOKEN=.' "the agent gets its token in LOCKLAB_AGENT_TOKEN"
unlike "$env_seen" 'LOCKLAB_ADMIN_TOKEN' "the agent's environment has no admin token"

# ---- systemd units -----------------------------------------------------------------
for u in server agent; do
  unit=dist/systemd/locklab-$u.service
  help=$SERVER_HELP
  [[ $u == agent ]] && help=$AGENT_HELP
  # structure, whether or not systemd-analyze is here
  missing=
  for want in '^ExecStart=/usr/local/bin/locklab-'"$u"'( |$)' '^Restart=on-failure$' \
    '^EnvironmentFile=/etc/locklab/'"$u"'\.env$' '^ProtectSystem=strict$' '^ProtectHome=(yes|read-only|tmpfs)$' \
    '^PrivateTmp=yes$' '^NoNewPrivileges=yes$' '^(DynamicUser=yes|User=.+)$' '^WantedBy=multi-user\.target$'; do
    grep -qE -- "$want" "$unit" || missing+=" /$want/"
  done
  is "$missing" "" "$unit has the expected settings"
  # every option and variable the unit names is one the program knows
  bad=
  for v in $(grep -oE 'LOCKLAB_[A-Z_]+' "$unit" | sort -u); do
    grep -qE "(variable: |\[\\\$)$v([],]|\$)" <<<"$help" || bad+=" $v"
  done
  for o in $(sed -n 's/^ExecStart=//p' "$unit" | grep -oE -- '--[a-z-]+' | sort -u); do
    grep -qE -- "^ +$o( |$)" <<<"$help" || bad+=" $o"
  done
  is "$bad" "" "$unit names only options in locklab-$u --help"
done
like "$(cat dist/systemd/locklab-agent.service)" 'StateDirectory=locklab-agent' "the agent keeps its workdir in a StateDirectory"
like "$(grep '^RestrictNamespaces=' dist/systemd/locklab-agent.service)" 'user' \
  "the agent unit allows the user namespaces bubblewrap needs"
like "$(grep '^RestrictNamespaces=' dist/systemd/locklab-server.service)" '=yes$' \
  "the server unit allows no namespaces"

if command -v systemd-analyze >/dev/null 2>&1; then
  mkdir -p "$T/units"
  for u in server agent; do
    sed "s|^ExecStart=/usr/local/bin/locklab-$u|ExecStart=$BIN/locklab-$u|" \
      "dist/systemd/locklab-$u.service" >"$T/units/locklab-$u.service"
  done
  out=$(systemd-analyze verify "$T/units/locklab-server.service" "$T/units/locklab-agent.service" 2>&1)
  rc=$?
  is "$rc:$out" "0:" "systemd-analyze verify accepts both units without a warning"
  # the same check sees a misspelt key (it warns and exits 0: read the output)
  sed 's/^ProtectSystem=/ProtectSytem=/' "$T/units/locklab-server.service" >"$T/units/bad.service"
  out=$(systemd-analyze verify "$T/units/bad.service" 2>&1)
  like "$out" "Unknown key 'ProtectSytem'" "systemd-analyze verify catches a misspelt key"
else
  ok 0 "systemd-analyze verify # SKIP systemd-analyze not installed (package systemd)"
  ok 0 "systemd-analyze catches a misspelt key # SKIP systemd-analyze not installed"
fi

done_testing
