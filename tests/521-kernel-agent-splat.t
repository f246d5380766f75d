#!/usr/bin/env bash
# A kernel job is judged for correctness first: a patch to fs/pipe.c that
# takes two mutexes in opposite orders in pipe_read and pipe_write (serialised
# by a gate, so no hang) is submitted to a kernel tree on the server; the agent
# builds the debug kernels (lockdep) beside the measuring ones, boots base and
# patched debug kernels under the pipe workload and locktorture, and the server
# ends the job with the verdict splat, lockdep's words in the reply, and no
# measuring round.
# run-tests: group kernel (base builds and qemu guests whose lockup detectors want their CPUs)
. "$(dirname "$0")/lib/tap.sh"
. "$(dirname "$0")/lib/pg.sh"
. "$(dirname "$0")/lib/server.sh"
. "$(dirname "$0")/lib/agent.sh"

src=$("$TOP/scripts/kernel-source.sh" 2>"$T/src.err")
ok $? "the kernel source is cached" || { diag "$(cat "$T/src.err")"; done_testing; exit 1; }
# the base and debug base in the machine's cache: shared with the tree's own builds
kernel_cache_share "$src"
kcache=$KCACHE dkey=$DKEY
pg_start || exit 1
server_start --min-rounds 1 --max-rounds 1 --allow-local-trees || exit 1
register_agent
api POST /api/v1/trees -H "Authorization: Bearer $ADMIN_TOKEN" -H 'Content-Type: application/json' \
  -d "$(jq -n --arg u "$src" '{name: "linux-6.1", url: $u, branch: "master", kind: "kernel"}')"
is "$CODE" 201 "a kernel tree is registered"

rm -rf "$T/k" && git clone -q --no-checkout "$src" "$T/k" && git -C "$T/k" checkout -q HEAD -- fs/pipe.c
(cd "$T/k" && git apply) <"$TOP/tests/kernel-patches/abba-pipe.patch"
ok $? "the pipe.c patch applies"
git -C "$T/k" -c user.name=Dev -c user.email=dev@example.org commit -q \
  -m "pipe: take two mutexes in opposite orders in pipe_read and pipe_write" -- fs/pipe.c
git -C "$T/k" format-patch -q --stdout -1 >"$T/k.mbox"
grep -q 'locklab_abba' "$T/k.mbox"; ok $? "the mbox holds the patch"
api POST /api/v1/submissions -H 'Content-Type: application/json' \
  -d "$(jq -n --rawfile m "$T/k.mbox" '{mbox: $m, tree: "linux-6.1", suites: ["smoke"]}')"
is "$CODE" 202 "the patch is submitted against the kernel tree"
sub=$(jq -r .id <<<"$BODY")

start=$(date +%s)
"$BIN/locklab-agent" --server "$URL" --token "$AGENT_TOKEN" --workdir "$T/agent" \
  --lockbench "$BIN/lockbench" --kernel-cache "$kcache" --once \
  >"$T/agent.log" 2>&1
ok $? "the agent runs the kernel job ($(($(date +%s) - start)) s)" || diag "$(tail -n 30 "$T/agent.log")"
log=$(cat "$T/agent.log")
like "$log" "debug kernel base $dkey (built before: reusing it|built meanwhile)|building debug kernel base $dkey" \
  "the debug base is the machine's cache entry of its commit and fragments"
like "$log" "built kernel patched-debug in" "the patched debug kernel is built"
like "$log" "runs pipe-mutex: fs/pipe.c" "a pipe.c patch runs the pipe workload, saying why"
like "$log" "debug pass: booting the base and patched debug kernels .* under pipe-mutex" \
  "the debug pass boots under the pipe workload"
like "$log" "debug pass: patched-debug: splat found: WARNING: possible circular locking dependency detected" \
  "the agent says what the patched debug kernel printed"
like "$log" "no measuring round runs" "and that the job ends there"
is "$(grep -cE 'running (base|patched)$' "$T/agent.log")" 0 "no measuring round ran"
api GET "/api/v1/submissions/$sub"
is "$(jq -r .state <<<"$BODY")" done "the submission is done"
is "$(jq -r .verdict <<<"$BODY")" splat "its verdict is splat"
reply=$(curl -s "$URL/api/v1/submissions/$sub/reply")
like "$reply" "possible circular locking dependency" "the reply gives lockdep's words"
report=$(curl -s "$URL/api/v1/submissions/$sub/report?format=text")
like "$report" "possible circular locking dependency" "so does the report"
job="(SELECT id FROM jobs WHERE submission_id = $sub)"
is "$(sql "SELECT string_agg(variant, ',' ORDER BY variant) FROM results WHERE job_id = $job")" \
  "base-debug,patched-debug" "only the debug pass's documents are stored: no measuring round ran"
is "$(sql "SELECT count(*) FROM lockups")" 0 "no lockup is recorded (a splat is not a lockup)" ||
  diag "$(sql "SELECT variant || ' ' || workload || ' ' || lock || ' ' || params_key || ' ' || kind || ': ' || message FROM lockups")" \
    "$(grep 'lockup at' "$T/agent.log")"
pgrep -f "qemu-system-x86_64.*$T" >/dev/null; is $? 1 "no qemu is left behind"
done_testing
