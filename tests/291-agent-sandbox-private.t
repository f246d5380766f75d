#!/usr/bin/env bash
# Code from a submission, run by an agent started as root, reads nothing
# private: a constructor patched into lockbench's kmutex.c prints what it
# finds in a 0600 file in /root, in a 0600 file in a folder only root may
# enter, in /etc/shadow and in the agent's token file, then a credential
# header and a private key block, and fails the run.  What it printed is the
# job's reason, yet none of those contents, the agent's token or its
# workdir's path appear in GET /api/v1/submissions/N or its reply.
. "$(dirname "$0")/lib/tap.sh"
. "$(dirname "$0")/lib/pg.sh"
. "$(dirname "$0")/lib/server.sh"
. "$(dirname "$0")/lib/agent.sh"

if [[ $(id -u) != 0 ]]; then
  echo "1..0 # SKIP needs root: it checks what code reads when the agent runs as root"
  exit 0
fi
skip_without_bwrap
pg_start || exit 1
server_start --min-rounds 2 --max-rounds 2 || exit 1
register_agent
tree_init

home_secret="home-canary-$RANDOM$RANDOM"
locked_secret="locked-canary-$RANDOM$RANDOM"
home_canary=/root/.locklab-canary-$$
printf '%s\n' "$home_secret" >"$home_canary"
chmod 600 "$home_canary"
at_exit "rm -f '$home_canary'"
mkdir -m 700 "$T/locked"
printf '%s\n' "$locked_secret" >"$T/locked/canary"
chmod 600 "$T/locked/canary"
mkdir "$T/agent-s"
printf '%s\n' "$AGENT_TOKEN" >"$T/agent-token"
chmod 600 "$T/agent-token"
token=$AGENT_TOKEN
shadow_line=$(head -1 /etc/shadow)

cat >"$T/canary.c" <<C
#include <stdio.h>
#include <string.h>

#include <unistd.h>
static void canary_show(const char *path)
{
	char buf[256];
	FILE *f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "canary-probe: %s: unreadable\n", path);
		return;
	}
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	fclose(f);
	fprintf(stderr, "canary-probe: %s holds %s\n", path, buf);
}
__attribute__((constructor)) static void canary_probe(void)
{
	char cmd[4096], cwd[1024];
	FILE *f = fopen("/proc/self/cmdline", "r");
	size_t n = f ? fread(cmd, 1, sizeof(cmd) - 1, f) : 0;
	if (f)
		fclose(f);
	cmd[n] = 0;
	if (n <= strlen(cmd) + 1 || strcmp(cmd + strlen(cmd) + 1, "run"))
		return;
	fprintf(stderr, "canary-probe: uid %d in %s\n", (int)getuid(), getcwd(cwd, sizeof(cwd)) ? cwd : "?");
	canary_show("$home_canary");
	canary_show("$T/locked/canary");
	canary_show("/etc/shadow");
	canary_show("$T/agent-token");
	/* spelled at run time: the patch itself is public */
	fprintf(stderr, "Authorization: Bearer fakebearer-%s\n", "k9x");
	fprintf(stderr, "-----BEGIN OPENSSH PRIVATE KEY-----\nkeymaterial-%s\n-----END OPENSSH PRIVATE KEY-----\n", "q7z");
	fprintf(stderr, "canary-probe: done\n");
	fflush(stderr);
	_exit(1);
}
C
make_series canary "cat '$T/canary.c' >>lockbench/locks/kmutex.c"
grep -q canary_probe "$T/canary.mbox"; ok $? "the series is made"
submit_mbox "$T/canary.mbox"; sid=$SUB

"$BIN/locklab-agent" --server "$URL" --token-file "$T/agent-token" --workdir "$T/agent-s" \
  --native-tree "$T/tree" --poll 1 --build-timeout 300 --run-timeout 60 >>"$T/agent-s.log" 2>&1 &
AGENT_PID=$!
at_exit "kill -9 $AGENT_PID 2>/dev/null"

wait_state "$sid" failed done 600
is "$(sub_state "$sid")" failed "the probing run fails"
api GET "/api/v1/submissions/$sid"
sub=$BODY
api GET "/api/v1/submissions/$sid/reply"
reply=$BODY
r=$(jq -r '[.jobs[]?.reason] | join(" ")' <<<"$sub")
like "$r" 'canary-probe: done' "what the probe printed is the job's reason"
like "$r" 'canary-probe: uid [1-9][0-9]* in' "the probe ran as a user other than root"
like "$r" "canary-probe: $home_canary: unreadable" "the 0600 file in /root is not readable"
like "$r" "canary-probe: $T/locked/canary: unreadable" "the 0600 file in a folder only root enters is not readable"
like "$r" 'canary-probe: /etc/shadow(: unreadable| holds )' "/etc/shadow reads as nothing"
for what in sub reply; do
  text=${!what}
  unlike "$text" "$home_secret" "$what: the /root canary's content does not appear"
  unlike "$text" "$locked_secret" "$what: the locked canary's content does not appear"
  unlike "$text" "$token" "$what: the agent's token does not appear"
  unlike "$text" "${shadow_line%%:*}:[^ ]*:[0-9]" "$what: no line of /etc/shadow appears"
  unlike "$text" "fakebearer-k9x" "$what: an Authorization header's value is taken out"
  unlike "$text" "keymaterial-q7z" "$what: a private key block is taken out"
  unlike "$text" "$T/agent-s" "$what: the agent's workdir is not named"
done
like "$r" '<workdir>/jobs/' "the agent's paths are shown by their role"
like "$r" 'Authorization:\*+' "the header is there, its value blanked"
like "$r" 'BEGIN OPENSSH PRIVATE KEY-----' "the key block's start is there, its body blanked"
done_testing
