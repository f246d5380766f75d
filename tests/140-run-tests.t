#!/usr/bin/env bash
# scripts/run-tests.sh counts what it runs honestly: a skipped check is
# skipped, not passed, and the closing line says how many of each.
. "$(dirname "$0")/lib/tap.sh"

mkdir -p "$T/t" "$T/out"
cat >"$T/t/a.t" <<'T'
#!/usr/bin/env bash
. "$TOP/tests/lib/tap.sh"
ok 0 "a check that ran"
skip "a check that could not run" "no such tool"
ok 0 "an old-style skip # SKIP not installed"
done_testing
T
cat >"$T/t/b.t" <<'T'
#!/usr/bin/env bash
echo "1..0 # SKIP nothing to test here"
T
chmod +x "$T/t/a.t" "$T/t/b.t"
out=$(cd "$TOP" && TOP="$TOP" RUN_TESTS_OUT="$T/out" RUN_TESTS_TAP="$T/t/a.t $T/t/b.t" \
  scripts/run-tests.sh 2>&1)
ok $? "a run with skips and no failure exits 0"
like "$out" "^1 passed, 0 failed, 3 skipped$" "the closing line counts 1 pass and 3 skips (two checks, one script)"
like "$out" "a check that could not run # SKIP no such tool" "and lists what was skipped"

cat >"$T/t/c.t" <<'T'
#!/usr/bin/env bash
. "$TOP/tests/lib/tap.sh"
ok 1 "a check that failed"
skip "skipped" "why"
done_testing
T
chmod +x "$T/t/c.t"
out=$(cd "$TOP" && TOP="$TOP" RUN_TESTS_OUT="$T/out" RUN_TESTS_TAP="$T/t/c.t" scripts/run-tests.sh 2>&1)
is $? 1 "a failing check fails the run"
like "$out" "^0 passed, 1 failed, 1 skipped$" "and a skip never makes up a pass"
done_testing
