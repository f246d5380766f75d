#!/usr/bin/env bash
# No shell between a submission and a process: every field of a submission
# or a tree that reaches a command (git base, git ref, git url, tree url, tree
# branch) is sent with shell metacharacters and as an option, through the
# real server; nothing runs (no marker file appears), each job fails with a
# reason that names the field, and the agent goes on.  Values the server
# refuses at the door are also written into the database directly, so the
# agent's own checks are what is tested.
. "$(dirname "$0")/lib/tap.sh"
. "$(dirname "$0")/lib/pg.sh"
. "$(dirname "$0")/lib/server.sh"
. "$(dirname "$0")/lib/agent.sh"

# 1. the source: nothing in agents/ or server/ starts a process but through
# netlib's runner (procrun.c: the agent's spawn.c and the tracker's git in
# trackgit.c use it), nothing else in the code they share (lib/ and netlib/) or
# the client
starts='(^|[^_a-z])(system|popen|execl|execlp|execle|execv|execvp|execvpe|posix_spawnp?|fork)[[:space:]]*\('
hits=$(grep -nE "$starts" "$TOP"/agents/*.c "$TOP"/agents/*.h)
is "$hits" "" "no system(), popen(), fork(), exec*() or posix_spawn() in agents/"
hits=$(grep -nE "$starts" "$TOP"/server/*.c "$TOP"/server/*.h "$TOP"/lib/*.[ch] "$TOP"/netlib/*.[ch] \
  "$TOP"/client/*.c |
  grep -v "^$TOP/netlib/procrun\.c:")
is "$hits" "" "none in server/, lib/, netlib/ outside procrun.c, or client/"

# 2. no untrusted code without a sandbox, unless the operator says so
mkdir "$T/nobwrap"
printf '#!/bin/sh\nexit 1\n' >"$T/nobwrap/bwrap"
chmod +x "$T/nobwrap/bwrap"
PATH="$T/nobwrap:$PATH" timeout 5 "$BIN/locklab-agent" --server http://127.0.0.1:1 --token x --workdir "$T/nb" \
  --once >"$T/nobwrap.log" 2>&1
is "$?" 2 "with a bubblewrap that does not work, the agent refuses to start"
like "$(cat "$T/nobwrap.log")" 'bubblewrap .* does not work .* --allow-unsandboxed' "saying why and what would override it"
PATH="$T/nobwrap:$PATH" timeout 5 "$BIN/locklab-agent" --server http://127.0.0.1:1 --token x --workdir "$T/nb" \
  --once --allow-unsandboxed >"$T/nobwrap2.log" 2>&1
like "$(cat "$T/nobwrap2.log")" 'level=warn .*NO SANDBOX' "--allow-unsandboxed starts it, with a warning"

pg_start || exit 1
server_start --allow-local-trees --min-rounds 2 --max-rounds 2 || exit 1
register_agent
tree_init
make_series one "sed -i '1s|^|/* one */\\n|' lockbench/locks/kmutex.c"
gport=$(free_port)
git daemon --export-all --base-path="$T" --listen=127.0.0.1 --port="$gport" --reuseaddr \
  >"$T/git-daemon.log" 2>&1 &
gd=$!
at_exit "kill $gd"
for ((i = 0; i < 50; i++)); do git ls-remote "git://127.0.0.1:$gport/work-one" >/dev/null 2>&1 && break; sleep 0.1; done
gurl="git://127.0.0.1:$gport/work-one"
gref=$(git -C "$T/work-one" symbolic-ref HEAD)
mkdir "$T/m"
M="$T/m"
# a loopback port no URL may reach: the listener notes every connection
listen_loopback "$T/connections"
lport=$LPORT

subs=()
wants=()
names=()
# git_sub NAME URL REF BASE REASON-REGEX: a git submission (through the API
# when the server takes it, else a harmless one rewritten in the database)
git_sub() {
  local name=$1 url=$2 ref=$3 base=$4 want=$5 body
  body=$(jq -n --arg u "$url" --arg r "$ref" --arg b "$base" '{git: {url: $u, ref: $r, base: $b}, suites: ["smoke"]}')
  api POST /api/v1/submissions -H 'Content-Type: application/json' -d "$body"
  if [[ $CODE != 202 ]]; then
    name="$name (refused by the server, $CODE; written to the database)"
    api POST /api/v1/submissions -H 'Content-Type: application/json' \
      -d "$(jq -n --arg u "$gurl" --arg r "$gref" '{git: {url: $u, ref: $r}, suites: ["smoke"]}')"
    sql "UPDATE submissions SET git_url = \$q\$$url\$q\$, git_ref = \$q\$$ref\$q\$, git_base = \$q\$$base\$q\$ WHERE id = $(jq -r .id <<<"$BODY")" >/dev/null
  fi
  subs+=("$(jq -r .id <<<"$BODY")")
  wants+=("$want")
  names+=("$name")
}
# tree_sub NAME URL BRANCH REASON-REGEX: a tree with that url and branch, and a
# mailed series against it
tree_sub() {
  local name=$1 url=$2 branch=$3 want=$4 tname
  tname="t${#subs[@]}"
  api POST /api/v1/trees -H "Authorization: Bearer $ADMIN_TOKEN" -H 'Content-Type: application/json' \
    -d "$(jq -n --arg n "$tname" --arg u "$url" --arg b "$branch" '{name: $n, url: $u, branch: $b}')"
  if [[ $CODE != 200 && $CODE != 201 ]]; then
    name="$name (refused by the server, $CODE; written to the database)"
    api POST /api/v1/trees -H "Authorization: Bearer $ADMIN_TOKEN" -H 'Content-Type: application/json' \
      -d "$(jq -n --arg n "$tname" --arg u "$T/tree" '{name: $n, url: $u, branch: "master"}')"
    sql "UPDATE trees SET url = \$q\$$url\$q\$, branch = \$q\$$branch\$q\$ WHERE name = '$tname'" >/dev/null
  fi
  api POST /api/v1/submissions -H 'Content-Type: application/json' \
    -d "$(jq -n --rawfile m "$T/one.mbox" --arg t "$tname" '{mbox: $m, tree: $t, suites: ["smoke"]}')"
  [[ $CODE == 202 ]] || diag "submission on tree $tname: $CODE $BODY"
  subs+=("$(jq -r .id <<<"$BODY")")
  wants+=("$want")
  names+=("$name")
}

# shell metacharacters
git_sub "base with quotes and ;" "$gurl" "$gref" "x';touch\${IFS}$M/b1;'" "base .* is not a commit"
git_sub "base with \$()" "$gurl" "$gref" "\$(touch\${IFS}$M/b2)" "base .* is not a commit"
git_sub "base with backquotes" "$gurl" "$gref" "\`touch\${IFS}$M/b3\`" "base .* is not a commit"
git_sub "base with |" "$gurl" "$gref" "x|touch\${IFS}$M/b4" "base .* is not a commit"
git_sub "base with &&" "$gurl" "$gref" "x&&touch\${IFS}$M/b5" "base .* is not a commit"
# (git's ref-name rules allow ';' and '$': such a ref is data, and not there)
git_sub "ref with ;" "$gurl" "x;touch\${IFS}$M/r1" "" "couldn't find remote ref x;touch"
git_sub "ref with \$()" "$gurl" "\$(touch\${IFS}$M/r2)" "" "couldn't find remote ref .\(touch"
git_sub "ref with ~ and ^" "$gurl" "x~1^{commit}" "" "git ref .* is not a ref name"
git_sub "url with quotes and ;" "$gurl';touch\${IFS}$M/u1;'" "$gref" "" "cannot fetch the submitted ref"
# options
git_sub "base --upload-pack=" "$gurl" "$gref" "--upload-pack=touch\${IFS}$M/o1" "base .* looks like an option"
git_sub "ref --upload-pack=" "$gurl" "--upload-pack=touch\${IFS}$M/o2" "" "git ref .* is not a ref name"
git_sub "ref -c" "$gurl" "-cprotocol.ext.allow=always" "" "git ref .* is not a ref name"
git_sub "url --upload-pack=" "--upload-pack=touch\${IFS}$M/o4" "$gref" "" "git url .* is not an http"
git_sub "url ext::" "ext::sh -c touch% $M/o5" "$gref" "" "git url .* is not an http"
# the address policy (LOCKLAB_FETCH_ALLOW names only the git daemon's port)
git_sub "url on another loopback port" "git://127.0.0.1:$lport/x" "$gref" "" "git url .*: 127.0.0.1 port $lport: refused by the fetch policy"
git_sub "url on another loopback address" "git://127.0.0.2:$gport/work-one" "$gref" "" "git url .*: 127.0.0.2 port $gport: refused by the fetch policy"
git_sub "url on ::1" "git://[::1]:$gport/work-one" "$gref" "" "git url .*: ::1 port $gport: refused by the fetch policy"
git_sub "url on a mapped 127.0.0.1" "http://[::ffff:127.0.0.1]:$lport/x" "$gref" "" "refused by the fetch policy"
tree_sub "tree url --upload-pack=" "--upload-pack=touch\${IFS}$M/t1" master "tree's URL .* looks like an option"
tree_sub "tree branch with quotes and ;" "$T/tree" "x';touch\${IFS}$M/t2;'" "base .* is not a commit"
tree_sub "tree branch --output=" "$T/tree" "--output=$M/t3" "base .* looks like an option"

LOCKLAB_FETCH_ALLOW="127.0.0.1:$gport" agent_spawn a
for i in "${!subs[@]}"; do
  wait_state "${subs[$i]}" failed done 120 >/dev/null
  api GET "/api/v1/submissions/${subs[$i]}"
  st=$(jq -r .state <<<"$BODY")
  reason=$(jq -r '.reason // ([.jobs[]?.reason] | join(" "))' <<<"$BODY")
  is "$st" failed "${names[$i]}: the job fails"
  like "$reason" "${wants[$i]}" "${names[$i]}: saying why"
done
is "$(ls -A "$M")" "" "no marker file was made: nothing of any field ran"
is "$(cat "$T/connections")" "" "the refused URLs made no connection"
kill -0 "$AGENT_PID"; ok $? "the agent is still running"
done_testing
