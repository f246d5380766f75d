#!/usr/bin/env bash
# scripts/fuzz.sh - replay and fuzz the libFuzzer targets built by
# `make fuzz-build` (fuzz/README.md).
#
#   scripts/fuzz.sh TARGET...        (mbox, result, http, report)
#
# For each target: every input under fuzz/regressions/TARGET/ and the seed
# corpus fuzz/corpus/TARGET/ run once (a crash there fails at once); then
# FUZZ_SECONDS of fuzzing from the seed inputs, new inputs kept under
# $FUZZ_OUT/corpus/TARGET (the repository's corpus is only read) and a crash
# written to $FUZZ_OUT/crashes/TARGET/.  Prints per target:
#   fuzz TARGET: replay ok (N inputs)
#   fuzz TARGET: ok, 123456 executions in 12 s, 10288 exec/s
# or "... CRASH <file>"; libFuzzer's closing coverage (cov: edges, ft:
# features) and, for http, which mode ran follow.  Exits 1 when any target
# failed.
#
# The http target reaches PostgreSQL through LOCKLAB_FUZZ_DB (a scratch
# database: its tables are emptied).  When that is unset, a private cluster
# is made for the run (tests/lib/pg.sh: unix socket only, removed at the
# end); FUZZ_HTTP_DB=off fuzzes without a database instead.
set -uo pipefail
TOP=$(cd "$(dirname "$0")/.." && pwd)
FUZZ_BUILD=${FUZZ_BUILD:-$TOP/build-fuzz}
case "$FUZZ_BUILD" in /*) ;; *) FUZZ_BUILD="$TOP/$FUZZ_BUILD" ;; esac
FUZZ_SECONDS=${FUZZ_SECONDS:-300}
FUZZ_OUT=${FUZZ_OUT:-$FUZZ_BUILD/out}
# at most this many bytes per input; a unit slower than FUZZ_TIMEOUT s is a finding
declare -A max_len=([mbox]=65536 [result]=65536 [http]=16384 [report]=65536)
FUZZ_TIMEOUT=${FUZZ_TIMEOUT:-10}
failed=0

# The lines of a log that say why a run stopped: the sanitizers', libFuzzer's
# and the harness's own; the server's logged refusals ("sql failed", which
# bad input earns with a 4xx) are not a cause and would crowd them out.
fuzz_cause() {
  grep -E 'ERROR|SUMMARY|Running:|abort|runtime error|^fuzz_[a-z]*: ' "$1" |
    grep -v -e 'sql failed' -e ' mode ' | tail -n 8
}

# a private PostgreSQL cluster for the http target, through the tests' pg.sh
pg_private() {
  T=$(mktemp -d "${TMPDIR:-/tmp}/locklab-fuzz-pg.XXXXXX") || return 1
  chmod 755 "$T"
  _pg_cleanups=()
  at_exit() { _pg_cleanups+=("$1"); }
  diag() { printf '%s\n' "$@" | sed 's/^/# /' >&2; }
  trap 'for c in "${_pg_cleanups[@]}"; do eval "$c" >/dev/null 2>&1; done; rm -rf "$T"' EXIT
  # shellcheck source=tests/lib/pg.sh
  source "$TOP/tests/lib/pg.sh"
  pg_start fuzz-pg || return 1
  export LOCKLAB_FUZZ_DB=$LOCKLAB_DB
}
if [[ " $* " == *" http "* && -z ${LOCKLAB_FUZZ_DB:-} && ${FUZZ_HTTP_DB:-auto} != off ]]; then
  pg_private || { echo "fuzz http: cannot start a private PostgreSQL (FUZZ_HTTP_DB=off fuzzes without)"; exit 1; }
fi
[[ ${FUZZ_HTTP_DB:-auto} == off ]] && unset LOCKLAB_FUZZ_DB

for t in "$@"; do
  bin=$FUZZ_BUILD/fuzz/fuzz-$t
  if [[ ! -x $bin ]]; then
    echo "fuzz $t: no $bin (make fuzz-build)"
    failed=1
    continue
  fi
  mkdir -p "$FUZZ_OUT/corpus/$t" "$FUZZ_OUT/crashes/$t" "$FUZZ_OUT/log"
  log=$FUZZ_OUT/log/$t.log
  inputs=()
  for d in "$TOP/fuzz/regressions/$t" "$TOP/fuzz/corpus/$t"; do
    [[ -d $d ]] && while IFS= read -r f; do inputs+=("$f"); done < <(find "$d" -type f | sort)
  done
  if [[ ${#inputs[@]} -gt 0 ]]; then
    if "$bin" -timeout="$FUZZ_TIMEOUT" -rss_limit_mb=2048 "${inputs[@]}" >"$log.replay" 2>&1; then
      echo "fuzz $t: replay ok (${#inputs[@]} inputs)"
    else
      echo "fuzz $t: replay FAILED ($log.replay):"
      fuzz_cause "$log.replay" | sed 's/^/  /'
      failed=1
      continue
    fi
  fi
  [[ $FUZZ_SECONDS -gt 0 ]] || continue
  rm -f "$FUZZ_OUT/crashes/$t"/*
  dict=()
  [[ -f $TOP/fuzz/$t.dict ]] && dict=(-dict="$TOP/fuzz/$t.dict")
  "$bin" -max_total_time="$FUZZ_SECONDS" -timeout="$FUZZ_TIMEOUT" -rss_limit_mb=2048 \
    -max_len="${max_len[$t]:-65536}" -print_final_stats=1 -close_fd_mask=1 "${dict[@]}" \
    -artifact_prefix="$FUZZ_OUT/crashes/$t/" \
    "$FUZZ_OUT/corpus/$t" "$TOP/fuzz/corpus/$t" >"$log" 2>&1
  rc=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
  crash=$(find "$FUZZ_OUT/crashes/$t" -type f | head -n 1)
  # "#2490	DONE   cov: 1767 ft: 3994 corp: ..." -> "cov 1767 ft 3994"
  cov=$(sed -n 's/^#[0-9]*[[:space:]]*DONE *cov: \([0-9]*\) ft: \([0-9]*\).*/cov \1 ft \2/p' "$log" | tail -n 1)
  mode=$(sed -n 's/^fuzz_http: \([a-z-]*\) mode.*/, \1 mode/p' "$log" | head -n 1)
  if [[ $rc -eq 0 && -z $crash && -n $runs ]]; then
    echo "fuzz $t: ok, $runs executions in $FUZZ_SECONDS s, $rate exec/s${cov:+, $cov}$mode"
  else
    echo "fuzz $t: CRASH ${crash:-(exit $rc, no artifact)} after ${runs:-?} executions ($log):"
    fuzz_cause "$log" | sed 's/^/  /'
    failed=1
  fi
done
exit $failed
