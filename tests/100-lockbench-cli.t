#!/usr/bin/env bash
# lockbench from the command line: list, run, JSON, compare, and bad input
# of every kind getting one clear line and a non-zero exit.
. "$(dirname "$0")/lib/tap.sh"
LB="$BIN/lockbench"
J="$TOP/scripts/lbjson.pl"

out=$("$LB" list); ok $? "list exits 0"
for l in pthread pthread-adaptive tas ttas ticket mcs clh qspinlock futex3 kmutex-2009 kmutex parking; do
  like "$out" "^  $l " "list names lock $l"
done
for w in uncontended hot cs-sweep many-locks oversub long-hold futex-wake futex-hash vfs-creat-unlink aim7-mix; do
  like "$out" "^  $w " "list names workload $w"
done
unlike "$out" "broken-lostwake" "the broken test lock is not in the real build"
like "$out" "^  users .*AIM7's bands of users .*old name: seeds" "list names the users suite and its old name"
unlike "$out" "^  seeds " "the old name is not listed as a suite of its own"

# a run on two locks writes a document that follows the schema
"$LB" run --suite smoke --locks pthread,kmutex --repeat 5 --json "$T/a.json" >"$T/run.out" 2>"$T/run.err"
ok $? "run --suite smoke --locks pthread,kmutex exits 0"
like "$(cat "$T/run.out")" "^hot +kmutex .*threads=4.* ops_per_sec [0-9,]+ ops/s" "the table shows kmutex on hot at 4 threads"
like "$(cat "$T/a.json")" '"schema": "lockbench-result/1"' "the JSON names its schema"
rows=$("$J" "$T/a.json")
like "$rows" $'^hot\tkmutex\t.*threads=2\tops_per_sec\t[0-9.e+]+\t5$' "hot/kmutex at 2 threads has ops_per_sec with 5 samples"
like "$rows" $'^hot\tpthread\t.*threads=4\tfairness\t' "hot/pthread has a fairness figure"
like "$rows" $'^uncontended\tpthread\t.*\tns_per_pair\t' "uncontended reports ns per pair"
unlike "$rows" $'\t(tas|ticket|mcs)\t' "--locks narrowed the run to the named locks"
unlike "$rows" $'^(futex-wake|vfs-creat-unlink)\t' "--locks leaves out the kernel workloads"
like "$(grep -c '"ops_per_sec": "higher"' "$T/a.json")" '^[1-9]' "metrics say which direction is better"

