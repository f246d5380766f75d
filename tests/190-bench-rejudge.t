#!/usr/bin/env bash
# bench/verdict-rejudge.sh: the round documents bench-verdicts kept
# (KEEP_DIR) judged again under the server's round policy without running
# anything: an A/A stays no-change at its first look, a 20% slowdown found
# at 5 rounds is confirmed on the kept rounds 5-9, a comparison whose policy
# asks for rounds that were not kept is counted as ran-out; several kept
# directories count together; bad input exits 2.  The documents are one real
# smoke run shaped to fixed figures, so the verdicts do not depend on this
# machine's noise.
. "$(dirname "$0")/lib/tap.sh"
LB="$BIN/lockbench"
RJ="$TOP/bench/verdict-rejudge.sh"

"$LB" run --suite smoke --locks pthread --json "$T/run.json" --quiet >/dev/null 2>&1
ok $? "a smoke run gives a document to shape"
# shape ROUND VARIANT SLOW: every sample one fixed figure; patched's moved by
# a factor a round within +-0.1%, its uncontended cost SLOW times higher
shape() {
  R=$1 V=$2 S=$3 perl -MJSON::PP -0777 -ne '
    my @small = (1.001, 0.999, 1.0005, 0.9995, 1.0, 1.0002, 0.9998, 1.0003, 0.9997, 1.0001);
    my ($r, $v) = ($ENV{R}, $ENV{V});
    my $d = JSON::PP->new->decode($_);
    for my $run (@{$d->{runs}}) {
      for my $m (keys %{$run->{samples}}) {
        my $f = $v eq "base" ? 1 : $small[$r];
        $f *= $ENV{S} if $v ne "base" && $run->{workload} eq "uncontended" && $m eq "ns_per_pair";
        $run->{samples}{$m} = [map { 1000 * $f } 1 .. scalar @{$run->{samples}{$m}}];
        $run->{metrics}{$m} = 1000 * $f;
      }
    }
    $d->{variant} = $v; $d->{round} = $r + 0;
    delete $d->{image}; # two builds
    print JSON::PP->new->canonical->encode($d);' "$T/run.json"
}
# kept DIR/CASE-I ROUNDS SLOW
kept() {
  mkdir -p "$1"
  for ((r = 0; r < $2; r++)); do
    shape $r base 1 >"$1/r-b$r.json" && shape $r patched "$3" >"$1/r-p$r.json"
  done
}
kept "$T/k1/aa-1" 5 1
kept "$T/k1/slow-1" 10 1.2
kept "$T/k2/aa-1" 3 1

out=$(LB=$LB "$RJ" "$T/k1" 2>&1)
ok $? "verdict-rejudge exits 0 on kept comparisons"
like "$out" "k1/aa-1 no-change 5 0$" "the A/A is no-change at its first look (5 rounds)"
like "$out" "k1/slow-1 regression 10 5$" "the 20% slowdown, found at 5 rounds, is confirmed on the kept rounds 5-9"
out=$(LB=$LB "$RJ" "$T/k1" "$T/k2" 2>&1)
like "$out" "k2/aa-1 ran-out 3 0$" "three kept rounds where the policy looks first at 5: ran out"
like "$out" "^aa +2 +0 +1 +0 +1$" "the aa case counts both directories: 2, none flagged, 1 no-change, 1 ran out"
like "$out" "^slow +1 +1 +0 +0 +0$" "the slow case: 1, flagged"
out=$(LB=$LB "$RJ" 2>&1)
is "$?" 2 "without a directory: exit 2"
like "$out" "usage:" "and the usage"
mkdir -p "$T/empty"
out=$(LB=$LB "$RJ" "$T/empty" 2>&1)
is "$?" 2 "a directory without kept comparisons: exit 2"
like "$out" "holds no kept comparison" "and says so"
out=$(LB="$T/nosuch" "$RJ" "$T/k1" 2>&1)
is "$?" 2 "no lockbench: exit 2"
done_testing
