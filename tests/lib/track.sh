# tests/lib/track.sh - pushes for the tracker's tests; source after tap.sh.
#   track_branch WORK BASE BRANCH N STEP [SLOWDOWN]
#       N commits on BASE as BRANCH in the clone WORK, each appending a
#       comment to lockbench/locks/futex3.c (so an agent measures futex3);
#       commit STEP (0: none) also slows futex3's lock path down: a busy loop
#       of 400 iterations (SLOWDOWN spin, the default: several hundred ns a
#       pair, from about 20) or a global atomic counter bumped on every lock
#       (atomic: about +30% uncontended, what a counter added to a lock's
#       fast path costs).  Their hashes in C[BRANCH.n], n = 1..N.
declare -A C
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
