#!/usr/bin/env bash
# Lockstep runs: two `lockbench run --lockstep FILE --lockstep-side 0|1` take
# turns of 0.5 ms on one CPU for their single-thread samples, passing the
# turn through FILE; each side times only its own turns.  The agent runs
# base and patched this way by default; their documents pair as any round's
# do, and every wait on the other side is bounded.
. "$(dirname "$0")/lib/tap.sh"
LB="$BIN/lockbench"
cpu=$(($(nproc) - 1))

# pair A B ARGS...: sides 0 (base, $T/A.json) and 1 (patched, $T/B.json) of ARGS at
# once, each under the command in the array run_on (none by default); their exit codes
# in ra and rb
run_on=()
pair() {
  local a=$1 b=$2 pid
  shift 2
  "${run_on[@]}" "$LB" "$@" --lockstep-side 0 --variant base --json "$T/$a.json" >"$T/$a.out" 2>"$T/$a.err" &
  pid=$!
  "${run_on[@]}" "$LB" "$@" --lockstep-side 1 --variant patched --json "$T/$b.json" >"$T/$b.out" 2>"$T/$b.err"
  rb=$?
  wait $pid
  ra=$?
}
args=(run --workloads uncontended --locks pthread,kmutex --repeat 2 --duration-ms 30 --no-instructions
  --cpus "$cpu" --lockstep "$T/turn")
# took A B TURNS WHAT: both sides of a pair took TURNS turns, none alone
took() {
  like "$(cat "$T/$1.out")" "lockstep side 0: $3 turns, 0 of them alone" "$4: side 0 took $3 turns, each after the other side's"
  like "$(cat "$T/$2.out")" "lockstep side 1: $3 turns, 0 of them alone" "and so did side 1"
}
# inst_is A B JQ EXPECTED WHAT: JQ of both documents' runs is EXPECTED
inst_is() {
  is "$(jq -c "[.runs[] | $3] | unique" "$T/$1.json")" "$4" "$5: side 0"
  is "$(jq -c "[.runs[] | $3] | unique" "$T/$2.json")" "$4" "and side 1"
}
pair a b "${args[@]}"
is "$ra $rb" "0 0" "both sides ran"
# 2 locks x 2 samples x 30 ms in turns of 0.5 ms: 240 turns a side, the last side's last alone at most
took a b 240 "turns of 0.5 ms"
inst_is a b '.instrument.ns_per_pair' '["lockstep"]' "every uncontended sample says instrument lockstep"
rows() { "$TOP/scripts/lbjson.pl" "$1" | cut -f1-4,6; }
is "$(rows "$T/a.json")" "$(rows "$T/b.json")" "the two documents have the same rows"
out=$("$LB" compare "$T/a.json" "$T/b.json" --format json)
is "$(jq -r '[.rows[] | select(.workload == "uncontended") | .lock] | sort | join(",")' <<<"$out")" "kmutex,pthread" \
  "compare pairs them like any base and patched"
is "$(jq -c '[.rows[] | select(.workload == "uncontended") | .instrument] | unique' <<<"$out")" '["lockstep"]' \
  "and names the rows' instrument lockstep"
like "$("$LB" compare "$T/a.json" "$T/b.json")" 'lockstep: 2 row\(s\) measured base and patched in turns of 0.5 ms on one CPU \(1 ms on every CPU for hot; past 2 threads a CPU, 1 ms a thread per CPU, at most 8\)' \
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
# garbage TURNFILE NAME SIDE TURNS WHAT ARGS...: a turn file holding neither side's number
garbage() {
  local turn=$1 name=$2 side=$3 turns=$4 what=$5 out
  shift 5
  printf '\377\377\377\377\377\377\377\377\377\377\377\377' >"$turn"
  out=$("$LB" "$@" --lockstep-side "$side" --json "$T/$name.json" 2>&1)
  is $? 0 "$what: a turn file holding neither side's number (the other side is untrusted) is no turn to wait for"
  like "$out" "lockstep side $side: $turns turns, $turns of them alone" "the side runs every turn alone"
  is "$(jq -c '[.runs[] | .instrument // empty] | length' "$T/$name.json")" 0 \
    "and does not call its samples lockstep: they are timed alone"
}
garbage "$T/turn" f 1 240 uncontended "${args[@]}"

# hot in lockstep: the sides' threads take turns of 1 ms on every CPU (--cpus pins only the
# single-thread points), each side timing its own turns; a sample is the median slice's ops/s
hargs=(run --workloads hot --threads 2,4 --locks pthread --repeat 2 --duration-ms 30 --no-instructions
  --cpus "$cpu" --lockstep "$T/hturn")
