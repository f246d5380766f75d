#!/usr/bin/env bash
# A kernel tree through the whole service: a tree of kind kernel registered on
# the server, a mailed patch to kernel/locking/mutex.c, and the agent building
# base and patched kernels (the base cached by commit), measuring and debug,
# booting the debug pair first (lockdep: a clean patch goes on), then both
# measuring kernels under qemu for locktorture and the guest lockbench,
# posting interleaved rounds.
# run-tests: group kernel (one base build and qemu guests whose lockup detectors want their CPUs)
. "$(dirname "$0")/lib/tap.sh"
. "$(dirname "$0")/lib/pg.sh"
. "$(dirname "$0")/lib/server.sh"
. "$(dirname "$0")/lib/agent.sh"

src=$("$TOP/scripts/kernel-source.sh" 2>"$T/src.err")
ok $? "the kernel source is cached" || { diag "$(cat "$T/src.err")"; done_testing; exit 1; }
# the base and debug base in the machine's cache: shared with the tree's own builds
kernel_cache_share "$src"
kcache=$KCACHE key=$KEY dkey=$DKEY
pg_start || exit 1
# the tree is the local cache of scripts/kernel-source.sh: a path, allowed by --allow-local-trees
server_start --min-rounds 1 --max-rounds 1 --allow-local-trees || exit 1
register_agent
api POST /api/v1/trees -H "Authorization: Bearer $ADMIN_TOKEN" -H 'Content-Type: application/json' \
  -d "$(jq -n --arg u "$src" '{name: "linux-6.1", url: $u, branch: "master", kind: "kernel"}')"
is "$CODE" 201 "a kernel tree is registered"

rm -rf "$T/k" && git clone -q --no-checkout "$src" "$T/k" && git -C "$T/k" checkout -q HEAD -- kernel/locking/mutex.c
sed -i 's|^ \* Mutexes: blocking mutual exclusion locks$| * Mutexes: blocking mutual exclusion locks (a comment-only change)|' "$T/k/kernel/locking/mutex.c"
git -C "$T/k" -c user.name=Dev -c user.email=dev@example.org commit -q -m "locking/mutex: reword the header" -- kernel/locking/mutex.c 2>/dev/null ||
  git -C "$T/k" -c user.name=Dev -c user.email=dev@example.org commit -q -am "locking/mutex: reword the header"
git -C "$T/k" format-patch -q --stdout -1 >"$T/k.mbox"
grep -q 'a comment-only change' "$T/k.mbox"; ok $? "the mutex.c patch is made"
api POST /api/v1/submissions -H 'Content-Type: application/json' \
  -d "$(jq -n --rawfile m "$T/k.mbox" '{mbox: $m, tree: "linux-6.1", suites: ["smoke"]}')"
is "$CODE" 202 "the patch is submitted against the kernel tree"
sub=$(jq -r .id <<<"$BODY")

# what the job says it does while the agent works, read as the dashboard reads it
(while :; do
  curl -s "$URL/api/v1/submissions/$sub" | jq -r '.jobs[0].activity // empty'
  sleep 1
done >"$T/activity" 2>/dev/null) &
poller=$!
at_exit "kill $poller 2>/dev/null"
"$BIN/locklab-agent" --server "$URL" --token "$AGENT_TOKEN" --workdir "$T/agent" \
  --lockbench "$BIN/lockbench" --kernel-cache "$kcache" --once \
  >"$T/agent.log" 2>&1
ok $? "the agent runs the kernel job" || diag "$(tail -n 30 "$T/agent.log")"
kill "$poller" 2>/dev/null
like "$(sort -u "$T/activity")" "building kernel patched on the base's objects: [0-9]+ objects compiled, [0-9]+ min [0-9]{2} s" \
  "while the patched kernel builds, the job says so, with the objects compiled" || diag "$(sort -u "$T/activity")"
log=$(cat "$T/agent.log")
like "$log" "built kernel patched in|kernel base [0-9a-f]+ built before" "base and patched kernels are built"
like "$log" "built kernel patched in" "the patched kernel is built (incrementally, from the base objects)"
like "$log" "kernel base $key (built before: reusing it|built meanwhile)|building kernel base $key into the machine's cache" \
  "the base is the machine's cache entry of its commit and fragment"
like "$log" "runs pipe-mutex: kernel/locking/mutex.c \\(struct mutex\\)" "a mutex.c patch runs the mutex workloads, saying why"
like "$log" "runs locktorture:ww_mutex_lock: kernel/locking/mutex.c" "and locktorture's other mutex type"
like "$log" "runs hot: the core every kernel job runs" "beside the core"
like "$log" "debug kernel base $dkey (built before: reusing it|built meanwhile)|building debug kernel base $dkey" \
  "the debug base is the machine's cache entry too"
like "$log" "built kernel patched-debug in" "the patched debug kernel is built"
like "$log" "debug pass: booting the base and patched debug kernels .* under pipe-mutex,epoll-ctl,seq-read" \
  "the debug pass boots under the kernel-mutex workloads"
