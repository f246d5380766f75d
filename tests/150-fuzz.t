#!/usr/bin/env bash
# libFuzzer targets (fuzz/README.md), briefly: the mail parser, the result
# document validator, the HTTP request path and the report renderer.  Each
# target's regression inputs (every crash fuzzing found, kept after its fix)
# and seed corpus are replayed, then it is fuzzed FUZZ_SECONDS (default 10)
# under ASan + UBSan; executions per second and in all are printed.  `make
# fuzz` runs the same for as long as asked.  The HTTP target runs against a
# private PostgreSQL cluster (LOCKLAB_FUZZ_DB), so the handlers past their
# first query are fuzzed; its no-database mode is checked too.  Without
# clang's libFuzzer the checks are skipped, not passed.
source "$(dirname "$0")/lib/tap.sh"
source "$(dirname "$0")/lib/pg.sh"
FUZZ_SECONDS=${FUZZ_SECONDS:-10}
targets=(mbox result http report)

probe() {
  echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }' >"$T/probe.c"
  clang -fsanitize=fuzzer,address,undefined "$T/probe.c" -o "$T/probe" >/dev/null 2>&1
}
if ! command -v clang >/dev/null 2>&1 || ! probe; then
  for t in "${targets[@]}"; do
    skip "$t: regression inputs and seeds replay clean" "clang with libFuzzer is not installed (scripts/deps.sh)"
    skip "$t: fuzzed $FUZZ_SECONDS s without a crash" "clang with libFuzzer is not installed (scripts/deps.sh)"
  done
  done_testing
  exit
fi

out=$(cd "$TOP" && make --no-print-directory fuzz-build 2>&1)
ok $? "make fuzz-build builds the four targets with clang, ASan and UBSan" || diag "$(tail -n 30 <<<"$out")"
FB=$TOP/build-fuzz

# without a database the HTTP harness still reaches the routes: a static
# page, a 405 with the method list, a traversal refused, an oversized body
# refused before reading, and a handler's first query answered 503
nodb() { env -u LOCKLAB_FUZZ_DB FUZZ_HTTP_ECHO=1 "$FB/fuzz/fuzz-http" "$@" 2>&1; }
out=$(nodb "$TOP/fuzz/corpus/http/static-index.http" "$TOP/fuzz/corpus/http/traversal.http" \
  "$TOP/fuzz/corpus/http/too-large.http" "$TOP/fuzz/corpus/http/db-submit-git.http")
like "$out" "no-database mode" "http harness: without LOCKLAB_FUZZ_DB it says it runs without a database"
like "$out" "HTTP/1.1 200 OK" "http harness: the static index is served"
like "$out" '"error":"bad-path"' "http harness: a path with .. is refused"
like "$out" "HTTP/1.1 413" "http harness: a declared oversized body gets 413"
like "$out" "HTTP/1.1 503" "http harness: without a database a submission stops at its first query (503)"
printf 'POST /api/v1/agents HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n' >"$T/405.http"
out=$(nodb "$T/405.http")
like "$out" "Allow: GET" "http harness: a known path with another method gets 405 and Allow"

# with a database (a private cluster) the handlers run to the end: the seed
# that submits, claims job 1 and posts three rounds finishes the job with a
# verdict and a reply mail; the tree seed stores a tree with the admin token
pg_start || bail_out "no PostgreSQL for the http target"
export LOCKLAB_FUZZ_DB=$LOCKLAB_DB
out=$(FUZZ_HTTP_ECHO=1 "$FB/fuzz/fuzz-http" "$TOP/fuzz/corpus/http/db-job-nochange.http" \
  "$TOP/fuzz/corpus/http/db-register.http" "$TOP/fuzz/corpus/http/db-trees.http" 2>&1)
like "$out" "database mode \(LOCKLAB_FUZZ_DB\): [0-9]+ migration" \
  "http harness: with LOCKLAB_FUZZ_DB it migrates the database and says so"
like "$out" '"stored":true' "http harness: the agent token's results are stored"
like "$out" '"state":"done".*"verdict":"no-change"' "http harness: the job runs to its verdict"
like "$out" '"kind":"reply","state":"held"' "http harness: the finished submission's reply is in the outbox"
like "$out" '"id":1,"name":"tip"' "http harness: the admin token registers a tree"
like "$out" '"id":4,"token"' "http harness: the admin token registers an agent"
# db-register made two agents more; the last input (db-trees) started from the three fuzz agents
is "$(sql 'SELECT count(*) FROM agents')" 3 "http harness: the tables are emptied before each input"

for t in "${targets[@]}"; do
  nreg=$(find "$TOP/fuzz/regressions/$t" -type f 2>/dev/null | wc -l)
  out=$(FUZZ_SECONDS=0 FUZZ_BUILD="$FB" FUZZ_OUT="$T/out" "$TOP/scripts/fuzz.sh" "$t" 2>&1)
  ok $? "$t: $nreg regression inputs and the seed corpus replay clean" || diag "$out"
  out=$(FUZZ_SECONDS=$FUZZ_SECONDS FUZZ_BUILD="$FB" FUZZ_OUT="$T/out" "$TOP/scripts/fuzz.sh" "$t" 2>&1)
  rc=$?
  line=$(grep -E "^fuzz $t: (ok|CRASH)" <<<"$out")
  ok $rc "$t: fuzzed $FUZZ_SECONDS s without a crash" || diag "$out"
  # "fuzz mbox: ok, 19365 executions in 10 s, 1760 exec/s"
  diag "${line:-$out}"
  like "$line" "ok, [1-9][0-9]* executions" "$t: the fuzzer ran (executions counted)"
done
done_testing
