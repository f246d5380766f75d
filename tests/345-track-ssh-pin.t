#!/usr/bin/env bash
# The tracker's fetch of an ssh:// tree is held to the address its fetch
# policy checked, as the agent's fetch of a submitted ssh:// URL is
# (tests/340-agent-git-pin.t): git's ssh is the server's own binary started as
# locklab-ssh (netlib/sshpin.c), linked under --track-dir/bin, which
# runs ssh with HostName=<checked address>.  Loopback only: a listener on
# 127.0.0.1 (and ::1 where the machine has it, tests/lib/firstline.py)
# records what each client says first; it is no ssh server, so every fetch
# fails after ssh said hello, and the tree's error says where ssh was held
# and why it failed.
#
# Two names, no resolver of our own: "localhost" (127.0.0.1, or ::1 too),
# and "127.2", which glibc's resolver reads as 127.0.0.2 (inet_aton's short
# form) while the policy's address-literal test (inet_pton) does not, so it
# is checked and pinned like any name.  That the wrapper's HostName= wins
# over what the name says when ssh connects is shown with a name that does
# not resolve at all in tests/340-agent-git-pin.t.
. "$(dirname "$0")/lib/tap.sh"
. "$(dirname "$0")/lib/pg.sh"
. "$(dirname "$0")/lib/server.sh"

python3 "$TOP/tests/lib/firstline.py" "$T/ssh.port" "$T/ssh.log" &
at_exit "kill $! 2>/dev/null"
for _ in $(seq 50); do [[ -s $T/ssh.port ]] && break; sleep 0.1; done
sport=$(cat "$T/ssh.port")
touch "$T/ssh.log"

pg_start || bail_out "no postgres"
server_start --track-interval 3600 --track-dir "$T/track" \
  --fetch-allow "127.0.0.1:$sport,[::1]:$sport,127.0.0.2:$sport" || bail_out "no server"
psq() { psql -qAt -c "$1"; }
tree_field() { curl -s "$URL/api/v1/trees" | jq -r --argjson t "$1" ".trees[] | select(.id == \$t) | $2"; }
mk_tree() { # NAME URL: a tracked tree; sets TREE
  api POST /api/v1/trees -H "Authorization: Bearer $ADMIN_TOKEN" -H 'Content-Type: application/json' \
    -d "$(jq -n --arg n "$1" --arg u "$2" '{name: $n, url: $u, branch: "main", track: true}')"
  TREE=$(jq -r '.id // empty' <<<"$BODY")
}
# fetched TREE: poke it and wait (up to 60 s) until its fetch has failed
fetched() {
  local i
  api POST "/api/v1/trees/$1/poke" -H "Authorization: Bearer $ADMIN_TOKEN"
  [[ $CODE == 202 ]] || diag "poke $1: $CODE $BODY"
  for ((i = 0; i < 300; i++)); do
    [[ $(psq "SELECT track_error IS NOT NULL FROM trees WHERE id = $1") == t ]] && return 0
    sleep 0.2
  done
  diag "tree $1 was not fetched in 60 s"
  return 1
}

# pinned to 127.0.0.1 (or ::1): ssh reaches the listener, once
mk_tree near "ssh://git@localhost:$sport/repo.git"
is "$CODE" 201 "an ssh:// tree is registered (a user name alone is no credential)" || diag "$BODY"
near=$TREE
fetched "$near"
is "$(grep -c '^SSH-2\.0-' "$T/ssh.log")" 1 "the tracker's fetch of ssh://git@localhost reached the listener once, as ssh"
err=$(tree_field "$near" .error)
like "$err" "^git fetch: locklab-ssh: localhost held to (127\\.0\\.0\\.1|::1)" \
  "through the server's wrapper, held to the checked address"
like "$err" "Connection closed by (127\\.0\\.0\\.1|::1) port $sport" \
  "and the tree's error says why the fetch failed (the listener is no ssh server)"
[[ -L $T/track/bin/locklab-ssh && $(readlink "$T/track/bin/locklab-ssh") == "$(readlink -f "$BIN/locklab-server")" ]]
ok $? "the server linked its ssh wrapper, itself, under --track-dir/bin"

# pinned to 127.0.0.2: nothing listens there, and the listener on 127.0.0.1 gets nothing
mk_tree far "ssh://git@127.2:$sport/repo.git"
is "$CODE" 201 "a second ssh:// tree, by a name that resolves to 127.0.0.2"
far=$TREE
fetched "$far"
err=$(tree_field "$far" .error)
like "$err" "^git fetch: locklab-ssh: 127\\.2 held to 127\\.0\\.0\\.2; ssh: connect to host 127\\.0\\.0\\.2 port $sport: Connection refused" \
  "its fetch is held to 127.0.0.2, where nothing listens, and says so"
is "$(wc -l <"$T/ssh.log")" 1 "the listener on 127.0.0.1 got no connection from it"

# the policy still comes first: a port it does not name is refused before ssh runs
other=$(free_port)
mk_tree refused "ssh://git@localhost:$other/repo.git"
fetched "$TREE"
like "$(tree_field "$TREE" .error)" "^refused: localhost port $other: refused by the fetch policy" \
  "an ssh:// tree on a port the fetch policy does not allow is refused before ssh runs, and says why"
done_testing