like "$log" "debug pass clean: on to the measuring rounds" "a clean debug pass goes on to the rounds"
is "$(grep -c 'splat found' "$T/agent.log")" 0 "neither debug kernel printed a splat"
api GET "/api/v1/submissions/$sub"
is "$(jq -r .state <<<"$BODY")" done "the submission is done"
v=$(jq -r .verdict <<<"$BODY")
[[ $v != regression && $v != lockup ]]; ok $? "a comment-only mutex.c patch is no regression and no lockup (verdict: $v)"
report=$(curl -s "$URL/api/v1/submissions/$sub/report?format=text")
like "$report" "locktorture +mutex_lock .*writes_per_sec" "locktorture's mutex_lock writes/s are compared"
like "$report" "futex-wake +kernel .*wake_ms" "the guest lockbench's futex-wake is compared"
# one round (--max-rounds 1), two when round 0 found a change that round 1 had to confirm
is "$(sql "SELECT count(*) FROM results WHERE variant IN ('base', 'patched') AND job_id = (SELECT id FROM jobs WHERE submission_id = $sub)")" \
  "$(sql "SELECT 2 * rounds_wanted FROM jobs WHERE submission_id = $sub")" "each wanted round of base and patched is stored"
is "$(sql "SELECT string_agg(variant, ',' ORDER BY variant) FROM results WHERE round = 0 AND variant LIKE '%-debug' AND job_id = (SELECT id FROM jobs WHERE submission_id = $sub)")" \
  "base-debug,patched-debug" "beside the debug pass's two documents"
like "$(sql "SELECT rounds_wanted FROM jobs WHERE submission_id = $sub")" '^[12]$' "one round, or two with a confirmation"
is "$(sql "SELECT count(*) FROM lockups")" 0 "no lockup is recorded" ||
  diag "$(sql "SELECT variant || ' ' || workload || ' ' || lock || ' ' || params_key || ' ' || kind || ': ' || message FROM lockups")" \
    "$(grep 'lockup at' "$T/agent.log")"
# the accelerator is probed once for the agent's lifetime, then passed on
is "$(cat "$T"/agent/jobs/*/run-*.log | grep -c '^accel:')" "$(grep -c 'kernel runs use' "$T/agent.log")" \
  "the probe ran once, in the agent's first kernel run"
like "$log" "kernel runs use (kvm|tcg) from now on" "the agent keeps the accelerator that run settled on"

# qemu failing on this machine (a wrapper that aborts as qemu does when KVM
# refuses an MSR, under any accelerator): the job fails with qemu's words, and
# nothing is recorded against the patch (the measuring rounds' path: the
# operator's --kernel-debug off skips the debug pass).  The submission asks
# for the users suite (AIM7's bands, a boot each): the agent says what it may
# take before it starts, and runs that suite with its own limit.
real=$(command -v qemu-system-x86_64)
mkdir -p "$T/qbad"
cat >"$T/qbad/qemu-system-x86_64" <<'EOF2'
#!/bin/bash
echo "qemu-system-x86_64: error: failed to set MSR 0x10a to 0x69" >&2
echo "qemu-system-x86_64: kvm_buf_set_msrs: Assertion failed." >&2
kill -ABRT $$
EOF2
chmod +x "$T/qbad/qemu-system-x86_64"
api POST /api/v1/submissions -H 'Content-Type: application/json' \
  -d "$(jq -n --rawfile m "$T/k.mbox" '{mbox: $m, tree: "linux-6.1", suites: ["users"]}')"
is "$CODE" 202 "the same patch is submitted again, for the users suite"
sub2=$(jq -r .id <<<"$BODY")
PATH="$T/qbad:$PATH" "$BIN/locklab-agent" --server "$URL" --token "$AGENT_TOKEN" --workdir "$T/agent" \
  --lockbench "$BIN/lockbench" --kernel-cache "$kcache" --kernel-debug off --users-run-timeout 5400 --once \
  >"$T/agent2.log" 2>&1
unlike "$(cat "$T/agent2.log")" "debug pass|patched-debug" "--kernel-debug off: no debug pass"
like "$(cat "$T/agent2.log")" "the users suite: a boot per band of AIM7 users a side, its own workloads, each run up to 90 min \(--users-run-timeout\); 1 round of base and patched to go, at most 3 h 00 min" \
  "before it starts, the agent says what the users suite may take"
run=$(grep -m1 'round 0: running base: ' "$T/agent2.log")
like "$run" "lockbench kernel run --kernel .* --suite users .*--budget-s 5370" "and runs it, bounded by its own limit"
unlike "$run" "--workloads" "with the suite's own workloads"
api GET "/api/v1/submissions/$sub2"
is "$(jq -r .state <<<"$BODY")" failed "with qemu aborting, the submission fails"
reason=$(jq -r .reason <<<"$BODY")
like "$reason" "infrastructure, not a finding about the patch" "its reason says the machine failed, not the patch"
like "$reason" "failed to set MSR 0x10a" "and gives qemu's own words"
like "$(cat "$T/agent2.log")" "trying once more" "the agent tried the round once more"
is "$(jq -r '.verdict // "none"' <<<"$BODY")" none "there is no verdict"
is "$(sql "SELECT count(*) FROM lockups")" 0 "no lockup is recorded anywhere"
is "$(sql "SELECT count(*) FROM results WHERE job_id = (SELECT id FROM jobs WHERE submission_id = $sub2)")" 0 \
  "and no result of the failed job is stored"
done_testing
