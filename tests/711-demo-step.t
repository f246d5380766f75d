#!/usr/bin/env bash
# make demo's steps (scripts/demo-step.sh): a step that works prints its
# title only and keeps its output in its log; one that fails prints the
# last lines of that output and where the rest is, and make demo stops with
# its exit code; DEMO_VERBOSE=1 prints the output as it comes.
. "$(dirname "$0")/lib/tap.sh"
STEP=$TOP/scripts/demo-step.sh

out=$("$STEP" "$T/ok.log" "building the programs" bash -c 'for i in $(seq 50); do echo "cc -c file$i.c"; done' 2>&1)
rc=$?
is "$rc" 0 "a step that works exits 0"
is "$(sed 's/\x1b\[[0-9;]*m//g' <<<"$out")" "== building the programs" "and prints its title alone"
is "$(wc -l <"$T/ok.log")" 50 "its output is kept in its log"

out=$("$STEP" "$T/bad.log" "building the programs" \
  bash -c 'for i in $(seq 100); do echo "cc -c file$i.c"; done; echo "file100.c:1: error: expected ;" >&2; exit 3' 2>&1)
rc=$?
is "$rc" 3 "a step that fails exits with its command's code"
like "$out" "file100\.c:1: error: expected ;" "it prints the error"
unlike "$out" "cc -c file1\.c$" "but not the whole output"
is "$(grep -c '^cc -c' <<<"$out")" 39 "only its last 40 lines"
like "$out" "demo: building the programs failed \(exit 3\); the whole output is in $T/bad\.log" \
  "and says where the rest is"

out=$(DEMO_VERBOSE=1 "$STEP" "$T/v.log" "building the programs" bash -c 'echo "cc -c one.c"' 2>&1)
like "$out" "^cc -c one\.c$" "DEMO_VERBOSE=1 prints the output"
[[ ! -e $T/v.log ]]; ok $? "and keeps no log of it"
done_testing
