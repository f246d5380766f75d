#!/usr/bin/env perl
# bench-rows-spread.pl DIR ROUNDS METRICS MODE... - the A/A spread of every
# row (workload, lock, parameters, metric) of DIR/MODE-VARIANT-ROUND.json,
# base and patched being the same binary: the coefficient of variation of
# each side's per-round means and the standard deviation of the paired
# per-round differences (patched / base - 1), which is what the paired test
# of a verdict sees.  METRICS: a comma-separated list, or "all".  Whether
# the row is headline is compare's word (lockbench compare --format json on
# the same documents), printed by the caller.  Core Perl only.
use strict;
use warnings;
use FindBin;
use lib $FindBin::Bin;
use BenchSpread;    # load, mean, sd
my ($dir, $rounds, $metrics, @modes) = @ARGV;
my %want = map { $_ => 1 } split /,/, $metrics;
my (%mean, %rows);
for my $mode (@modes) {
  for my $r (0 .. $rounds - 1) {
    for my $v ('base', 'patched') {
      my $d = load("$dir/$mode-$v-$r.json") or next;
      for my $run (@{$d->{runs}}) {
        next if $run->{lockup};
        my $p = join ',', map { "$_=$run->{params}{$_}" } sort grep { $_ ne 'duration_ms' } keys %{$run->{params}};
        for my $m (sort keys %{$run->{samples}}) {
          next unless $metrics eq 'all' || $want{$m};
          my $key = "$run->{workload}\t$run->{lock}\t$p\t$m";
          $rows{$key} = 1;
          $mean{$mode}{$key}{$v}[$r] = mean(@{$run->{samples}{$m}});
        }
      }
    }
  }
}
printf "%-12s %-16s %-22s %-14s %-11s %8s %8s %10s %6s\n", 'workload', 'lock', 'params', 'metric', 'mode',
  'CoV base', 'CoV pat', 'sd(paired)', 'rounds';
my %sum;
for my $key (sort keys %rows) {
  my ($w, $l, $p, $m) = split /\t/, $key;
  for my $mode (@modes) {
    my $x = $mean{$mode}{$key} or next;
    my @b = grep { defined } @{$x->{base} // []};
    my @q = grep { defined } @{$x->{patched} // []};
    my @d;
    for my $r (0 .. $rounds - 1) {
      my ($u, $v) = ($x->{base}[$r], $x->{patched}[$r]);
      push @d, 100 * ($v / $u - 1) if defined $u && defined $v && $u > 0;
    }
    printf "%-12s %-16s %-22s %-14s %-11s %7.2f%% %7.2f%% %9.2f%% %6d\n", $w, $l, substr($p, 0, 22), $m, $mode,
      100 * sd(@b) / (mean(@b) || 1), 100 * sd(@q) / (mean(@q) || 1), sd(@d), scalar @d;
    push @{$sum{$mode}{$m}}, sd(@d);
  }
}
for my $mode (@modes) {
  for my $m (sort keys %{$sum{$mode}}) {
    my @s = sort { $a <=> $b } @{$sum{$mode}{$m}};
    printf "%-11s %-14s sd(paired) over %d rows: median %.2f%%, min %.2f%%, max %.2f%%\n", $mode, $m, scalar @s,
      $s[int($#s / 2)], $s[0], $s[-1];
  }
}
