#!/usr/bin/env bash
# make bench-track-kernel: a tracked kernel tree through the real server,
# PostgreSQL and an agent: one push of COMMITS commits (3 by default) to
# kernel/locking/mutex.c whose STEP-th (1 by default) never wakes the
# waiter __mutex_unlock_slowpath picked (tests/kernel-patches/
# lost-wakeup-mutex.patch; the others are comments).  The head run is a
# kernel job whose debug pass ends `lockup`; the alert of that fault opens
# at once and bisection names the commit.  Printed: the head run's verdict,
# the alert (metric, found_by, the commit it names against the one wanted),
# its steps, and the seconds from the tree's registration (the push is
# already on its branch) to the alert and to the named commit.
#
# The tree is a clone of the Debian 6.1 source (scripts/kernel-source.sh)
# registered by path (--allow-local-trees) with `since` the commit the push
# starts from, so the head run's base is the machine's cached base kernels (built first when
# missing, that time printed apart).  Each bisection step is an A/B against
# the range's known-good end: with the step at 1 every base is that cached
# commit; a step further in makes the later steps build their good end's
# base kernels cold (minutes each under this machine's compiler).
set -uo pipefail
. "$(dirname "$0")/../tests/lib/tap.sh"
. "$TOP/tests/lib/pg.sh"
. "$TOP/tests/lib/server.sh"
. "$TOP/tests/lib/agent.sh"
. "$TOP/bench/bench-machine.sh"
COMMITS=${COMMITS:-3}
STEP=${STEP:-1}
((STEP >= 1 && STEP <= COMMITS)) || { echo "STEP is 1..COMMITS, not '$STEP'"; exit 2; }

bench_machine_header
echo "commit: $(git -C "$TOP" rev-parse --short HEAD); push of $COMMITS commits, the lost wakeup at $STEP"
src=$("$TOP/scripts/kernel-source.sh" 2>"$T/src.err") || { cat "$T/src.err"; exit 1; }
kernel_bases_build "$src" || exit 1
kernel_cache_share "$src"

# the tracked tree: a clone sharing the source's objects, on its own branch
tree=$T/linux
git clone -q --shared "$src" "$tree" || { echo "cannot clone $src"; exit 1; }
git -C "$tree" checkout -q -b tracked
since=$(git -C "$tree" rev-parse HEAD)
# the push, on the branch before the tree is registered with `since` the commit before it
# (a tracker polling mid-push would make two head runs, the second on a base not cached)
declare -a C
for ((i = 1; i <= COMMITS; i++)); do
  if ((i == STEP)); then
    (cd "$tree" && git apply) <"$TOP/tests/kernel-patches/lost-wakeup-mutex.patch" ||
      { echo "the lost-wakeup patch does not apply"; exit 1; }
    msg="locking/mutex: skip the wakeup"
  else
    sed -i "1s|^|/* locklab: tracked comment $i */\\n|" "$tree/kernel/locking/mutex.c"
    msg="locking/mutex: comment $i"
  fi
  git -C "$tree" -c user.name=Dev -c user.email=dev@example.org commit -qam "$msg"
  C[i]=$(git -C "$tree" rev-parse HEAD)
done
pg_start >/dev/null || exit 1
server_start --allow-local-trees --track-interval 3600 --track-dir "$T/track" --track-samples 0 \
  --min-rounds 1 --max-rounds 1 >/dev/null || exit 1
register_agent
pushed=$(date +%s)
api POST /api/v1/trees -H "Authorization: Bearer $ADMIN_TOKEN" -H 'Content-Type: application/json' \
  -d "$(jq -n --arg u "$tree" --arg s "$since" \
    '{name: "linux-6.1", url: $u, branch: "tracked", kind: "kernel", track: true, since: $s, suites: ["smoke"]}')"
[[ $CODE == 201 ]] || { echo "the kernel tree is not registered: $CODE $BODY"; exit 1; }

"$BIN/locklab-agent" --server "$URL" --token "$AGENT_TOKEN" --workdir "$T/agent" --lockbench "$BIN/lockbench" \
  --kernel-cache "$KCACHE" --allow-local-trees --lockstep off --noise-interval 0 >"$T/agent.log" 2>&1 &
agent=$!
opened="" named="" alert=""
while :; do
  now=$(date +%s)
  if [[ -z $opened ]]; then
    alert=$(psql -qAt -c "SELECT id FROM alerts ORDER BY id LIMIT 1")
    [[ -n $alert ]] && opened=$((now - pushed))
  fi
  state=$(psql -qAt -c "SELECT state FROM alerts WHERE id = ${alert:-0}")
  [[ $state == bisected ]] && { named=$((now - pushed)); break; }
  ((now - pushed > ${TIMEOUT_S:-5400})) && break
  kill -0 "$agent" 2>/dev/null || { echo "the agent stopped:"; tail -n 5 "$T/agent.log"; break; }
  sleep 5
done
kill "$agent" 2>/dev/null; wait "$agent" 2>/dev/null

psql -qAt -F ' ' -c "SELECT r.purpose, left(r.base_commit, 12) || '..' || left(r.commit, 12), s.verdict, s.state
                     FROM track_runs r JOIN submissions s ON s.id = r.submission_id ORDER BY r.id" |
  sed 's/^/run: /'
api GET /api/v1/alerts
a=$(jq -c '.alerts[0] // {}' <<<"$BODY")
want=${C[STEP]}
got=$(jq -r '.commit // ""' <<<"$a")
echo "alert: $(jq -r '[.metric, .found_by, .workload, .lock, .params] | join(" ")' <<<"$a")"
echo "  its finding: $(jq -r '[.events[] | select(.state == "new") | .note][0] // "-"' <<<"$a" | cut -c1-150)"
echo "  steps: $(jq -r '[.steps[] | "\(.commit[0:12]) \(.verdict)"] | join(", ")' <<<"$a")"
echo "  names ${got:0:12} ($([[ -n $got && $got == "$want" ]] && echo "the commit wanted" || echo "WANTED ${want:0:12}"))"
echo "registered -> alert opened: ${opened:-none} s; registered -> commit named: ${named:-none} s"
echo "load average now $(cut -d' ' -f1-3 /proc/loadavg)"