# compare: the same document on both sides is no change; a clear 20% drop (fixed
# samples, so the test does not depend on this machine's noise) is a regression
out=$("$LB" compare "$T/a.json" "$T/a.json" --format text); ok $? "compare A/A exits 0"
unlike "$out" "regression" "A/A comparison flags no regression"
like "$out" "overall: no-change \\(the patched image is the base's" "one image both sides: the A/A says no code changed"
like "$(jq -r .image "$T/a.json")" '^sha256:[0-9a-f]{64}$' "run records the image it measured with"
is "$(jq -r .image "$T/a.json")" "$("$LB" image "$LB" | cut -d' ' -f1)" "the image is lockbench image's of the binary"
fix() { # fix FACTOR VARIANT: kmutex on hot gets samples 1e6 x FACTOR x (1, 1.01, 0.99, 1, 1.005)
  F=$1 V=$2 perl -MJSON::PP -0777 -ne '
    my ($f, $v) = ($ENV{F}, $ENV{V});
    my $d = JSON::PP->new->decode($_);
    for my $r (@{$d->{runs}}) {
      next unless $r->{workload} eq "hot" && $r->{lock} eq "kmutex";
      $r->{samples}{ops_per_sec} = [map { 1e6 * $f * $_ } 1, 1.01, 0.99, 1, 1.005];
      $r->{metrics}{ops_per_sec} = 1e6 * $f;
    }
    $d->{variant} = $v;
    $d->{round} = ($ENV{R} // 0) + 0;
    delete $d->{image} if $v ne "base"; # edited samples stand for another build
    print JSON::PP->new->canonical->pretty->encode($d);'
}
fix 1 base <"$T/a.json" >"$T/base.json"
fix 0.8 patched <"$T/a.json" >"$T/b.json"
cp "$T/base.json" "$T/a.json"
# one round a side: too few rounds to test, whatever the samples say (no
# fallback to Welch's test over the pooled samples of one run)
out=$("$LB" compare "$T/a.json" "$T/b.json" --format text); ok $? "compare of one round a side exits 0"
unlike "$out" "hot +kmutex .*regression" "one round a side: the 20% drop is no regression"
like "$out" "hot +kmutex .*threads=4 .*inconclusive" "but inconclusive"
like "$out" "too few rounds to test: [0-9]+ row\(s\) with fewer than 3 rounds" "and the legend says why"
like "$out" "^overall: inconclusive" "overall: inconclusive"
out=$("$LB" compare "$T/a.json,$T/a.json" "$T/b.json,$T/b.json" --format json)
is "$(jq -r '[.rows[] | select(.verdict != "inconclusive")] | length' <<<"$out")" 0 \
  "two documents of round 0 a side pair once: every row inconclusive"
# five rounds a side (the fewest a row needs for a verdict) pair: the drop is a
# regression, in every format
for r in 0 1 2 3 4; do
  R=$r fix 1 base <"$T/a.json" >"$T/b$r.json"; R=$r fix 0.8 patched <"$T/a.json" >"$T/p$r.json"
done
B5=$(echo "$T"/b[0-4].json | tr ' ' ,) P5=$(echo "$T"/p[0-4].json | tr ' ' ,)
for f in text aim7 perf lkp json; do
  out=$("$LB" compare "$B5" "$P5" --format $f); ok $? "compare --format $f exits 0"
  [[ $f == text ]] && like "$out" "hot +kmutex .*regression" "text: hot/kmutex 20% slower is a regression"
  [[ $f == aim7 ]] && like "$out" "avg throughput" "aim7: AIM7's header"
  [[ $f == perf ]] && like "$out" '\| threads \|' "perf: perf bench's grid"
  [[ $f == lkp ]] && like "$out" "%stddev +%change +%stddev" "lkp: the %stddev %change %stddev block"
  [[ $f == json ]] && like "$out" '"verdict": "regression"' "json: the regression is in the rows"
  [[ $f == text ]] && like "$out" "hot +kmutex .*threads=4 .*-20.0% \\* ±10% " \
    "text: the change has its margin beside it (contended throughput: 10%)"
  [[ $f == text ]] && like "$out" "uncontended +kmutex .*ns_per_pair .*±3% .*no-change" \
    "text: an unmoved uncontended row is no-change inside its 3% margin"
done

# --confirm-from: rounds 0-4 find the 20% drop; rounds 5-9 must find it again
for r in 5 6 7 8 9; do
  R=$r fix 1 base <"$T/a.json" >"$T/b$r.json"; R=$r fix 0.8 patched <"$T/a.json" >"$T/p$r.json"
  R=$r fix 1 patched <"$T/a.json" >"$T/q$r.json"
done
B10=$(echo "$T"/b[0-9].json | tr ' ' ,)
out=$("$LB" compare "$B10" "$(echo "$T"/p[0-9].json | tr ' ' ,)" --confirm-from 5)
like "$out" "hot +kmutex .*regression" "--confirm-from: a drop both halves show is a regression"
like "$out" "rounds 0-4 found the change and rounds 5 and later found it again" "and the legend says so"
out=$("$LB" compare "$B10" "$P5,$(echo "$T"/q[5-9].json | tr ' ' ,)" --confirm-from 5 --format json)
is "$(jq -r '[.rows[] | select(.lock == "kmutex" and .workload == "hot" and .metric == "ops_per_sec")
  | select(.verdict == "regression" or .verdict == "improvement")] | length' <<<"$out")" 0 \
  "a drop rounds 3-5 do not repeat is not confirmed"
is "$(jq -r '[.rows[] | select(.q < .p)] | length' <<<"$out")" 0 "and no row prints a q below its p"
out=$("$LB" compare "$T/b0.json" "$T/p0.json" --confirm-from 1 2>&1); is $? 1 "--confirm-from past the last round exits 1"
like "$out" "each side needs rounds before 1 and from 1 on" "saying what is missing"
out=$("$LB" compare "$T/b0.json" "$T/p0.json" --confirm-from 0 2>&1); is $? 2 "--confirm-from 0 is bad usage"

