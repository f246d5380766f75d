# tests/lib/track.sh - pushes for the tracker's tests; source after tap.sh.
#   track_upstream PORT
#       a bare clone of this repository at $T/up.git served by git daemon on
#       127.0.0.1:PORT (its URL in UP; stopped when the test ends) and a
#       clone of it at $T/work to push from; C0 its head
#   track_branch WORK BASE BRANCH N STEP [SLOWDOWN]
#       N commits on BASE as BRANCH in the clone WORK, each appending a
#       comment to lockbench/locks/futex3.c (so an agent measures futex3);
#       commit STEP (0: none) also slows futex3's lock path down: a busy loop
#       of 400 iterations (SLOWDOWN spin, the default: several hundred ns a
#       pair, from about 20) or a global atomic counter bumped on every lock
#       (atomic: about +30% uncontended, what a counter added to a lock's
#       fast path costs).  Their hashes in C[BRANCH.n], n = 1..N.
declare -A C
track_upstream() {
  local i
  git clone -q --bare "$TOP" "$T/up.git"
  git -C "$T/up.git" config uploadpack.allowReachableSHA1InWant true
  git daemon --export-all --base-path="$T" --listen=127.0.0.1 --port="$1" \
    --reuseaddr >"$T/git-daemon.log" 2>&1 &
  at_exit "kill $!"
  UP="git://127.0.0.1:$1/up.git"
  for ((i = 0; i < 50; i++)); do git ls-remote "$UP" >/dev/null 2>&1 && break; sleep 0.1; done
  git clone -q "$T/up.git" "$T/work"
  git -C "$T/work" config user.name "Dev $RANDOM"
  git -C "$T/work" config user.email dev@example.org
  C0=$(git -C "$T/work" rev-parse HEAD)
}
track_branch() {
  local w=$1 base=$2 b=$3 N=$4 step=$5 how=${6:-spin} n msg f=lockbench/locks/futex3.c
  local head='(static void futex3_lock\(void \*p\)\n\{\n)'
  git -C "$w" checkout -q -B "$b" "$base"
  for ((n = 1; n <= N; n++)); do
    msg="futex3: comment $n"
    if [[ $n == "$step" && $how == atomic ]]; then
      perl -0pi -e "s/$head/static atomic_ulong futex3_taken;\n\n\$1\tatomic_fetch_add(&futex3_taken, 1);\n/" "$w/$f"
      msg="futex3: count the locks taken"
    elif [[ $n == "$step" ]]; then
      perl -0pi -e "s/$head/\$1\tfor (volatile int spin = 0; spin < 400; spin++)\n\t\t;\n/" "$w/$f"
      msg="futex3: wait a little before taking the lock"
    fi
    echo "/* $b change $n */" >>"$w/$f"
    git -C "$w" commit -qam "$msg"
    C[$b.$n]=$(git -C "$w" rev-parse HEAD)
  done
}
