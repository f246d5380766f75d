#!/usr/bin/env bash
# The agent pins a submitted git URL to the addresses its policy checked
# (agents/netpolicy.h): for http(s), git's http.curloptResolve.  Loopback
# only: a dumb-http git repository on 127.0.0.1, reached by a name that no
# resolver knows.  Without the pin git cannot find the name; with it git
# connects to the pinned address and nothing else: what DNS says at
# connection time no longer matters (DNS rebinding).  Redirects are off.
# ssh:// URLs go through the agent's ssh wrapper (locklab-ssh), which holds
# ssh to the checked address the same way.
. "$(dirname "$0")/lib/tap.sh"
. "$(dirname "$0")/lib/pg.sh"
. "$(dirname "$0")/lib/server.sh"

git init -q --bare "$T/www/repo.git"
git -C "$T/www/repo.git" symbolic-ref HEAD refs/heads/main
git init -q -b main "$T/src"
git -C "$T/src" -c user.name=t -c user.email=t@localhost commit -q --allow-empty -m one
git -C "$T/src" push -q "$T/www/repo.git" main
git -C "$T/www/repo.git" update-server-info
file_server "$T/www" || { echo "Bail out! no file server"; exit 1; }
name=locklab-pinned.invalid
url="http://$name:$FILES_PORT/repo.git"
want=$(git -C "$T/src" rev-parse HEAD)

out=$(timeout 20 git ls-remote "$url" 2>&1)
ok $((! $?)) "without a pin, git cannot reach $name (the name does not resolve)"
out=$(timeout 20 git -c "http.curloptResolve=$name:$FILES_PORT:127.0.0.1" -c http.followRedirects=false \
  ls-remote "$url" 2>&1)
ok $? "with http.curloptResolve=$name:$FILES_PORT:127.0.0.1, git fetches from the pinned address"
like "$out" "^$want[[:space:]]+refs/heads/main" "and sees the repository's branch"
[[ $(grep -c 'GET /repo.git/info/refs' "$T/http.log") -ge 1 ]]
ok $? "the file server on 127.0.0.1 got git's request"

# a pin to another loopback port is obeyed too: the connection goes there, not to the file server
before=$(grep -c 'GET /repo.git' "$T/http.log")
timeout 20 git -c "http.curloptResolve=$name:$FILES_PORT:127.0.0.2" ls-remote "$url" >/dev/null 2>&1
ok $((! $?)) "a pin to 127.0.0.2 (nothing listens there) fails"
is "$(grep -c 'GET /repo.git' "$T/http.log")" "$before" "and the file server on 127.0.0.1 saw no request"

# ssh:// URLs: git's ssh is the agent's wrapper (netlib/sshpin.c, the
# agent binary started as locklab-ssh), held to the checked address with
# HostName=, the host key still checked against the name.  A listener on
# 127.0.0.1 (tests/lib/firstline.py) takes connections and records what the
# client said first.
mkdir -p "$T/bin"
ln -s "$BIN/locklab-agent" "$T/bin/locklab-ssh"
python3 "$TOP/tests/lib/firstline.py" "$T/ssh.port" "$T/ssh.log" &
at_exit "kill $! 2>/dev/null"
for _ in $(seq 50); do [[ -s $T/ssh.port ]] && break; sleep 0.1; done
sport=$(cat "$T/ssh.port")
touch "$T/ssh.log"
surl="ssh://git@$name:$sport/repo.git"
sshgit() { # PIN: git ls-remote through the wrapper with LOCKLAB_SSH_PIN=PIN
  env HOME="$T" GIT_SSH="$T/bin/locklab-ssh" LOCKLAB_SSH_PIN="$1" \
    timeout 30 git -c ssh.variant=ssh ls-remote "$surl" 2>&1
}
out=$(sshgit "$name 127.0.0.1")
is "$(wc -l <"$T/ssh.log")" 1 "an ssh URL pinned to 127.0.0.1 connects there once, though $name does not resolve"
like "$(head -1 "$T/ssh.log")" "^SSH-2\.0-" "and what connected was ssh"
out=$(sshgit "$name 127.0.0.2")
is "$(wc -l <"$T/ssh.log")" 1 "pinned to 127.0.0.2 (nothing listens there), the listener on 127.0.0.1 gets nothing"
out=$(sshgit "other.invalid 127.0.0.1")
like "$out" "locklab-ssh: refused: the destination is not the checked host: $name" \
  "a destination that is not the pinned name is refused, and says why"