# --json -: the document alone on stdout, the table on stderr
out=$("$LB" run --locks pthread --workloads uncontended --json - 2>"$T/table.txt")
is "$(printf '%s' "$out" | perl -MJSON::PP -e 'local $/; print decode_json(<STDIN>)->{schema}')" \
  "lockbench-result/1" "--json - writes only the document to stdout"
like "$(cat "$T/table.txt")" "uncontended +pthread .*ns_per_pair" "and the table to stderr"

# --controls: an untouched lock is shown as the machine's A/A, and decides nothing
for v in base patched; do
  "$LB" run --locks pthread,tas --workloads uncontended --controls pthread --variant $v \
    --quiet --json "$T/ctl-$v.json" || true
done
is "$(jq -c .controls "$T/ctl-base.json")" '["pthread"]' "run --controls records the control"
out=$("$LB" compare "$T/ctl-base.json" "$T/ctl-patched.json" --format json --ignore-image)
is "$(jq -c '[.rows[] | [.lock, .control]] | sort' <<<"$out")" '[["pthread",true],["tas",false]]' \
  "compare marks the control's rows, and only them"
out=$("$LB" compare "$T/ctl-base.json" "$T/ctl-patched.json" --format json)
is "$(jq -c '[.identical_code, ([.rows[] | .control] | all), .overall]' <<<"$out")" '[true,true,"no-change"]' \
  "one binary both sides: every row is a control and the verdict no-change"
out=$("$LB" run --locks tas --controls pthread 2>&1); is $? 2 "a control that is not run exits 2"
like "$out" "controls: pthread is not one of --locks" "and says so"
out=$("$LB" run --controls nosuch 2>&1); is $? 2 "an unknown control exits 2"

# bad input
out=$("$LB" run --locks nosuchlock 2>&1); rc=$?
is "$rc" 2 "an unknown lock exits 2"
like "$out" "unknown lock 'nosuchlock' \(valid: pthread, pthread-adaptive, tas" "and lists the valid locks"
out=$("$LB" run --workloads nosuch 2>&1); is $? 2 "an unknown workload exits 2"
like "$out" "valid: uncontended, hot" "and lists the valid workloads"
out=$("$LB" run --suite nosuch 2>&1); is $? 2 "an unknown suite exits 2"
out=$("$LB" run --threads 0 2>&1); is $? 2 "--threads 0 exits 2"
like "$out" "threads.*out of range" "and says why"
out=$("$LB" run --duration-ms -5 2>&1); is $? 2 "a negative duration exits 2"
out=$("$LB" run --threads 2,x 2>&1); is $? 2 "a thread list with garbage exits 2"
out=$("$LB" run --threads 1,,2 2>&1); is $? 2 "a thread list with an empty element exits 2"
like "$out" "threads: empty element in '1,,2'" "and names the list"
out=$("$LB" run --locks pthread, 2>&1); is $? 2 "a lock list with a trailing comma exits 2"
out=$("$LB" compare "$T/a.json," "$T/a.json" 2>&1); is $? 1 "compare refuses an empty document name"
out=$("$LB" frobnicate 2>&1); is $? 2 "an unknown command exits 2"
mkdir -p "$T/ro"; chmod 555 "$T/ro"
out=$("$LB" run --locks pthread --workloads uncontended --json "$T/ro/x.json" 2>&1); rc=$?
if [[ $(id -u) -eq 0 ]]; then
  # root writes anywhere; an absent folder is unwritable for everyone
  out=$("$LB" run --locks pthread --workloads uncontended --json "$T/nodir/x.json" 2>&1); rc=$?
  [[ -e "$T/nodir/x.json" ]]; is $? 1 "no file appears at an unwritable path"
else
  [[ -e "$T/ro/x.json" ]]; is $? 1 "no file appears at an unwritable path"
