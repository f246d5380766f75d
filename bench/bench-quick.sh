#!/usr/bin/env bash
# make bench-quick: what the quick suite costs and how steady the rows of a
# sleeping lock are on this machine.
#   1. the wall time of one round of the whole quick suite (every lock);
#   2. ROUNDS A/A rounds (the same binary on both sides, the order
#      alternating ABBA by round) of the quick suite's contended points of
#      the sleeping locks: hot (on 2 CPUs its 4 and 8 threads are the 2x and
#      4x oversubscription), oversub, long-hold and wake-latency;
#   3. per row, the A/A spread (bench-rows-spread.pl: sd of the paired
#      per-round differences) and what lockbench compare says of the A/A
#      (verdict, margin, headline), so a metric can be judged steady enough
#      to decide (headline) or not (descriptive).
# ROUNDS=8 LOCKS=... WORKLOADS=... LB=path/to/lockbench OUT=DIR may be overridden.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
LB=${LB:-"$top/${BUILD:-build}/lockbench"}
ROUNDS=${ROUNDS:-8}
LOCKS=${LOCKS:-pthread,pthread-adaptive,futex3,kmutex-2009,kmutex,parking}
WORKLOADS=${WORKLOADS:-hot,oversub,long-hold,wake-latency}
if [[ -n ${OUT:-} ]]; then tmp=$OUT; mkdir -p "$tmp"; else tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT; fi
. "$top/bench/bench-machine.sh"
bench_machine_header
t0=$(date +%s%N)
"$LB" run --suite quick --json "$tmp/all.json" --quiet || true
echo "quick suite, every lock, one round: $(awk -v a="$t0" -v b="$(date +%s%N)" 'BEGIN { printf "%.1f", (b - a) / 1e9 }') s"
for ((r = 0; r < ROUNDS; r++)); do
  if (((r % 4) == 0 || (r % 4) == 3)); then order="base patched"; else order="patched base"; fi
  for v in $order; do
    "$LB" run --suite quick --workloads "$WORKLOADS" --locks "$LOCKS" --no-instructions \
      --variant "$v" --round "$r" --json "$tmp/aa-$v-$r.json" --quiet || true
  done
done
bench_machine_header | sed "s/^/after: /"
echo "A/A spread, $ROUNDS rounds, workloads $WORKLOADS, locks $LOCKS:"
perl "$top/bench/bench-rows-spread.pl" "$tmp" "$ROUNDS" all aa
list() { local v=$1 out="" r; for ((r = 0; r < ROUNDS; r++)); do out+="$tmp/aa-$v-$r.json,"; done; echo "${out%,}"; }
echo "lockbench compare of the A/A (rows that decide: headline):"
"$LB" compare "$(list base)" "$(list patched)" --format json |
  perl -MJSON::PP -0777 -ne 'my $d = decode_json($_);
    printf "%-12s %-16s %-28s %-14s %-9s %-12s margin %4.1f%%  change %+6.2f%% [%+.2f, %+.2f]\n",
      $_->{workload}, $_->{lock}, $_->{params}, $_->{metric}, $_->{headline} ? "headline" : "descr",
      $_->{verdict}, 100 * $_->{margin}, 100 * $_->{change}, 100 * $_->{change_lo}, 100 * $_->{change_hi}
      for @{$d->{rows}};
    print "overall: $d->{overall}\n"'
