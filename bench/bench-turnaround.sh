#!/usr/bin/env bash
# make bench-turnaround: submission -> verdict time of one-patch native series
# on the default (quick) suite, the way a list's patch meets the service: the
# real server (its default round limits), PostgreSQL, git and one agent
# polling the queue, each series submitted when the queue is empty (the goal:
# median <= 5 minutes).  SERIES (default "comment slow fence"), N times each
# (default 2):
#   comment  a comment added to kmutex.c (one image both sides: an A/A)
#   slow     a volatile loop of 2 in kmutex's lock() (30 -> 46 instructions)
#   fence    full fences on kmutex's lock and unlock
#   layout   a function nothing calls, added to kmutex.c: the code differs
#            (two images, so the tests judge it) but no timed path changes
#            (not in the default SERIES)
# Time runs from the POST to the submission's done (or failed) state: queue,
# fetch, apply, both builds, every round, comparison and reply.  The agent's
# scheduled A/A noise measurement (once a day) is off, as in the tests;
# LOCKLAB_NOISE_INTERVAL=86400 turns it on as an agent runs by default (the
# first job then measures it, and the server plans every job's rounds from it).
# KEEP_TIMES=FILE appends one line a series to FILE (kind, seconds, verdict,
# rounds a side, the UTC time it ended, the commit measured, the noise
# interval), so that runs on different days can be counted together: the
# goal asks for a median over N >= 50, some 3 hours of series on this VM.
# KEEP_REPLIES=DIR saves each series' reply mail (its table: every row's change
# and 95% interval) as DIR/KIND-I.txt, to see which row took the rounds.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
export BUILD=${BUILD:-build}
N=${N:-2}
SERIES=${SERIES:-comment slow fence}
for kind in $SERIES; do
  case $kind in comment | slow | fence | layout) ;; *)
    echo "bench-turnaround: SERIES is some of comment slow fence layout, not '$kind'" >&2
    exit 2
    ;;
  esac
done
. "$top/tests/lib/tap.sh"
. "$top/tests/lib/pg.sh"
. "$top/tests/lib/server.sh"
. "$top/tests/lib/agent.sh"
. "$top/bench/bench-machine.sh"
bench_machine_header
commit=$(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo unknown)

