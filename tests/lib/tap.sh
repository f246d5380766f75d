# tests/lib/tap.sh - TAP helpers for the black-box tests; source it first.
#   plan N | ok COND-EXIT-STATUS "name" | is GOT WANT "name" | like TEXT REGEX "name"
#   skip "name" "why" | diag "text" | done_testing | bail_out "why" (stops the test)
# Every test gets a scratch directory $T (removed at exit unless KEEP=1) and
# the built programs under $BUILD (default build/).
set -u
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${BUILD:-build}
case "$BUILD" in /*) BIN="$BUILD" ;; *) BIN="$TOP/$BUILD" ;; esac
# agents measure no A/A noise in tests (it adds rounds to a first job, and the
# profile it posts would change the rounds later jobs plan) unless a test
# asks with --noise-interval or this variable (tests/390-agent-noise.t)
export LOCKLAB_NOISE_INTERVAL=${LOCKLAB_NOISE_INTERVAL:-0}
T=$(mktemp -d "${TMPDIR:-/tmp}/locklab-test.XXXXXX")
chmod 755 "$T"
_tap_n=0
_tap_failed=0
_tap_cleanups=()
_tap_exit() {
  local rc=$?
  local i
  for ((i = ${#_tap_cleanups[@]} - 1; i >= 0; i--)); do eval "${_tap_cleanups[$i]}" >/dev/null 2>&1 || true; done
  [[ "${KEEP:-0}" == 1 ]] && echo "# kept scratch dir $T" || rm -rf "$T"
  exit $rc
}
trap _tap_exit EXIT
# at_exit CMD: run CMD when the test ends, last registered first
at_exit() { _tap_cleanups+=("$1"); }
plan() { echo "1..$1"; }
# bail_out WHY: the test cannot go on (prove reports it); exits
bail_out() { echo "Bail out! $*"; exit 1; }
diag() { printf '%s\n' "$@" | sed 's/^/# /'; }
_tap_result() {
  _tap_n=$((_tap_n + 1))
  if [[ $1 -eq 0 ]]; then echo "ok $_tap_n - $2"; else echo "not ok $_tap_n - $2"; _tap_failed=$((_tap_failed + 1)); fi
  return "$1"
}
# ok STATUS NAME: passes when STATUS (an exit code) is 0
ok() { _tap_result "$1" "$2"; }
# skip NAME WHY: a check that could not run, reported as skipped (not passed)
skip() { _tap_n=$((_tap_n + 1)); echo "ok $_tap_n - $1 # SKIP $2"; }
is() {
  if [[ "$1" == "$2" ]]; then _tap_result 0 "$3"; else _tap_result 1 "$3"; diag "got:  '$1'" "want: '$2'"; return 1; fi
}
like() {
  if grep -qE -- "$2" <<<"$1"; then _tap_result 0 "$3"; else _tap_result 1 "$3"; diag "no match for /$2/ in:" "$(head -c 2000 <<<"$1")"; return 1; fi
}
unlike() {
  if grep -qE -- "$2" <<<"$1"; then _tap_result 1 "$3"; diag "unexpected match for /$2/ in:" "$(head -c 2000 <<<"$1")"; return 1; else _tap_result 0 "$3"; fi
}
done_testing() { echo "1..$_tap_n"; [[ $_tap_failed -eq 0 ]]; }
