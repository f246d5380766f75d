#!/usr/bin/env bash
# make bench-load: the server under load on this machine, database on the
# same machine, everything on loopback.  AGENTS simulated agents (claim,
# heartbeat, post base and patched results of each round) and READERS
# dashboard readers (bench/loadgen.py), while IDLE connections that send
# nothing and SLOW slowloris clients (one header byte a second,
# tests/lib/slowclients.py) hold connections and fresh clients ask /healthz.
# Prints results per second, p50/p99 per endpoint, errors (goal 0) and the
# server's memory before and after (goal: flat within 10%).
#
# Memory, measured so that a leak shows and a working set does not pass for
# one: the server is warmed up with the same load in rounds of WARMUP
# seconds until it has reached its working set (its idle RSS rose less than
# STEADY% over the round before and its database connections, one per
# thread that used the database, stopped growing; at most WARMUPS rounds).
# Then PHASES load phases of DURATION seconds each.  Every idle figure is
# taken SETTLE seconds after the load stopped (the server gives free pages
# back with malloc_trim once a second, server/main.c).  "before" is after
# the warm-up, "after" after phase 1, and each further phase's figure and
# its own growth is printed: a leak grows in every phase, a working set
# does not.  The goal is missed when a phase ends more than 10% above
# "before", when every phase grew by more than STEADY%, or when the warm-up
# never levelled off.  Before each round and phase the queue is filled up to
# SUBS jobs, each submission a series of its own (the posting is part of
# the load), so every phase has the same work.
#   AGENTS=50 READERS=20 DURATION=30 PHASES=2 WARMUP=5 WARMUPS=6 STEADY=2
# Last, /healthz under an mbox flood: FLOOD clients post mboxes of
# FLOOD_MAILS empty mails (75,000: 3.6 MB) one after another for
# FLOOD_SECONDS while a fresh client asks /healthz every 50 ms
# (bench/mboxflood.py): its p50/p99 (goal p99 <= 200 ms).
#   SETTLE=3 SUBS=1200 IDLE=200 SLOW=50 FLOOD=18 FLOOD_MAILS=75000
#   FLOOD_SECONDS=20 may be overridden.
set -uo pipefail
AGENTS=${AGENTS:-50}
READERS=${READERS:-20}
DURATION=${DURATION:-30}
PHASES=${PHASES:-2}
SUBS=${SUBS:-1200}
WARMUP=${WARMUP:-5}
WARMUPS=${WARMUPS:-6}
STEADY=${STEADY:-2}
SETTLE=${SETTLE:-3}
IDLE=${IDLE:-200}
SLOW=${SLOW:-50}
FLOOD=${FLOOD:-18}
FLOOD_MAILS=${FLOOD_MAILS:-75000}
FLOOD_SECONDS=${FLOOD_SECONDS:-20}
source "$(dirname "$0")/../tests/lib/tap.sh"
source "$TOP/tests/lib/pg.sh"
source "$TOP/tests/lib/server.sh"
. "$TOP/bench/bench-machine.sh"

