#!/usr/bin/env bash
# The agent pins a submitted git URL to the addresses its policy checked
# (agents/netpolicy.h): for http(s), git's http.curloptResolve.  Loopback
# only: a dumb-http git repository on 127.0.0.1, reached by a name that no
# resolver knows.  Without the pin git cannot find the name; with it git
# connects to the pinned address and nothing else: what DNS says at
# connection time no longer matters (DNS rebinding).  Redirects are off.
. "$(dirname "$0")/lib/tap.sh"
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

# the allow list is read at start: a bad one stops the agent with the reason
out=$(LOCKLAB_FETCH_ALLOW="127.0.0.1:7000, 127.0.0.0/33" timeout 10 "$BIN/locklab-agent" \
  --server http://127.0.0.1:1 --token x --workdir "$T/agent" --once 2>&1)
is "$?" 2 "an agent with a bad LOCKLAB_FETCH_ALLOW does not start"
like "$out" "LOCKLAB_FETCH_ALLOW: bad CIDR '127.0.0.0/33'" "and says which entry"
done_testing
