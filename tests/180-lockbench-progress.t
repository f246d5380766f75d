#!/usr/bin/env bash
# lockbench run --progress-s P: a line on stderr every P seconds of a point in
# which its workers made progress ("lockbench: hot pthread 2 threads: N
# operations so far (T s)"), which a kernel boot's host counts as the guest's
# progress; none without the option, none for a point that stopped moving,
# and bad values refused.
. "$(dirname "$0")/lib/tap.sh"
LB="$BIN/lockbench"
LBT="$BIN/lockbench-test"
line_re='^lockbench: hot pthread 2 threads: [0-9]+ operations so far \([0-9]+\.[0-9] s\)$'

like "$("$LB" run --help)" "--progress-s N" "run --help names --progress-s"

# (a) a 1.5 s point with a line every second: at least one line, with N > 0
"$LB" run --workloads hot --locks pthread --threads 2 --duration-ms 1500 --repeat 1 \
  --progress-s 1 >"$T/a.out" 2>"$T/a.err"
ok $? "run --progress-s 1 exits 0"
err=$(cat "$T/a.err")
like "$err" "$line_re" "stderr has a progress line in the documented format"
n=$(grep -cE "$line_re" <<<"$err")
[[ $n -ge 1 ]]; ok $? "at least one progress line ($n)"
first=$(grep -m1 -E "$line_re" <<<"$err" | sed -E 's/.*: ([0-9]+) operations.*/\1/')
[[ ${first:-0} -gt 0 ]]; ok $? "the line counts operations done (N=${first:-none} > 0)"
like "$(cat "$T/a.out")" "^hot +pthread .*ops_per_sec" "the table still comes, on stdout"
unlike "$(cat "$T/a.out")" "operations so far" "no progress line in the table's stream"

# --quiet hides the table, not the lines asked for
"$LB" run --workloads hot --locks pthread --threads 2 --duration-ms 1500 --repeat 1 \
  --progress-s 1 --quiet >"$T/q.out" 2>"$T/q.err"
ok $? "run --progress-s 1 --quiet exits 0"
like "$(cat "$T/q.err")" "$line_re" "--quiet keeps the progress lines"
unlike "$(cat "$T/q.out")" "ops_per_sec" "and hides the table"

# aim7-mix counts its users' job steps (fork+exec, pipe, creat+unlink, the
# job): a point of 2000 users under TCG finishes no job for minutes
"$LB" run --workloads aim7-mix --threads 4 --duration-ms 1500 --repeat 1 --dir "$T" \
  --progress-s 1 >"$T/m.out" 2>"$T/m.err"
ok $? "aim7-mix with --progress-s 1 exits 0"
like "$(cat "$T/m.err")" '^lockbench: aim7-mix kernel 4 users: [1-9][0-9]* operations so far \([0-9.]+ s\)$' \
  "aim7-mix's line names the users and counts their job steps"

# (b) without the option (or with 0) there is no such line
"$LB" run --workloads hot --locks pthread --threads 2 --duration-ms 1500 --repeat 1 \
  >"$T/b.out" 2>"$T/b.err"
ok $? "run without --progress-s exits 0"
unlike "$(cat "$T/b.out" "$T/b.err")" "operations so far" "without --progress-s no progress line"
"$LB" run --workloads hot --locks pthread --threads 2 --duration-ms 1500 --repeat 1 \
  --progress-s 0 >"$T/z.out" 2>"$T/z.err"
ok $? "run --progress-s 0 exits 0"
unlike "$(cat "$T/z.out" "$T/z.err")" "operations so far" "--progress-s 0 is off"

# (c) bad values: exit 2 and a message naming the option
for bad in -1 abc 86401 5x "" 1.5; do
  err=$("$LB" run --workloads hot --locks pthread --threads 2 --duration-ms 100 --repeat 1 \
    --progress-s "$bad" 2>&1 >/dev/null)
  is $? 2 "--progress-s '$bad' exits 2"
  like "$err" "--progress-s" "--progress-s '$bad': the message names the option"
done

# (d) a point that stops moving prints no line while it hangs: broken-lostwake
# loses a wakeup early and its stall takes 3000 x (1 + log10 4) = 4.8 s, about
# five periods of 1 s.  Each line must count more than the one before (a
# line that repeats N would be a hung point looking alive).
"$LBT" run --workloads hot --locks broken-lostwake --threads 4 --duration-ms 3000 --repeat 1 \
  --stall-ms 3000 --no-stacks --progress-s 1 --json "$T/d.json" >"$T/d.out" 2>"$T/d.err"
is $? 3 "the broken lock's run is a lockup (exit 3)"
like "$(cat "$T/d.out")" "^hot +broken-lostwake .*LOCKUP \(stall\): no thread made progress for [0-9.]+ s" \
  "the stall is reported"
lines=$(grep -E '^lockbench: hot broken-lostwake 4 threads: ' "$T/d.err")
n=$(grep -c . <<<"$lines")
diag "the hung point's progress lines:" "$lines"
prev=-1 grew=0
while read -r k; do
  [[ -z $k ]] && continue
  if [[ $k -le $prev ]]; then grew=1; fi
  prev=$k
done < <(sed -E 's/.*: ([0-9]+) operations.*/\1/' <<<"$lines")
ok $grew "every line of the hung point counts more than the one before"
[[ $n -le 3 ]]; ok $? "the hung point printed no line through its 4.8 s stall ($n lines, from before the hang)"
# this test's runs only (their --json is under $T): other runs on a shared machine are not ours
pgrep -f -- "--json $T/" >/dev/null; is $? 1 "no benchmark process is left behind"
done_testing
