#!/usr/bin/env bash
# make bench-load: the server under load on this machine, database on the
# same machine, everything on loopback.  AGENTS simulated agents (claim,
# heartbeat, post base and patched results of each round) and READERS
# dashboard readers for DURATION seconds (scripts/loadgen.py), while IDLE connections
# that send nothing and SLOW slowloris clients (one header byte a second,
# tests/lib/slowclients.py) hold connections and fresh clients ask /healthz.
# Prints results per second, p50/p99 per endpoint, errors (goal 0) and the
# server's RSS before and after (goal: within 10%).
# The RSS "before" is taken after WARMUP seconds of the same load, hostile
# connections included (its cold figure is printed too).
#   AGENTS=50 READERS=20 DURATION=30 WARMUP=5 SUBS=1200 IDLE=200 SLOW=50 may be overridden.
set -uo pipefail
AGENTS=${AGENTS:-50}
READERS=${READERS:-20}
DURATION=${DURATION:-30}
SUBS=${SUBS:-1200}
WARMUP=${WARMUP:-5}
IDLE=${IDLE:-200}
SLOW=${SLOW:-50}
source "$(dirname "$0")/../tests/lib/tap.sh"
source "$TOP/tests/lib/pg.sh"
source "$TOP/tests/lib/server.sh"

printf 'machine: %s, %s CPUs, %s, kernel %s\n' "$(hostname)" "$(nproc)" \
  "$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)" "$(uname -r)"
pg_start || exit 1
# every job wants 5 rounds, no more: the load is the same from run to run
server_start --min-rounds 5 --max-rounds 5 || exit 1
rss() { awk '/^VmRSS/ { print $2 }' "/proc/$SERVER_PID/status"; }

: >"$T/tokens"
for ((i = 0; i < AGENTS; i++)); do
  register_agent "{\"name\": \"load-$i\"}"
  [[ $AGENT_TOKEN =~ ^[0-9a-f]{64}$ ]] || { echo "bench-load: agent registration failed"; exit 1; }
  echo "$AGENT_TOKEN" >>"$T/tokens"
done
make_series "$T/s" >/dev/null || exit 1
jq -Rs '{mbox: .}' "$T/s/series.mbox" >"$T/req.json"
for ((i = 0; i < SUBS; i++)); do
  printf 'url = "%s/api/v1/submissions"\ndata = "@%s"\nrequest = "POST"\noutput = "/dev/null"\nwrite-out = "%%{http_code}\\n"\nnext\n' "$URL" "$T/req.json"
done | sed '$ d' >"$T/sub.cfg"
curl -sS -K "$T/sub.cfg" >"$T/sub.codes"
echo "setup: $AGENTS agents registered, $(grep -c '^202$' "$T/sub.codes") of $SUBS submissions queued ($(sql "SELECT count(*) FROM jobs WHERE state = 'queued'") jobs of 5 rounds)"
sql "SELECT id FROM submissions" >"$T/subs"

rsscold=$(rss)
# warm up with the same load, hostile connections included: the pool's threads
# open their database connections, libmicrohttpd's per-connection pools and
# malloc's arenas reach their size
python3 "$TOP/tests/lib/slowclients.py" flood 127.0.0.1 "${URL##*:}" "$IDLE" "$SLOW" \
  "$(printf '127.0.4.%d,' $(seq 1 10) | sed 's/,$//')" "$WARMUP" 2 >/dev/null &
warmflood=$!
python3 "$TOP/scripts/loadgen.py" 127.0.0.1 "${URL##*:}" "$T/tokens" "$T/subs" "$WARMUP" "$READERS" \
  >"$T/warm.json" || { echo "bench-load: the load generator failed"; exit 1; }
wait "$warmflood"
rss0=$(rss)
sources=$(printf '127.0.3.%d,' $(seq 1 10))
python3 "$TOP/tests/lib/slowclients.py" flood 127.0.0.1 "${URL##*:}" "$IDLE" "$SLOW" "${sources%,}" \
  "$DURATION" 10 >"$T/flood.json" &
flood=$!
# the server's RSS every 5 s of the run: a leak climbs, a warmed-up server stays level
(while kill -0 "$flood" 2>/dev/null; do rss; sleep 5; done) >"$T/rss.trace" &
python3 "$TOP/scripts/loadgen.py" 127.0.0.1 "${URL##*:}" "$T/tokens" "$T/subs" "$DURATION" "$READERS" \
  >"$T/load.json" || { echo "bench-load: the load generator failed"; exit 1; }
wait "$flood"
rss1=$(rss)

jq -r '"load: \(.agents) agents and \(.readers) dashboard readers for \(.seconds) s: \(.results_stored) results stored, \(.results_per_s) results/s"' "$T/load.json"
printf '  %-44s %8s %9s %9s\n' endpoint requests 'p50 ms' 'p99 ms'
jq -r '.endpoints | to_entries[] | [.key, .value.n, .value.p50_ms, .value.p99_ms] | @tsv' "$T/load.json" |
  while IFS=$'\t' read -r ep n p50 p99; do printf '  %-44s %8s %9s %9s\n' "$ep" "$n" "$p50" "$p99"; done
echo "errors: $(jq -c .errors "$T/load.json") (goal {}); expected refusals (409 lease gone or round not wanted, 404): $(jq -c .expected "$T/load.json"); sent again on a new connection after a closed keep-alive one: $(jq -c .retried "$T/load.json")"
jq -r '"meanwhile \(.most_open) hostile connections open at most (idle and slowloris): slowloris cut with 408: \(.slow_408), closed: \(.slow_closed); idle closed: \(.idle_closed); fresh /healthz answered 200: \(.probes_200) of \(.probes)"' "$T/flood.json"
echo "warm-up: $(jq -r .results_stored "$T/warm.json") results in $WARMUP s before the run; jobs at the end: $(sql "SELECT string_agg(state || ' ' || n, ', ') FROM (SELECT state, count(*) n FROM jobs GROUP BY state ORDER BY state) x")"
echo "server RSS every 5 s of the run (MiB): $(awk '{ printf "%.1f ", $1 / 1024 }' "$T/rss.trace")"
awk -v c="$rsscold" -v a="$rss0" -v b="$rss1" 'BEGIN { printf "server RSS: %.1f MiB cold, %.1f MiB after the warm-up, %.1f MiB after the run (%+.1f%% over the run; goal within 10%%)\n", c / 1024, a / 1024, b / 1024, 100 * (b - a) / a }'
# the same under load: the samples taken while the load ran (the first, at its
# start, left out), first third against last third.  With malloc_trim giving
# free pages back (server/main.c) the idle figures above are what is live at
# rest, the loaded ones what the load holds; a leak climbs in both
awk '{ v[++n] = $1 } END { k = int((n - 1) / 3); if (k < 1) exit
  for (i = 2; i < 2 + k; i++) a += v[i]; for (i = n - k + 1; i <= n; i++) b += v[i]
  printf "server RSS under load: %.1f MiB in the first third of the run, %.1f MiB in the last (%+.1f%%, %d samples each)\n", a / k / 1024, b / k / 1024, 100 * (b - a) / a, k }' "$T/rss.trace"