bench_machine_header
pg_start || exit 1
# every job wants 5 rounds, no more: the load is the same from run to run
server_start --min-rounds 5 --max-rounds 5 || exit 1
PORT=${URL##*:}
rss() { awk '/^VmRSS/ { print $2 }' "/proc/$SERVER_PID/status"; }

# idle NAME: after SETTLE seconds without load, one line "NAME RSS_KIB
# ANON_KIB THREADS DB_CONNECTIONS" into $T/idle (the server's database
# sessions: every client backend but this psql's)
idle() {
  sleep "$SETTLE"
  printf '%s %s %s %s %s\n' "$1" "$(rss)" \
    "$(awk '/^Anonymous/ { print $2 }' "/proc/$SERVER_PID/smaps_rollup")" \
    "$(awk '/^Threads/ { print $2 }' "/proc/$SERVER_PID/status")" \
    "$(sql "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()")" \
    >>"$T/idle"
}
field() { awk -v n="$1" -v f="$2" '$1 == n { print $f }' "$T/idle"; }

: >"$T/tokens"
for ((i = 0; i < AGENTS; i++)); do
  register_agent "{\"name\": \"load-$i\"}"
  [[ $AGENT_TOKEN =~ ^[0-9a-f]{64}$ ]] || { echo "bench-load: agent registration failed"; exit 1; }
  echo "$AGENT_TOKEN" >>"$T/tokens"
done
make_series "$T/s" >/dev/null || exit 1
mkdir -p "$T/req"
series=0
# fill_queue: post submissions until SUBS jobs are queued.  Each is a series
# of its own (its cover letter's title numbered), as a lab's submissions
# are: the same mbox posted again would be one more version of one series
# (whose page embeds the newest 20 versions since .../versions pages the
# rest; it listed them all, megabytes after a few thousand versions)
fill_queue() {
  local n
  n=$((SUBS - $(sql "SELECT count(*) FROM jobs WHERE state = 'queued'")))
  ((n > 0)) || return 0
  python3 - "$T/s/series.mbox" "$T/req" "$series" "$n" "$URL/api/v1/submissions" >"$T/sub.cfg" <<'PY'
import json, sys
mbox, out, first, n, url = open(sys.argv[1]).read(), sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
for i in range(first, first + n):
    f = "%s/%d.json" % (out, i)
    json.dump({"mbox": mbox.replace("*** SUBJECT HERE ***", "load series %d" % i)}, open(f, "w"))
    print('%surl = "%s"\ndata = "@%s"\nrequest = "POST"\noutput = "/dev/null"\nwrite-out = "%%{http_code}\\n"'
          % ("next\n" if i > first else "", url, f))
PY
  series=$((series + n))
  curl -sS -K "$T/sub.cfg" >>"$T/sub.codes"
  rm -f "$T"/req/*.json
}
: >"$T/sub.codes"
fill_queue
echo "setup: $AGENTS agents registered, $(grep -c '^202$' "$T/sub.codes") of $SUBS submissions queued ($(sql "SELECT count(*) FROM jobs WHERE state = 'queued'") jobs of 5 rounds)"
sql "SELECT id FROM submissions" >"$T/subs"
: >"$T/idle"
idle cold

# load NAME SECONDS SOURCE-NET: the queue filled, then SECONDS of agents and
# readers with idle and slowloris connections from SOURCE-NET.1-10 alongside;
# $T/NAME.json (loadgen), $T/NAME.flood.json, $T/NAME.rss (RSS every 5 s)
load() {
  local flood sampler
  fill_queue
  python3 "$TOP/tests/lib/slowclients.py" flood 127.0.0.1 "$PORT" "$IDLE" "$SLOW" \
    "$(printf "$3.%d," $(seq 1 10) | sed 's/,$//')" "$2" 10 >"$T/$1.flood.json" &
  flood=$!
  (while kill -0 "$flood" 2>/dev/null; do rss; sleep 5; done) >"$T/$1.rss" &
  sampler=$!
  python3 "$TOP/bench/loadgen.py" 127.0.0.1 "$PORT" "$T/tokens" "$T/subs" "$2" "$READERS" \
    >"$T/$1.json" || { echo "bench-load: the load generator failed"; exit 1; }
  wait "$flood" "$sampler"
}

# warm up until the working set is reached: pool threads open their database
# connections on first use, libmicrohttpd's per-connection pools and
# malloc's arenas reach their size
for ((w = 1; w <= WARMUPS; w++)); do
  load "warm$w" "$WARMUP" 127.0.4
  idle "warm$w"
  ((w > 1)) || continue
  a=$(field "warm$((w - 1))" 2) b=$(field "warm$w" 2)
  if awk -v a="$a" -v b="$b" -v s="$STEADY" 'BEGIN { exit !(b <= a * (1 + s / 100)) }' &&
    [[ $(field "warm$w" 5) == $(field "warm$((w - 1))" 5) ]]; then
    break
  fi
done
warmups=$((w > WARMUPS ? WARMUPS : w))
leveled=$((w <= WARMUPS))

for ((p = 1; p <= PHASES; p++)); do
  load "phase$p" "$DURATION" 127.0.3
  idle "phase$p"
done

for ((p = 1; p <= PHASES; p++)); do
  jq -r --arg p "$p" '"phase \($p): \(.agents) agents and \(.readers) dashboard readers for \(.seconds) s: \(.results_stored) results stored, \(.results_per_s) results/s"' "$T/phase$p.json"
  printf '  %-44s %8s %9s %9s\n' endpoint requests 'p50 ms' 'p99 ms'
  jq -r '.endpoints | to_entries[] | [.key, .value.n, .value.p50_ms, .value.p99_ms] | @tsv' "$T/phase$p.json" |
    while IFS=$'\t' read -r ep n p50 p99; do printf '  %-44s %8s %9s %9s\n' "$ep" "$n" "$p50" "$p99"; done
  echo "  errors: $(jq -c .errors "$T/phase$p.json") (goal {}); expected refusals (409 lease gone or round not wanted, 404): $(jq -c .expected "$T/phase$p.json"); sent again on a new connection after a closed keep-alive one: $(jq -c .retried "$T/phase$p.json")"
  jq -r '"  meanwhile \(.most_open) hostile connections open at most (idle and slowloris): slowloris cut with 408: \(.slow_408), closed: \(.slow_closed); idle closed: \(.idle_closed); fresh /healthz answered 200: \(.probes_200) of \(.probes)"' "$T/phase$p.flood.json"
  echo "  server RSS every 5 s (MiB): $(awk '{ printf "%.1f ", $1 / 1024 }' "$T/phase$p.rss")"
done
errors=$(for ((p = 1; p <= PHASES; p++)); do cat "$T/phase$p.json"; done | jq -s 'map(.errors | to_entries[] | .value) | add // 0')
echo "errors over all phases: $errors (goal 0); jobs at the end: $(sql "SELECT string_agg(state || ' ' || n, ', ') FROM (SELECT state, count(*) n FROM jobs GROUP BY state ORDER BY state) x")"
echo "load average now $(cut -d' ' -f1-3 /proc/loadavg)"
python3 "$TOP/bench/mboxflood.py" "$URL" "$FLOOD" "$FLOOD_MAILS" "$FLOOD_SECONDS" >"$T/mboxflood.json"
jq -r --arg n "$FLOOD" --arg m "$FLOOD_MAILS" '"/healthz under an mbox flood (\($n) clients posting mboxes of \($m) empty mails): p50 \(.p50_ms) ms, p99 \(.p99_ms) ms, max \(.max_ms) ms over \(.healthz) requests, \(.healthz_not_200) not 200 (goal p99 <= 200 ms); the posts by status: \(.posts | tostring)"' "$T/mboxflood.json"

echo "server memory, idle $SETTLE s after each load (RSS; anonymous part; threads; database connections):"
awk '{ printf "  %-8s %6.1f MiB  %6.1f MiB  %3d threads  %3d db\n", $1, $2 / 1024, $3 / 1024, $4, $5 }' "$T/idle"
if ((leveled)); then
  echo "warm-up: $warmups rounds of $WARMUP s until the idle RSS rose less than $STEADY% over the round before and the database connections stopped growing"
else
  echo "warm-up: did not level off in $WARMUPS rounds of $WARMUP s (RSS or database connections still growing)"
fi
# the samples taken while the load ran (each phase's first, at its start,
# left out), the first third against the last third
cat $(for ((p = 1; p <= PHASES; p++)); do echo "$T/phase$p.rss"; done) /dev/null |
  awk -v per="$(wc -l <"$T/phase1.rss")" '(NR - 1) % per { v[++n] = $1 } END { k = int(n / 3); if (k < 1) exit
  for (i = 1; i <= k; i++) a += v[i]; for (i = n - k + 1; i <= n; i++) b += v[i]
  printf "server RSS under load: %.1f MiB in the first third of the phases, %.1f MiB in the last (%+.1f%%, %d samples each)\n", a / k / 1024, b / k / 1024, 100 * (b - a) / a, k }'
# the goal: every phase ends within 10% of "before", and not every phase grew
awk -v phases="$PHASES" -v steady="$STEADY" -v leveled="$leveled" -v warm="warm$warmups" '
  { rss[$1] = $2 }
  END {
    before = rss[warm]
    printf "server RSS: %.1f MiB before (after the warm-up)", before / 1024
    worst = 0; grew = 0; prev = before
    for (p = 1; p <= phases; p++) {
      r = rss["phase" p]; d = 100 * (r - before) / before; g = 100 * (r - prev) / prev
      printf ", %.1f MiB after phase %d (%+.1f%% over before, %+.1f%% in the phase)", r / 1024, p, d, g
      if (d > worst || -d > worst) { worst = d < 0 ? -d : d; wp = p }
      if (g > steady) grew++
      prev = r
    }
    printf "\n"
    if (worst > 10)
      printf "memory goal (flat within 10%%): MISSED: after phase %d the RSS is %.1f%% off before\n", wp, worst
    else if (grew == phases && phases > 1)
      printf "memory goal (flat within 10%%): MISSED: the RSS grew by more than %s%% in every phase (a leak grows per phase)\n", steady
    else if (!leveled)
      printf "memory goal (flat within 10%%): MISSED: the warm-up did not level off, so before is not the working set\n"
    else
      printf "memory goal (flat within 10%%): met: at most %.1f%% off before over %d phases, and not every phase grew\n", worst, phases
  }' "$T/idle"