pair ha hb "${hargs[@]}"
is "$ra $rb" "0 0" "hot: both sides ran"
# 2 points x 2 samples x 30 ms in turns of 1 ms: 120 turns a side
took ha hb 120 "hot, turns of 1 ms"
inst_is ha hb '.instrument | [.ops_per_sec, .fairness, .cov]' '[["lockstep","lockstep","lockstep"]]' \
  "every hot run says instrument lockstep for ops/s, fairness and cov"
is "$(jq -c '[.runs[] | .metrics.ops_per_sec > 0 and (.per_thread.ops_per_sec // [1] | length) == .params.threads]' "$T/ha.json" 2>/dev/null)" '[true,true]' \
  "each hot run has its ops/s and a figure per thread"
no_lockup() { jq -r '[.runs[] | .lockup // empty] | length' "$1"; }
is "$(no_lockup "$T/ha.json") $(no_lockup "$T/hb.json")" "0 0" "the lock's exclusion check passed on both sides"
out=$("$LB" compare "$T/ha.json" "$T/hb.json" --format json)
is "$(jq -r '[.rows[] | select(.workload == "hot" and .metric == "ops_per_sec")] | length' <<<"$out")" 2 \
  "compare pairs the hot rows like any base and patched"
# a garbage turn file: no turn to wait for, every turn alone, no lockstep instrument
garbage "$T/hturn" hf 0 120 hot "${hargs[@]}"
# more threads than twice the CPUs (one CPU here, taskset): parking them takes time slices,
# so a turn is 1 ms a thread per CPU (4 threads on 1 CPU: 4 ms), fewer turns a sample
rm -f "$T/hturn"
oargs=(run --workloads hot --threads 2,4 --locks pthread --repeat 2 --duration-ms 40 --no-instructions
  --lockstep "$T/hturn")
run_on=(taskset -c "$cpu")
pair oa ob "${oargs[@]}"
run_on=()
is "$ra $rb" "0 0" "hot on one CPU: both sides ran"
# 2 threads: 2 samples x 40 turns of 1 ms; 4 threads: 2 samples x 10 turns of 4 ms
took oa ob 100 "hot, 2 threads on one CPU in turns of 1 ms, 4 in turns of 4 ms"
# a partner that never comes: bounded
rm -f "$T/hturn"
out=$("$LB" run --workloads hot --threads 2 --locks pthread --repeat 1 --duration-ms 30 --no-instructions \
  --lockstep "$T/hturn" --lockstep-side 1 --json "$T/hg.json" 2>&1)
is $? 1 "hot: a side whose partner never passes the turn fails"
like "$out" 'lockstep: the other side did not pass the turn within 5000 ms' "saying why"
# workers that never stop (a lock that loses a wake-up hangs them in lock()): the side's
# coordinator gives up on them after 2 s (inside the partner's 5 s), not never; with the stall time above
# that, the lock's lockup names what the coordinator gave up on (alone: a garbage turn file)
printf '\377\377\377\377\377\377\377\377\377\377\377\377' >"$T/lwturn"
out=$("$BIN/lockbench-test" run --workloads hot --threads 4 --locks broken-lostwake --repeat 1 --duration-ms 2000 \
  --no-instructions --stall-ms 6000 --lockstep "$T/lwturn" --lockstep-side 0 --json "$T/lw.json" 2>&1)
is $? 3 "hot: a lock whose threads never stop is still a lockup"
like "$(jq -r '.runs[0].lockup.message' "$T/lw.json")" \
  'phase stop\); lockstep: [1-4] of 4 threads of broken-lostwake did not stop within 2000 ms$' \
  "and the side stopped waiting for its threads after 2000 ms, saying so"

# the agent's run of the rest skips hot when hot ran in lockstep: oversub's points that
# are hot's (quick's hot at 2, 4, 8 threads) stay out all the same, as when hot runs
"$LB" run --suite quick --locks kmutex --skip-workloads uncontended,hot,long-hold,wake-latency \
  --duration-ms 5 --repeat 1 --no-instructions --json "$T/s.json" >"$T/s.out" 2>&1
dups=$(if [[ -s $T/s.json ]]; then
  jq '[.runs[] | select(.workload == "oversub" and ([.params.threads] | inside([2, 4, 8])))] | length' "$T/s.json"
else echo 0; fi)
is "$dups" 0 "a skipped hot does not bring back the oversub points hot would have run"
# smoke without uncontended and hot has nothing left for a lock: the rest is an empty document
"$LB" run --suite smoke --locks pthread --skip-workloads uncontended,hot --json "$T/empty.json" >"$T/empty.out" 2>&1
is "$? $(jq -c .runs "$T/empty.json")" "0 []" "a run whose --skip-workloads leaves nothing writes a document with no runs"

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
