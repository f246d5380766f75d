#!/usr/bin/env bash
# locklab-agent's options: one table of flag, variable, default and help
# (agents/main.c), as the server's.  Every bad value, from a flag or from a
# variable, is refused with exit 2 and a message that names where it came
# from; a flag wins over its variable; an empty variable is unset; --help
# lists every option with its variable.  Nothing here reaches a network: each
# run ends before the agent's first request.
. "$(dirname "$0")/lib/tap.sh"

A=$BIN/locklab-agent
# run [VAR=value ...] -- ARGS...: the agent's exit status in RC, its stderr in ERR
run() {
  local envs=()
  while [[ $1 != -- ]]; do envs+=("$1"); shift; done
  shift
  ERR=$(env -u LOCKLAB_AGENT_TOKEN "${envs[@]}" "$A" "$@" 2>&1 >/dev/null)
  RC=$?
}

help=$("$A" --help); ok $? "--help exits 0"
missing=
for o in server token token-file workdir name native-tree once build-timeout run-timeout \
  max-prefixes poll jobs lockbench base-cache kernel-cache fetch-allow sandbox-mem sandbox-procs \
  sandbox-fsize sandbox-tmp duet lockstep abba noise-interval noise-rounds allow-unsandboxed; do
  grep -qE -- "^  --$o( |$)" <<<"$help" || missing+=" --$o"
done
is "$missing" "" "--help lists every option"
like "$help" '\[\$LOCKLAB_POLL, 5\]' "with its variable and default (--poll: LOCKLAB_POLL, 5)"
like "$help" '\[\$LOCKLAB_ALLOW_UNSANDBOXED=1\]' "a switch shows the value that sets it"

run -- --poll 0
is "$RC" 2 "--poll 0: exit 2"
like "$ERR" "--poll: '0' is not a positive whole number" "naming the flag and the value"
run LOCKLAB_POLL=x -- --token t
is "$RC" 2 "LOCKLAB_POLL=x: exit 2"
like "$ERR" "\\\$LOCKLAB_POLL: 'x' is not a positive whole number" "naming the variable"
run LOCKLAB_SANDBOX_MEM=-5 -- --token t
like "$ERR" "\\\$LOCKLAB_SANDBOX_MEM: '-5' is not a positive whole number" "a variable new to this table (LOCKLAB_SANDBOX_MEM) is read and checked"
run -- --noise-rounds 2
like "$ERR" "--noise-rounds: '2' is not a whole number of at least 3" "a least value above 1 is said"
run LOCKLAB_DUET=maybe -- --token t
is "$RC:$ERR" "2:locklab-agent: \$LOCKLAB_DUET: 'maybe' is not on or off" "an on/off variable takes on or off only"
run LOCKLAB_ALLOW_UNSANDBOXED=yes -- --token t
like "$RC:$ERR" "^2:.*LOCKLAB_ALLOW_UNSANDBOXED: 'yes' is not 1 or 0" "a switch's variable takes 1 or 0 only"
run -- --token t stray
like "$RC:$ERR" "^2:.*unexpected argument 'stray'" "a stray argument: exit 2"
run -- --no-such-option
is "$RC" 2 "an unknown option: exit 2"

# a flag wins over its variable: the flag's bad list is the one refused
run LOCKLAB_FETCH_ALLOW=127.0.0.1:9 -- --token t --server http://127.0.0.1:9 --fetch-allow 127.0.0.0/33
like "$RC:$ERR" "^2:.*bad CIDR '127.0.0.0/33'" "--fetch-allow wins over LOCKLAB_FETCH_ALLOW"
run LOCKLAB_SERVER=ftp://x -- --token t
like "$RC:$ERR" "^2:.*--server must be an http" "the variable is read when no flag is given"
# an empty variable is unset: the agent goes on to its next check (no token)
run LOCKLAB_POLL= LOCKLAB_DUET= --
like "$RC:$ERR" "^2:.*no token" "empty LOCKLAB_POLL and LOCKLAB_DUET are unset, not refused"
done_testing
