# tests/lib/agent.sh - a native tree, patch series and agents for one test;
# source after tap.sh, pg.sh and server.sh.
#   skip_without_bwrap   skip the test where bubblewrap does not work
#   tree_init            a clone of this repository at $T/tree (the native tree)
#   make_series NAME CMD...  run CMD in a scratch clone, commit, format-patch
#                        to $T/NAME.mbox (one commit per CMD; CMD is eval'd)
#   submit_mbox FILE [SUITE]  sets SUB (submission id)
#   agent_spawn NAME [FLAGS...]  start an agent in the background: AGENT_PID
#   unpaired             the test's agents run base and patched one after the
#                        other, not in lockstep (LOCKLAB_LOCKSTEP=off): for a
#                        test that judges no timing, whose rounds then take
#                        seconds where a lockstep round on a loaded machine
#                        takes a minute or more
#   wait_state SUB STATE... [SECONDS]  wait until the submission is in a state
#   git_daemon DIR REPO  git daemon exporting DIR on a free loopback port
#                        (GPORT), stopped when the test ends; waits for REPO
#   listen_loopback FILE  a listener on a free loopback port (LPORT) that
#                        writes one line per connection to FILE
#   answer_proxy VAR LOG [MATCH COUNT | --hold REGEX SECONDS]
#                        tests/lib/swallowproxy.py in front of the server
#                        ($URL) on a free loopback port; sets VAR to its URL
#   kernel_cache_share SRC  the kernel tree's own builds (tests/500, 540) copied
#                        into the agents' machine cache where it has none: sets
#                        KCACHE, KEY (REV-CFG) and DKEY (REV-CFG-debug)
#   kernel_bases_build SRC  the measuring and debug base kernels of SRC built or
#                        brought up to date in place, the seconds printed (the
#                        kernel benches, before kernel_cache_share)
AGENT_FLAGS=${AGENT_FLAGS:-}

kernel_bases_build() {
  local v t0
  t0=$(date +%s)
  for v in "" --debug; do
    "$BIN/lockbench" kernel build $v --tree "$1" >"$T/base$v.out" 2>&1 ||
      { echo "the base kernel ($v) does not build:"; tail -n 20 "$T/base$v.out"; return 1; }
  done
  echo "base kernels (measuring and debug) built or up to date: $(($(date +%s) - t0)) s"
}

# kernel_cache_share SRC: the agent keys a base kernel REV-CFG (CFG the first 12 digits of
# the fragment's SHA-256) and the debug base REV-CFG-debug (of the fragment, then
# locklab-debug.config); share SRC/locklab-out and SRC/locklab-debug-out (about 100 MB
# each, brought up to date first) rather than build either a second time.
kernel_cache_share() {
  local src=$1 rev kdir
  KCACHE=${LOCKLAB_CACHE:-/var/cache/locklab}/kernels
  rev=$(git -C "$src" rev-parse HEAD)
  kdir=$TOP/lockbench/kernel
  KEY=$rev-$(sha256sum "$kdir/locklab.config" | cut -c1-12)
  DKEY=$rev-$(cat "$kdir/locklab.config" "$kdir/locklab-debug.config" | sha256sum | cut -c1-12)-debug
  _kernel_share "$src" "$KEY" locklab-out
  _kernel_share "$src" "$DKEY" locklab-debug-out --debug
}

_kernel_share() { # SRC KEY OUTDIR [--debug]
  if [[ ! -f $KCACHE/$2/arch/x86/boot/bzImage && -f $1/$3/arch/x86/boot/bzImage ]] &&
    "$BIN/lockbench" kernel build ${4:+"$4"} --tree "$1" >"$T/share-$3.out" 2>&1; then
    mkdir -p "$KCACHE" && rm -rf "$KCACHE/$2.tmp" && cp -a "$1/$3" "$KCACHE/$2.tmp" &&
      mv "$KCACHE/$2.tmp" "$KCACHE/$2" && diag "the agent's base $2 is shared with the tree's $3"
  fi
}

