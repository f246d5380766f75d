#!/usr/bin/env bash
# demo-pgdir.sh VAR - print the folder for make demo's PostgreSQL cluster.
# VAR/pg when the cluster's user can reach it: always when not root; as root
# the cluster runs as `postgres`, and a clone under a private (0700) folder,
# such as root's home or a mktemp -d, is out of its reach.  Then
# /var/lib/locklab-demo/HASH/pg, HASH naming VAR, so each clone keeps its own
# cluster.  A folder chosen before (VAR/pgdir) is kept.
set -euo pipefail
var=${1:?usage: demo-pgdir.sh VAR}
[[ -d $var ]] || { echo "demo-pgdir: no folder $var" >&2; exit 1; }
var=$(cd "$var" && pwd)
if [[ -s $var/pgdir ]]; then cat "$var/pgdir"; exit 0; fi
if [[ $(id -u) -ne 0 ]]; then echo "$var/pg"; exit 0; fi
chmod 755 "$var"
if (cd / && runuser -u postgres -- test -x "$var" -a -r "$var"); then
  echo "$var/pg"
else
  base=${LOCKLAB_DEMO_PGROOT:-/var/lib/locklab-demo}
  mkdir -p "$base" && chmod 755 "$base"
  echo "$base/$(printf '%s' "$var" | sha256sum | cut -c1-16)/pg"
fi