is "$(wc -l <"$T/ssh.log")" 1 "and nothing connected"
out=$(env -u LOCKLAB_SSH_PIN HOME="$T" GIT_SSH="$T/bin/locklab-ssh" timeout 30 git -c ssh.variant=ssh \
  ls-remote "$surl" 2>&1)
like "$out" "locklab-ssh: refused: no LOCKLAB_SSH_PIN" "without a pin the wrapper refuses"
is "$(wc -l <"$T/ssh.log")" 1 "and nothing connected"

# the agent: a git submission naming an ssh URL by a name that resolves
# (localhost) is fetched through its wrapper, pinned to an address its
# policy checked and allowed (LOCKLAB_FETCH_ALLOW); the listener is no ssh
# server, so the fetch fails and the job says so
pg_start || { echo "Bail out! no postgres"; exit 1; }
server_start || { echo "Bail out! no server"; exit 1; }
register_agent
mkdir -p "$T/tree"
git init -q -b main "$T/tree/repo"
git -C "$T/tree/repo" -c user.name=t -c user.email=t@localhost commit -q --allow-empty -m base
api POST /api/v1/submissions -H 'Content-Type: application/json' \
  -d "{\"git\": {\"url\": \"ssh://git@localhost:$sport/repo.git\", \"ref\": \"main\"}, \"suites\": [\"smoke\"]}"
is "$CODE" 202 "a git submission with an ssh URL is taken" || diag "$BODY"
sub=$(jq -r .id <<<"$BODY")
LOCKLAB_FETCH_ALLOW="127.0.0.1:$sport,[::1]:$sport" HOME="$T" timeout 120 "$BIN/locklab-agent" \
  --server "$URL" --token "$AGENT_TOKEN" --workdir "$T/agent-ssh" --native-tree "$T/tree/repo" --once \
  >"$T/agent-ssh.log" 2>&1
is "$(tail -n +2 "$T/ssh.log" | grep -c '^SSH-2\.0-')" 1 "the agent's fetch of the ssh URL connected to the checked address once, as ssh"
[[ -L $T/agent-ssh/bin/locklab-ssh ]]
ok $? "the agent linked its ssh wrapper in its workdir"
api GET "/api/v1/submissions/$sub"
reason=$(jq -r '[.jobs[].reason // empty] | join(" ")' <<<"$BODY")
like "$reason" "locklab-ssh: localhost held to (127\\.0\\.0\\.1|::1)" \
  "the agent's git ran ssh through the wrapper, held to the checked address" || diag "$(tail -20 "$T/agent-ssh.log")"
like "$reason" "Connection closed by (127\\.0\\.0\\.1|::1) port $sport" \
  "and the job fails with the fetch's reason (the listener is no ssh server)"

# the allow list is read at start: a bad one stops the agent with the reason
out=$(LOCKLAB_FETCH_ALLOW="127.0.0.1:7000, 127.0.0.0/33" timeout 10 "$BIN/locklab-agent" \
  --server http://127.0.0.1:1 --token x --workdir "$T/agent" --once 2>&1)
is "$?" 2 "an agent with a bad LOCKLAB_FETCH_ALLOW does not start"
like "$out" "LOCKLAB_FETCH_ALLOW: bad CIDR '127.0.0.0/33'" "and says which entry"
done_testing
