# BenchSpread.pm - what the spread scripts of the benches share (core Perl
# only): reading a lockbench document, mean and sample standard deviation.
package BenchSpread;
use strict;
use warnings;
use JSON::PP;
use Exporter 'import';
our @EXPORT = qw(load mean sd);

# the document at a path, or undef when it cannot be read
sub load {
  local $/;
  open(my $fh, '<', $_[0]) or return undef;
  return JSON::PP->new->decode(<$fh>);
}
sub mean { my $s = 0; $s += $_ for @_; return @_ ? $s / @_ : 0 }
sub sd {
  my $m = mean(@_);
  my $s = 0;
  $s += ($_ - $m)**2 for @_;
  return @_ > 1 ? sqrt($s / (@_ - 1)) : 0;
}
1;
