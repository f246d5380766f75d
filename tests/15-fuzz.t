#!/usr/bin/env bash
# libFuzzer targets (fuzz/README.md), briefly: the mail parser, the result
# document validator, the HTTP request path and the report renderer.  Each
# target's regression inputs (every crash fuzzing found, kept after its fix)
# and seed corpus are replayed, then it is fuzzed FUZZ_SECONDS (default 12)
# under ASan + UBSan; executions per second and in all are printed.  `make
# fuzz` runs the same for as long as asked.  Without clang's libFuzzer the
# checks are skipped, not passed.
source "$(dirname "$0")/lib/tap.sh"
FUZZ_SECONDS=${FUZZ_SECONDS:-12}
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

# the HTTP harness really reaches the routes: a static page, a 405 with the
# method list, a traversal refused, an oversized body refused before reading
out=$(FUZZ_HTTP_ECHO=1 "$FB/fuzz/fuzz-http" "$TOP/fuzz/corpus/http/static-index.http" \
  "$TOP/fuzz/corpus/http/traversal.http" "$TOP/fuzz/corpus/http/too-large.http" 2>&1)
like "$out" "HTTP/1.1 200 OK" "http harness: the static index is served"
like "$out" '"error":"bad-path"' "http harness: a path with .. is refused"
like "$out" "HTTP/1.1 413" "http harness: a declared oversized body gets 413"
printf 'POST /api/v1/agents HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n' >"$T/405.http"
out=$(FUZZ_HTTP_ECHO=1 "$FB/fuzz/fuzz-http" "$T/405.http" 2>&1)
like "$out" "Allow: GET" "http harness: a known path with another method gets 405 and Allow"

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
