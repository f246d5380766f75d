#!/usr/bin/env bash
# lockbench kernel run at the seeds' largest user count: the base kernel
# runs every guest workload of the seeds suite (pipe-mutex, epoll-ctl,
# seq-read on kernel struct mutexes, aim7-mix) with 2000 users, without a
# lockup or a splat, and each gives its figure (ops/s, JPM) for 2000 users.
. "$(dirname "$0")/lib/tap.sh"
. "$TOP/tests/lib/kernel.sh"
LB="$BIN/lockbench"
J="$TOP/scripts/lbjson.pl"

kernel_base

"$LB" kernel run --kernel "$base" --suite seeds --no-torture --users 2000 \
  --console-dir "$T/console" --json "$T/run.json" >"$T/run.out" 2>"$T/run.err"
rc=$?
is $rc 0 "2000 users: the run is clean (exit 0)" || diag "$(cat "$T/run.err")" "$(tail -n 20 "$T/run.out")"
rows=$("$J" "$T/run.json")
for w in pipe-mutex:ops_per_sec epoll-ctl:ops_per_sec seq-read:ops_per_sec aim7-mix:jpm; do
  like "$rows" $'^'"${w%%:*}"$'\tkernel\tduration_ms=[0-9]+,users=2000\t'"${w#*:}"$'\t[1-9][0-9.e+]*\t[1-9]' \
    "${w%%:*} ran 2000 users and gives ${w#*:} with samples"
done
unlike "$rows" $'\tLOCKUP\t' "no lockup"
users=$(perl -MJSON::PP -0777 -ne 'my $d = decode_json($_); for my $r (@{$d->{runs}}) { my ($m) = sort keys %{$r->{per_thread}}; print "$r->{workload}=", scalar(@{$m ? $r->{per_thread}{$m} : []}), " " }' "$T/run.json")
is "$users" "pipe-mutex=2000 epoll-ctl=2000 seq-read=2000 aim7-mix=2000 " "each run holds a figure per user, all 2000"
like "$(cat "$T/run.out")" "0 locked up, 0 splats, 0 failed" "the closing line: no lockup, no splat, no failure"
like "$(cat "$T/console/lockbench.log")" "sysctl.kernel.pid_max=32768" "the guest's pid_max leaves room for 2000 users and their children"
done_testing
