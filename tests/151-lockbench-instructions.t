#!/usr/bin/env bash
# The exact instrument beside the timed one: instructions_per_pair, counted
# under valgrind for uncontended points (lockbench/src/instr.h).  A lock with
# more work in its uncontended path counts more; the same binary counts the
# same; without valgrind the row is left out and the run says so; compare
# judges the row by its own tiny margin (a code-path note: the row's verdict,
# never the job's alone, docs/verdicts.md).
. "$(dirname "$0")/lib/tap.sh"
LB="$BIN/lockbench-test"

# value FILE LOCK METRIC: the metric's value, "none" when the run lacks it
value() {
  perl -MJSON::PP -0777 -e 'my ($f, $l, $m) = @ARGV; open my $h, "<", $f or die; local $/;
    my $d = decode_json(<$h>); my $v = "none";
    for my $r (@{$d->{runs}}) { $v = $r->{metrics}{$m} if $r->{lock} eq $l && exists $r->{metrics}{$m} }
    print $v' "$1" "$2" "$3"
}
# run1 DELAY OUT [ARGS...]: delay-pthread (DELAY units of work in lock()) and pthread, uncontended
run1() {
  local d=$1 o=$2
  shift 2
  LOCKBENCH_DELAY_LOOPS=$d "$LB" run --suite quick --locks delay-pthread,pthread \
    --workloads uncontended --repeat 1 --duration-ms 5 --json "$o" --quiet "$@" 2>"$o.err"
}

# the absent instrument first: it needs no valgrind
LOCKBENCH_VALGRIND=$T/no-valgrind run1 0 "$T/absent.json"
is $? 0 "without valgrind the run still succeeds"
is "$(value "$T/absent.json" delay-pthread instructions_per_pair)" none "and has no instructions_per_pair row"
like "$(value "$T/absent.json" delay-pthread ns_per_pair)" '^[0-9.]+$' "but its timed row"
like "$(cat "$T/absent.json.err")" "instructions_per_pair left out \(no instrument\): (cannot run .*no-valgrind|lockbench was built with AddressSanitizer)" \
  "and says on stderr that the row is left out, and why"

run1 0 "$T/nosmoke.json" --suite smoke
is "$(value "$T/nosmoke.json" pthread instructions_per_pair)" none "the smoke suite does not count instructions"
run1 0 "$T/off.json" --no-instructions
is "$(value "$T/off.json" pthread instructions_per_pair)" none "--no-instructions leaves the row out"

# the instrument here: valgrind installed, and a build it can run (not make asan's)
why=""
command -v valgrind >/dev/null || why="valgrind is not installed (scripts/deps.sh installs it)"
run1 0 "$T/probe.json"
[[ -z $why ]] && why=$(sed -n 's/.*instructions_per_pair left out (no instrument): //p' "$T/probe.json.err")
if [[ -n $why ]]; then
  for c in "counted in the quick suite" "same binary, same count" "added work counts more" \
    "the other lock's count is unchanged" "a longer hold counts more" "compare: slowdown is a regression" "compare: A/A is no-change"; do
    skip "$c" "$why"
  done
  done_testing
  exit
fi

run1 0 "$T/a.json"
is $? 0 "a run with the instrument succeeds"
a=$(value "$T/a.json" delay-pthread instructions_per_pair)
like "$a" '^[0-9]+(\.[0-9]+)?$' "counted in the quick suite (delay-pthread: $a instructions per pair)"
like "$(value "$T/a.json" delay-pthread ns_per_pair)" '^[0-9.]+$' "beside ns_per_pair, not instead of it"
unit=$(perl -MJSON::PP -0777 -ne 'for (@{decode_json($_)->{runs}}) { print $_->{units}{instructions_per_pair} // "" if $_->{lock} eq "pthread" }' "$T/a.json")
is "$unit" instructions "its unit is instructions"
run1 0 "$T/b.json"
b=$(value "$T/b.json" delay-pthread instructions_per_pair)
same=$(awk -v a="$a" -v b="$b" 'BEGIN { d = (b - a) / a; print (d < 0 ? -d : d) < 0.001 ? "yes" : "no" }')
is "$same" yes "same binary, same count ($a and $b, within 0.1%)"
run1 20 "$T/c.json"
c=$(value "$T/c.json" delay-pthread instructions_per_pair)
# delay-pthread's 20 units: a call counter in every lock() and an extra atomic in 20 of 256
more=$(awk -v a="$a" -v c="$c" 'BEGIN { print ((c >= a + 2) ? "yes" : "no") }')
is "$more" yes "added work counts more (20 units of extra atomics in lock(): $a -> $c)"
is "$(value "$T/c.json" pthread instructions_per_pair)" "$(value "$T/a.json" pthread instructions_per_pair)" \
  "the other lock's count is unchanged"
# the other knob, a longer hold (hot10's): 2560 units are 10 steps of a
# multiply-add chain in every lock(), at least 2 instructions a step
LOCKBENCH_HOLD_LOOPS=2560 run1 0 "$T/h.json"
h=$(value "$T/h.json" delay-pthread instructions_per_pair)
more=$(awk -v a="$a" -v h="$h" 'BEGIN { print ((h >= a + 20) ? "yes" : "no") }')
is "$more" yes "a longer hold counts more (LOCKBENCH_HOLD_LOOPS=2560, 10 chain steps in lock(): $a -> $h)"

# compare, five rounds a side: the counts' rows are judged by their 0.5% margin
for r in 1 2 3 4 5; do
  run1 0 "$T/base$r.json" --variant base --round "$r"
  run1 0 "$T/aa$r.json" --variant patched --round "$r"
  run1 1 "$T/slow$r.json" --variant patched --round "$r"
done
base_list=$(printf "%s," "$T"/base{1,2,3,4,5}.json)
out=$("$LB" compare "${base_list%,}" "$(printf "%s," "$T"/slow{1,2,3,4,5}.json | sed 's/,$//')" --format json 2>&1)
verdicts=$(perl -MJSON::PP -0777 -ne 'for (@{decode_json($_)->{rows}}) { print "$_->{lock} $_->{verdict}\n" if $_->{metric} eq "instructions_per_pair" }' <<<"$out")
like "$verdicts" "delay-pthread regression" "compare: slowdown is a regression (one unit of work in lock(): its counter, an atomic in 1 of 256 calls)"
out=$("$LB" compare "${base_list%,}" "$(printf "%s," "$T"/aa{1,2,3,4,5}.json | sed 's/,$//')" --format json 2>&1)
verdicts=$(perl -MJSON::PP -0777 -ne 'for (@{decode_json($_)->{rows}}) { print "$_->{lock} $_->{verdict}\n" if $_->{metric} eq "instructions_per_pair" }' <<<"$out")
is "$verdicts" "$(printf 'delay-pthread no-change\npthread no-change')" "compare: A/A is no-change"
text=$("$LB" compare "${base_list%,}" "$(printf "%s," "$T"/aa{1,2,3,4,5}.json | sed 's/,$//')" 2>&1)
like "$text" "instructions_per_pair is counted under valgrind" "the legend names the instrument"
done_testing
