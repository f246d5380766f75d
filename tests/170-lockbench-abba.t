#!/usr/bin/env bash
# ABBA runs: two `lockbench run --abba-side 0|1` started with one --start-at
# take turns per single-thread sample, A B B A, each sample in its own slot
# (its duration + 20 ms) counted from that instant.  The agent's --abba on
# runs base and patched this way; their documents pair as any round's do.
. "$(dirname "$0")/lib/tap.sh"
LB="$BIN/lockbench"

at=$(($(date +%s%N) + 500000000))
args=(run --workloads uncontended --locks pthread,kmutex --repeat 2 --duration-ms 30 --no-instructions
  --disturb-limit 0 --quiet --start-at "$at")
"$LB" "${args[@]}" --abba-side 0 --variant base --json "$T/a.json" 2>"$T/a.err" &
a=$!
"$LB" "${args[@]}" --abba-side 1 --variant patched --json "$T/b.json" 2>"$T/b.err"
rb=$?
wait $a
ra=$?
is "$ra $rb" "0 0" "both sides ran"
# "lockbench: abba side S, uncontended LOCK: slot K at +X s ..." on stderr
slots() { grep -o 'slot [0-9]* ' "$1" | awk '{ printf "%s ", $2 }'; }
is "$(slots "$T/a.err")" "0 3 4 7 " "side 0 takes slots 0 3 4 7: pthread's two samples, then kmutex's"
is "$(slots "$T/b.err")" "1 2 5 6 " "side 1 takes 1 2 5 6: A B B A A B B A"
like "$(cat "$T/a.err")" '^lockbench: abba side 0, uncontended pthread: slot 0 at \+0\.[0-9]{3} s slot 3 at ' \
  "each side says which slot each sample took and when it started"
# a slot is 30 + 20 ms: no sample may start before its slot's instant
early=$(cat "$T/a.err" "$T/b.err" | grep -o 'slot [0-9]* at [+-][0-9.]* s' |
  awk '{ if ($4 + 0.0005 < $2 * 0.050) print "slot " $2 " at " $4 }')
is "$early" "" "no sample started before its slot"
rows() { "$TOP/scripts/lbjson.pl" "$1" | cut -f1-4,6; }
is "$(rows "$T/a.json")" "$(rows "$T/b.json")" "the two documents have the same rows"
like "$(rows "$T/a.json")" $'^uncontended\tkmutex\tduration_ms=30,threads=1\tns_per_pair\t2' \
  "two samples a lock a side"
out=$("$LB" compare "$T/a.json" "$T/b.json" --format json)
is "$(jq -r '[.rows[] | select(.workload == "uncontended") | .lock] | sort | join(",")' <<<"$out")" "kmutex,pthread" \
  "compare pairs them like any base and patched"
out=$("$LB" run --workloads uncontended --abba-side 1 2>&1)
is $? 2 "--abba-side without --start-at is a usage error"
like "$out" 'needs --start-at' "saying why"
out=$("$LB" run --workloads uncontended --abba-side 2 --start-at "$at" 2>&1)
is $? 2 "a side other than 0 or 1 is refused"
done_testing