fi
isnt0=$([[ $rc -ne 0 ]] && echo yes); is "$isnt0" yes "an unwritable JSON path exits non-zero"
like "$out" "cannot write" "and says it cannot write"
head -c 200 "$T/a.json" >"$T/trunc.json"
out=$("$LB" compare "$T/a.json" "$T/trunc.json" 2>&1); rc=$?
is "$rc" 1 "compare refuses a truncated document"
like "$out" "trunc.json: .*(line|column|end)" "with the place it broke"
echo '{"schema": "something-else/2", "runs": []}' >"$T/foreign.json"
out=$("$LB" compare "$T/a.json" "$T/foreign.json" 2>&1); is $? 1 "compare refuses a foreign document"
like "$out" "schema" "naming the schema field"
out=$("$LB" compare "$T/a.json" "$T/missing.json" 2>&1); is $? 1 "compare of a missing file exits 1"
out=$("$LB" compare "$T/a.json" "$T/b.json" --format nosuch 2>&1); is $? 2 "an unknown format exits 2"
like "$out" "valid: aim7, perf, lkp, text, json" "and lists the formats"
out=$("$LB" compare "$T/a.json" "$T/b.json" --looks 0 2>&1); is $? 2 "--looks 0 is bad usage"
out=$("$LB" compare "$T/a.json" "$T/b.json" --margin 2 2>&1); is $? 2 "--margin past 1 is bad usage"
# Disturbance: every uncontended sample records what disturbed it, and one whose
# thread lost more than the limit is taken again.  A second lockbench pinned to
# the same CPU takes about half of it (the scheduler shares a CPU fairly), far
# past a 5% limit, so each sample is taken again exactly --disturb-retries times.
"$LB" run --cpus 0 --locks pthread --workloads uncontended --duration-ms 20000 --repeat 1 \
  --disturb-limit 0 --quiet >/dev/null 2>&1 &
hog=$!
at=$(($(date +%s%N) + 500000000))
"$LB" run --cpus 0 --start-at "$at" --locks pthread --workloads uncontended --duration-ms 40 \
  --repeat 3 --disturb-limit 5 --disturb-retries 1 --json "$T/dist.json" --quiet
ok $? "a run sharing its CPU with another one completes"
kill "$hog" 2>/dev/null; wait "$hog" 2>/dev/null
d=$(jq -c '.runs[0].disturbance.ns_per_pair' "$T/dist.json")
is "$(jq .repeated <<<"$d")" 3 "each of the 3 disturbed samples was taken again once (--disturb-retries 1)"
is "$(jq '.lost_pct | length' <<<"$d")" 3 "one disturbance entry per kept sample"
is "$(jq '[.lost_pct[] | select(. > 5)] | length' <<<"$d")" 3 "and each kept sample says its thread lost more than 5% (the CPU was shared)"
is "$(jq '.runs[0].samples.ns_per_pair | length' "$T/dist.json")" 3 "the repeats are not averaged in: 3 samples"
out=$("$LB" compare "$T/dist.json" "$T/dist.json" 2>&1)
like "$out" "disturbance: 6 sample\(s\) of 1 row\(s\) taken again because their thread lost more than 5%" \
  "compare's legend says how many samples were taken again"
"$LB" run --locks pthread --workloads uncontended --duration-ms 20 --repeat 2 --disturb-limit 0 \
  --json "$T/rec.json" --quiet
is "$(jq '.runs[0].disturbance.ns_per_pair | [.repeated, .limit_pct, (.steal_pct | length)]' -c "$T/rec.json")" \
  '[0,0,2]' "--disturb-limit 0 records the disturbance and repeats nothing"
out=$("$LB" compare "$T/rec.json" "$T/rec.json" 2>&1)
like "$out" "disturbance: recorded for 1 row\(s\).*no sample taken again" "and the legend says so"
jq 'del(.runs[].disturbance)' "$T/rec.json" >"$T/old.json"
out=$("$LB" compare "$T/old.json" "$T/old.json" 2>&1); is $? 0 "a document from before disturbance records is still valid"
unlike "$out" "disturbance:" "and gets no disturbance line"
out=$("$LB" run --disturb-limit 101 2>&1); is $? 2 "--disturb-limit past 100 is bad usage"
out=$("$LB" run --cpus 0-x 2>&1); is $? 2 "a bad --cpus list is bad usage"
like "$out" "not a list of CPUs" "and says what a list is"
out=$("$LB" run --start-at $(($(date +%s) * 1000000000 + 7200000000000)) 2>&1); is $? 2 "--start-at two hours ahead is bad usage"
# kernel run's limits on a boot: checked before anything boots
for bad in "--budget-s 0" "--budget-s x" "--cap-x 0" "--cap-x 101"; do
  out=$("$LB" kernel run --kernel /nonexistent $bad 2>&1); is $? 2 "kernel run $bad is bad usage"
  like "$out" "${bad%% *}" "and names ${bad%% *}"
done
done_testing
