#!/usr/bin/env bash
# lockbench kernel run at AIM7's largest user counts: the base kernel
# runs pipe-mutex, epoll-ctl and seq-read (kernel struct mutexes driven from
# userspace) with 2000 users, and aim7-mix at 10, 100 and 200 users in one
# boot (the users suite's own bands, 100, 1000 and 2000 users a boot each,
# take about 25 minutes under TCG: make bench-kernel runs them), without a
# lockup or a splat, and each gives its figure (ops/s, JPM) with one per user.
# run-tests: group kernel (one base build and qemu guests whose lockup detectors want their CPUs)
. "$(dirname "$0")/lib/tap.sh"
. "$TOP/tests/lib/kernel.sh"
LB="$BIN/lockbench"
J="$TOP/scripts/lbjson.pl"

kernel_base

# per_user FILE: "workload@users=N " for each run, N its per-user figures
per_user() {
  perl -MJSON::PP -0777 -ne 'my $d = decode_json($_); for my $r (@{$d->{runs}}) { my ($m) = sort keys %{$r->{per_thread}}; print "$r->{workload}\@$r->{params}{users}=", scalar(@{$m ? $r->{per_thread}{$m} : []}), " " }' "$1"
}

"$LB" kernel run --kernel "$base" --suite users --no-torture --workloads pipe-mutex,epoll-ctl,seq-read \
  --users 2000 --console-dir "$T/console" --json "$T/mutex.json" >"$T/mutex.out" 2>"$T/mutex.err"
is $? 0 "2000 users on kernel mutexes: the run is clean (exit 0)" || diag "$(cat "$T/mutex.err")" "$(tail -n 20 "$T/mutex.out")"
rows=$("$J" "$T/mutex.json")
for w in pipe-mutex epoll-ctl seq-read; do
  like "$rows" $'^'"$w"$'\tkernel\tduration_ms=[0-9]+,users=2000\tops_per_sec\t[1-9][0-9.e+]*\t2$' \
    "$w ran 2000 users and gives ops/s with 2 samples"
done
is "$(per_user "$T/mutex.json")" "pipe-mutex@2000=2000 epoll-ctl@2000=2000 seq-read@2000=2000 " \
  "each run holds a figure per user, all 2000"
unlike "$rows" $'\tLOCKUP\t' "no lockup"
like "$(cat "$T/mutex.out")" "0 locked up, 0 splats, 0 failed" "the closing line: no lockup, no splat, no failure"
like "$(cat "$T/console/lockbench.log")" "sysctl.kernel.pid_max=32768" "the guest's pid_max leaves room for the users"

# seeds, the users suite's old name, is still accepted
"$LB" kernel run --kernel "$base" --suite seeds --no-torture --workloads aim7-mix --users 10,100,200 \
  --json "$T/aim7.json" >"$T/aim7.out" 2>"$T/aim7.err"
is $? 0 "aim7-mix at 10, 100 and 200 users: the run is clean (exit 0)" || diag "$(cat "$T/aim7.err")" "$(tail -n 20 "$T/aim7.out")"
rows=$("$J" "$T/aim7.json")
for u in 10 100 200; do
  like "$rows" $'^aim7-mix\tkernel\tduration_ms=[0-9]+,users='"$u"$'\tjpm\t[1-9][0-9.e+]*\t2$' \
    "aim7-mix ran $u users and gives JPM with 2 samples"
done
is "$(perl -MJSON::PP -0777 -ne 'print decode_json($_)->{suite}' "$T/aim7.json")" "kernel-users" \
  "the old name runs the users suite and records its name"
is "$(per_user "$T/aim7.json")" "aim7-mix@10=10 aim7-mix@100=100 aim7-mix@200=200 " "with a figure per user"
like "$(cat "$T/aim7.out")" "0 locked up, 0 splats, 0 failed" "no lockup, no splat, no failure"
like "$(cat "$T/aim7.out")" "^emulated: timing from an emulated CPU|^boot 1/1 lockbench: .* \(kvm" \
  "under TCG the run says its timing is emulated"
done_testing
