#!/usr/bin/env bash
# Lockstep runs: two `lockbench run --lockstep FILE --lockstep-side 0|1` take
# turns of 0.5 ms on one CPU for their single-thread samples, passing the
# turn through FILE; each side times only its own turns.  The agent runs
# base and patched this way by default; their documents pair as any round's
# do, and every wait on the other side is bounded.
. "$(dirname "$0")/lib/tap.sh"
LB="$BIN/lockbench"
cpu=$(($(nproc) - 1))

args=(run --workloads uncontended --locks pthread,kmutex --repeat 2 --duration-ms 30 --no-instructions
  --cpus "$cpu" --lockstep "$T/turn")
"$LB" "${args[@]}" --lockstep-side 0 --variant base --json "$T/a.json" >"$T/a.out" 2>"$T/a.err" &
a=$!
"$LB" "${args[@]}" --lockstep-side 1 --variant patched --json "$T/b.json" >"$T/b.out" 2>"$T/b.err"
rb=$?
wait $a
ra=$?
is "$ra $rb" "0 0" "both sides ran"
# 2 locks x 2 samples x 30 ms in turns of 0.5 ms: 240 turns a side, the last side's last alone at most
like "$(cat "$T/a.out")" 'lockstep side 0: 240 turns, 0 of them alone' "side 0 took 240 turns of 0.5 ms, each after the other side's"
like "$(cat "$T/b.out")" 'lockstep side 1: 240 turns, 0 of them alone' "and so did side 1"
inst() { jq -c '[.runs[] | select(.workload == "uncontended") | .instrument.ns_per_pair] | unique' "$1"; }
is "$(inst "$T/a.json")" '["lockstep"]' "every uncontended sample of side 0 says instrument lockstep"
is "$(inst "$T/b.json")" '["lockstep"]' "and of side 1"
rows() { "$TOP/scripts/lbjson.pl" "$1" | cut -f1-4,6; }
is "$(rows "$T/a.json")" "$(rows "$T/b.json")" "the two documents have the same rows"
out=$("$LB" compare "$T/a.json" "$T/b.json" --format json)
is "$(jq -r '[.rows[] | select(.workload == "uncontended") | .lock] | sort | join(",")' <<<"$out")" "kmutex,pthread" \
  "compare pairs them like any base and patched"
is "$(jq -c '[.rows[] | select(.workload == "uncontended") | .instrument] | unique' <<<"$out")" '["lockstep"]' \
  "and names the rows' instrument lockstep"
like "$("$LB" compare "$T/a.json" "$T/b.json")" 'lockstep: 2 row\(s\) measured base and patched in turns of 0.5 ms on one CPU' \
  "the report's legend says which rows ran in lockstep"

# a side whose partner is done runs its remaining turns alone
rm -f "$T/turn"
"$LB" "${args[@]}" --lockstep-side 0 --json "$T/c.json" >"$T/c.out" 2>&1 &
a=$!
"$LB" run --workloads uncontended --locks pthread --repeat 1 --duration-ms 30 --no-instructions --cpus "$cpu" \
  --lockstep "$T/turn" --lockstep-side 1 --json "$T/d.json" >"$T/d.out" 2>&1
rb=$?
wait $a
ra=$?
is "$ra $rb" "0 0" "a side with more samples than the other still finishes"
like "$(cat "$T/c.out")" 'lockstep side 0: 240 turns, (1[0-9]{2}|9[0-9]) of them alone' "and says how many turns it ran alone"

# bounded waits: a partner that never comes, or a turn file with garbage in it
rm -f "$T/turn"
out=$("$LB" "${args[@]}" --lockstep-side 0 --json "$T/e.json" 2>&1)
is $? 1 "a side whose partner never passes the turn fails"
like "$out" 'lockstep: the other side did not pass the turn within 5000 ms' "saying why"
ok "$([[ ! -s $T/e.json ]]; echo $?)" "and writes no document"
printf '\377\377\377\377\377\377\377\377\377\377\377\377' >"$T/turn"
out=$("$LB" "${args[@]}" --lockstep-side 1 --json "$T/f.json" 2>&1)
is $? 0 "a turn file holding neither side's number (the other side is untrusted) is no turn to wait for"
like "$out" 'lockstep side 1: 240 turns, 240 of them alone' "the side runs every turn alone"
is "$(jq -c '[.runs[] | .instrument // empty] | length' "$T/f.json")" 0 \
  "and does not call its samples lockstep: they are timed alone"

# bad input
out=$("$LB" run --workloads uncontended --lockstep "$T/turn" 2>&1)
is $? 2 "--lockstep without --lockstep-side is a usage error"
like "$out" '--lockstep and --lockstep-side go together' "saying why"
out=$("$LB" run --workloads uncontended --lockstep "$T/turn" --lockstep-side 2 2>&1)
is $? 2 "a side other than 0 or 1 is refused"
out=$("$LB" run --workloads uncontended --lockstep "$T/turn" --lockstep-side 0 --abba-side 0 --start-at $(($(date +%s%N) + 100000000)) 2>&1)
is $? 2 "lockstep and ABBA together are refused"
like "$out" 'two ways to pair' "saying why"
out=$("$LB" run --workloads uncontended --no-instructions --lockstep "$T/no/such/dir/turn" --lockstep-side 0 2>&1)
is $? 1 "a turn file that cannot be created is an error"
like "$out" "--lockstep $T/no/such/dir/turn: No such file or directory" "naming the file"
done_testing
