#!/usr/bin/env perl
# bench-duet-spread.pl DIR ROUNDS MODE... - the spread table of bench-duet.sh
# from DIR/MODE-VARIANT-ROUND.json (core Perl only).
use strict;
use warnings;
use FindBin;
use lib $FindBin::Bin;
use BenchSpread;    # load, mean, sd
my ($dir, $rounds, @modes) = @ARGV;
my (%mean, %lost, %rep, %locks);
for my $mode (@modes) {
  for my $r (0 .. $rounds - 1) {
    for my $v ('base', 'patched') {
      my $d = load("$dir/$mode-$v-$r.json") or next;
      for my $run (@{$d->{runs}}) {
        next if $run->{lockup};
        my $s = $run->{samples}{ns_per_pair} or next;
        $locks{$run->{lock}} = 1;
        $mean{$mode}{$run->{lock}}{$v}[$r] = mean(@$s);
        my $dist = $run->{disturbance}{ns_per_pair};
        if ($dist) {
          push @{$lost{$mode}}, @{$dist->{lost_pct}};
          $rep{$mode} += $dist->{repeated};
        }
      }
    }
  }
}
printf "%-8s %-11s %9s %9s %12s %7s\n", 'lock', 'mode', 'CoV base', 'CoV patch', 'sd(paired)', 'rounds';
my (%sum, %absd);
for my $lock (sort keys %locks) {
  for my $mode (@modes) {
    my $m = $mean{$mode}{$lock};
    my @b = grep { defined } @{$m->{base} // []};
    my @p = grep { defined } @{$m->{patched} // []};
    my @d;
    for my $r (0 .. $rounds - 1) {
      my ($x, $y) = ($m->{base}[$r], $m->{patched}[$r]);
      push @d, 100 * ($y / $x - 1) if defined $x && defined $y && $x > 0;
    }
    my ($cb, $cp) = (100 * sd(@b) / (mean(@b) || 1), 100 * sd(@p) / (mean(@p) || 1));
    printf "%-8s %-11s %8.2f%% %8.2f%% %11.2f%% %7d\n", $lock, $mode, $cb, $cp, sd(@d), scalar @d;
    push @{$sum{$mode}}, sd(@d);
    push @{$absd{$mode}}, map { abs } @d;
  }
}
for my $mode (@modes) {
  my @l = sort { $a <=> $b } @{$lost{$mode} // []};
  my $q = sub { @l ? $l[int($_[0] * $#l)] : 0 };
  my @a = sort { $a <=> $b } @{$absd{$mode} // []};
  printf "%-11s mean sd(paired) over locks %.2f%%; |paired difference| median %.3f%%, p90 %.2f%%, above 1%% in %.0f%% of %d pairs; samples lost median %.1f%%, p90 %.1f%% of their time; %d samples repeated\n",
    $mode, mean(@{$sum{$mode}}), @a ? $a[int($#a / 2)] : 0, @a ? $a[int(0.9 * $#a)] : 0,
    @a ? 100 * (grep { $_ > 1 } @a) / @a : 0, scalar @a, $q->(0.5), $q->(0.9), $rep{$mode} // 0;
}
