#!/usr/bin/env bash
# Every real lock passes the correctness torture.
. "$(dirname "$0")/lib/tap.sh"
out=$("$BIN/lockbench" validate --duration-ms 400 2>&1); rc=$?
is "$rc" 0 "validate passes every lock"
for l in pthread pthread-adaptive tas ttas ticket mcs clh qspinlock futex3 kmutex-2009 kmutex parking; do
  like "$out" "^ok +$l " "$l: exclusion, trylock and wakeups hold"
done
like "$out" "12 locks checked, 0 failed" "the summary counts twelve locks"
done_testing