# skip_without_bwrap: skip the whole test where bubblewrap does not work
skip_without_bwrap() {
  bwrap --ro-bind / / --dev /dev --proc /proc --unshare-all --new-session --die-with-parent true 2>/dev/null &&
    return 0
  echo "1..0 # SKIP bubblewrap does not work on this machine (the agent refuses to run submissions here)"
  exit 0
}

tree_init() {
  git clone -q "$TOP" "$T/tree"
  git -C "$T/tree" config user.name Dev
  git -C "$T/tree" config user.email dev@example.org
}

make_series() {
  local name=$1 n=0 d="$T/work-$1"
  shift
  rm -rf "$d"
  git clone -q "$T/tree" "$d"
  for cmd in "$@"; do
    (cd "$d" && eval "$cmd") || { diag "series $name: '$cmd' failed"; return 1; }
    n=$((n + 1))
    git -C "$d" -c user.name=Dev -c user.email=dev@example.org commit -qam "locking: $name step $n" || return 1
  done
  git -C "$d" format-patch -q --stdout --cover-letter -"$n" >"$T/$name.mbox" 2>/dev/null ||
    git -C "$d" format-patch -q --stdout -"$n" >"$T/$name.mbox"
  [[ $n -gt 1 ]] || git -C "$d" format-patch -q --stdout -1 >"$T/$name.mbox"
}

git_daemon() {
  local i
  GPORT=$(free_port)
  git daemon --export-all --base-path="$1" --listen=127.0.0.1 --port="$GPORT" --reuseaddr \
    >"$T/git-daemon.log" 2>&1 &
  at_exit "kill $!"
  for ((i = 0; i < 50; i++)); do git ls-remote "git://127.0.0.1:$GPORT/$2" >/dev/null 2>&1 && return 0; sleep 0.1; done
  return 1
}

submit_mbox() {
  local suite=${2:-smoke}
  api POST /api/v1/submissions -H 'Content-Type: application/json' \
    -d "$(jq -n --rawfile m "$1" --arg s "$suite" '{mbox: $m, suites: [$s]}')"
  SUB=$(jq -r .id <<<"$BODY")
  [[ $CODE == 202 ]] || diag "submit $1: $CODE $BODY"
}

unpaired() { export LOCKLAB_LOCKSTEP=off; }

agent_spawn() {
  local name=$1
  shift
  "$BIN/locklab-agent" --server "$URL" --token "$AGENT_TOKEN" --workdir "$T/agent-$name" \
    --native-tree "$T/tree" --poll 1 $AGENT_FLAGS "$@" >>"$T/agent-$name.log" 2>&1 &
  AGENT_PID=$!
  at_exit "kill -9 $AGENT_PID 2>/dev/null"
}

# state of a submission
sub_state() { curl -s "$URL/api/v1/submissions/$1" | jq -r .state; }

wait_state() {
  local sub=$1 secs=${!#} i st
  local states=("${@:2:$#-2}")
  for ((i = 0; i < secs * 2; i++)); do
    st=$(sub_state "$sub")
    for s in "${states[@]}"; do [[ $st == "$s" ]] && return 0; done
    sleep 0.5
  done
  diag "submission $sub is '$st' after ${secs}s, wanted ${states[*]}"
  return 1
}

listen_loopback() {
  local i
  LPORT=$(free_port)
  python3 - "$LPORT" "$1" <<'PY' >/dev/null 2>&1 &
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(16)
open(sys.argv[2], "w").close()
while True:
    c, a = s.accept()
    open(sys.argv[2], "a").write("connection from %s\n" % (a,)); c.close()
PY
  at_exit "kill $!"
  for ((i = 0; i < 50; i++)); do [[ -e $1 ]] && break; sleep 0.1; done
}

answer_proxy() {
  local p i
  p=$(free_port)
  python3 "$TOP/tests/lib/swallowproxy.py" "$p" "${URL##*:}" "$2" "${@:3}" &
  at_exit "kill $!"
  for ((i = 0; i < 50; i++)); do [[ -e $2 ]] && break; sleep 0.1; done
  printf -v "$1" '%s' "http://127.0.0.1:$p"
}
