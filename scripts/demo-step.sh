#!/usr/bin/env bash
# demo-step.sh LOG TITLE COMMAND... - one step of make demo: TITLE on a line,
# the command's output kept in LOG and shown (its last 40 lines) only when
# it fails.  DEMO_VERBOSE=1 shows the output as it comes.
set -uo pipefail
log=${1:?usage: demo-step.sh LOG TITLE COMMAND...}
title=${2:?usage: demo-step.sh LOG TITLE COMMAND...}
shift 2
printf '\033[1m== %s\033[0m\n' "$title"
if [[ ${DEMO_VERBOSE:-0} != 0 ]]; then
  "$@"
  exit
fi
mkdir -p "$(dirname "$log")"
"$@" >"$log" 2>&1
rc=$?
[[ $rc -eq 0 ]] && exit 0
tail -n 40 "$log" >&2
echo "demo: $title failed (exit $rc); the whole output is in $log" >&2
exit "$rc"