pg_start >/dev/null || { echo "bench-turnaround: PostgreSQL did not start" >&2; exit 1; }
server_start >/dev/null || { echo "bench-turnaround: the server did not start" >&2; exit 1; }
register_agent
tree_init
make_series comment "sed -i '1s|^|/* kmutex: a comment that changes nothing */\\n|' lockbench/locks/kmutex.c" >/dev/null
cat >"$T/slow.pl" <<'PL'
s/(static void kmutex_lock\(void \*p\)\n\{\n)/$1\tfor (volatile int slow = 0; slow < 2; slow++)\n\t\t;\n/;
PL
make_series slow "perl -0pi '$T/slow.pl' lockbench/locks/kmutex.c" >/dev/null
cat >"$T/fence.pl" <<'PL'
s/(static void kmutex_lock\(void \*p\)\n\{\n(?:.*\n){2})/$1\tatomic_thread_fence(memory_order_seq_cst);\n/;
s/(static void kmutex_unlock\(void \*p\)\n\{\n(?:.*\n){2})/$1\tatomic_thread_fence(memory_order_seq_cst);\n/;
PL
make_series fence "perl -0pi '$T/fence.pl' lockbench/locks/kmutex.c" >/dev/null
cat >"$T/layout.pl" <<'PL'
s/(static void kmutex_lock\(void \*p\)\n)/__attribute__((used, noinline)) static int kmutex_layout(int x)\n{\n\treturn x * 3 + 1;\n}\n\n$1/;
PL
make_series layout "perl -0pi '$T/layout.pl' lockbench/locks/kmutex.c" >/dev/null
agent_spawn a

[[ -n ${KEEP_REPLIES:-} ]] && mkdir -p "$KEEP_REPLIES"
: >"$T/times"
for ((i = 1; i <= N; i++)); do
  for kind in $SERIES; do
    t0=$(date +%s.%N)
    submit_mbox "$T/$kind.mbox" quick >/dev/null
    wait_state "$SUB" "done" failed 3600 >/dev/null
    t1=$(date +%s.%N)
    api GET "/api/v1/submissions/$SUB"
    secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
    v=$(jq -r '.verdict // .state' <<<"$BODY")
    r=$(jq -r '[.jobs[].rounds_complete] | add' <<<"$BODY")
    # the rows the plan (a noise profile) said this machine cannot resolve
    unres=$(jq -r '[.jobs[].plan.unresolvable // [] | .[]] | join("; ")' <<<"$BODY")
    tb=no
    reply=$(curl -s "$URL/api/v1/submissions/$SUB/reply")
    grep -q '^Tested-by: ' <<<"$reply" && tb=yes
    [[ -n ${KEEP_REPLIES:-} ]] && printf '%s\n' "$reply" >"$KEEP_REPLIES/$kind-$i.txt"
    v_tb=$v
    [[ $tb == yes ]] && v_tb="$v+Tested-by"
    echo "$kind $secs $v_tb $r" >>"$T/times"
    [[ -n ${KEEP_TIMES:-} ]] && echo "$kind $secs $v_tb $r $(date -u +%FT%TZ) $commit noise=${LOCKLAB_NOISE_INTERVAL:-0}" >>"$KEEP_TIMES"
    printf '  %s %d/%d: %s after %s rounds, %s s, Tested-by %s (load %s)%s\n' "$kind" "$i" "$N" "$v" "$r" \
      "$secs" "$tb" "$(cut -d' ' -f1 /proc/loadavg)" "${unres:+; plan: $unres}" >&2
  done
done

# the median of the numbers on stdin (the mean of the two middle ones for an
# even count)
median() { sort -g | awk '{ a[NR] = $1 } END { print NR ? (a[int((NR + 1) / 2)] + a[int(NR / 2) + 1]) / 2 : 0 }'; }
# summary WHAT FILE: the median of FILE's times against the goal, and its verdicts
summary() {
  local m n
  m=$(cut -d' ' -f2 "$2" | median)
  n=$(wc -l <"$2")
  awk -v m="$m" -v n="$n" -v w="$1" 'BEGIN { printf "median submission -> verdict over %s %d: %.1f s (goal <= 300 s at N >= 50: %s)\n",
    w, n, m, n < 50 ? "N too small" : m <= 300 ? "met" : "MISSED" }'
  printf 'verdicts: %s\n' "$(cut -d' ' -f3 "$2" | sort | uniq -c | awk '{ print $1 "x " $2 }' | paste -sd, -)"
}
echo
printf '%-8s %3s %9s %9s %9s  %s\n' series n median min max verdicts
for kind in $SERIES; do
  grep "^$kind " "$T/times" >"$T/k"
  printf '%-8s %3d %8ss %8ss %8ss  %s\n' "$kind" "$(wc -l <"$T/k")" "$(cut -d' ' -f2 "$T/k" | median)" \
    "$(cut -d' ' -f2 "$T/k" | sort -g | head -1)" "$(cut -d' ' -f2 "$T/k" | sort -g | tail -1)" \
    "$(awk '{ print $3 " (" $4 " rounds)" }' "$T/k" | sort | uniq -c | awk '{ $1 = $1 "x"; print }' | paste -sd, -)"
done
summary "this run's" "$T/times"
# every series kept so far with this noise setting (several runs')
if [[ -n ${KEEP_TIMES:-} && -s $KEEP_TIMES ]]; then
  grep " noise=${LOCKLAB_NOISE_INTERVAL:-0}\$" "$KEEP_TIMES" >"$T/kept"
  summary "every series kept in $KEEP_TIMES with this noise setting," "$T/kept"
fi
