#!/usr/bin/env bash
# Every real lock passes the correctness torture.
. "$(dirname "$0")/lib/tap.sh"
out=$("$BIN/lockbench" validate --duration-ms 400 2>&1); rc=$?
is "$rc" 0 "validate passes every lock"
for l in pthread pthread-adaptive tas ttas ticket mcs clh qspinlock futex3 kmutex-2009 kmutex parking; do
  like "$out" "^ok +$l " "$l: exclusion, trylock and wakeups hold"
done
like "$out" "12 locks checked, 0 failed" "the summary counts twelve locks"
like "$out" "^ok +kmutex +[0-9]+ acquisitions in 0.4 s \([0-9]+ threads, the fewest [0-9]+\)" \
  "each line says how many acquisitions stand behind it"

# without --duration-ms, a slow lock runs until it has enough acquisitions (or 5 s)
out=$("$BIN/lockbench" validate --locks ticket 2>&1); rc=$?
is "$rc" 0 "validate passes ticket at its own pace"
n=$(sed -n 's/^ok \+ticket \+\([0-9]*\) acquisitions in \([0-9.]*\) s.*/\1 \2/p' <<<"$out")
read -r acq secs <<<"$n"
ok "$([[ -n $acq && ( $acq -ge 2000 || $secs == 5.0 ) ]] && echo 0 || echo 1)" \
  "ticket: 2000 acquisitions or the full 5 s ($acq in $secs s)"
done_testing
