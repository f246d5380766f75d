#!/usr/bin/env perl
# lbjson.pl FILE [FILTER...] - print "workload lock params metric value n" lines
# from a lockbench-result/1 document, one per metric; used by the bench and
# test scripts (core Perl only, no jq needed).
use strict;
use warnings;
use JSON::PP;
my $file = shift or die "usage: lbjson.pl FILE\n";
local $/;
open(my $fh, '<', $file) or die "lbjson: $file: $!\n";
my $doc = JSON::PP->new->decode(<$fh>);
for my $r (@{$doc->{runs}}) {
  my $p = join(',', map { "$_=$r->{params}{$_}" } sort keys %{$r->{params}});
  if ($r->{lockup}) {
    print join("\t", $r->{workload}, $r->{lock}, $p, 'LOCKUP', $r->{lockup}{kind}, 0), "\n";
    next;
  }
  for my $m (sort keys %{$r->{metrics}}) {
    my $n = scalar @{$r->{samples}{$m} // []};
    print join("\t", $r->{workload}, $r->{lock}, $p, $m, $r->{metrics}{$m}, $n), "\n";
  }
}
