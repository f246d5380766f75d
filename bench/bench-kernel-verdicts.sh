#!/usr/bin/env bash
# make bench-kernel-verdicts: kernel patches through the real server, PostgreSQL
# and an agent, each to its verdict, timed: what a locking developer gets back
# for a patch that breaks a lock's rules.  One server (--min-rounds 1
# --max-rounds 1), one kernel tree (the Debian 6.1 source,
# scripts/kernel-source.sh) registered by URL: served by git daemon on
# loopback, both server and agent allowed that one address and port
# (--fetch-allow), so the agent's first job clones it into its mirror;
# TREE=path registers the source by path instead (--allow-local-trees).  One
# submission a case, the agent run --once for each.  The base kernels
# (measuring and debug) are the machine's cache entries: built first when
# missing, and that time printed on its own; COLD=1 gives the agent an empty
# cache of its own instead, so the first case pays the clone and both base
# builds, as on an agent's first day.
#
# The cases (tests/kernel-patches/), CASES="name ..." to choose:
#   abba-pipe     fs/pipe.c takes two mutexes in opposite orders   -> splat
#   might-sleep   kernel/locking/mutex.c calls cond_resched() with
#                 the wait_lock held (sleeping in atomic context)  -> splat
#   lost-wakeup   kernel/locking/mutex.c never wakes the waiter it
#                 picked in __mutex_unlock_slowpath (hung task)   -> lockup
#   comment       a comment in kernel/locking/mutex.c              -> no-change or inconclusive
#   pull          a [GIT PULL] of two comment commits to mutex.c,
#                 served by the same git daemon: one patch         -> no-change or inconclusive
# For each: the verdict against the one wanted, the seconds from the agent's
# start to the verdict, what the agent said it ran and why, and the first
# line of the kernel's own words in the reply.
set -uo pipefail
. "$(dirname "$0")/../tests/lib/tap.sh"
. "$TOP/tests/lib/pg.sh"
. "$TOP/tests/lib/server.sh"
. "$TOP/tests/lib/agent.sh"
. "$TOP/bench/bench-machine.sh"
CASES=${CASES:-"abba-pipe might-sleep lost-wakeup comment pull"}
TREE=${TREE:-url}
COLD=${COLD:-0}
[[ $TREE == url || $TREE == path ]] || { echo "TREE is url or path, not '$TREE'"; exit 2; }

bench_machine_header
echo "commit: $(git -C "$TOP" rev-parse --short HEAD); tree by $TREE; cold: $COLD"
src=$("$TOP/scripts/kernel-source.sh" 2>"$T/src.err") || { cat "$T/src.err"; exit 1; }
if ((COLD)); then
  KCACHE=$T/kernel-cache
  echo "base kernels: none (an empty cache: the first case builds both)"
else
  kernel_bases_build "$src" || exit 1
  kernel_cache_share "$src"
fi
pg_start >/dev/null || exit 1
# one git daemon on loopback serves the tree (by URL) and the pull request's repository
mkdir -p "$T/served" && ln -s "$src" "$T/served/linux-6.1"
git_daemon "$T/served" linux-6.1 || { echo "git daemon does not serve $src"; exit 1; }
allow=127.0.0.1:$GPORT
agent_flags=(--fetch-allow "$allow")
if [[ $TREE == url ]]; then
  url=git://$allow/linux-6.1
  echo "tree: $url ($(du -sm "$src/.git" | cut -f1) MB of git objects)"
  server_start --min-rounds 1 --max-rounds 1 --fetch-allow "$allow" >/dev/null || exit 1
else
  url=$src
  server_start --min-rounds 1 --max-rounds 1 --fetch-allow "$allow" --allow-local-trees >/dev/null || exit 1
fi
register_agent
api POST /api/v1/trees -H "Authorization: Bearer $ADMIN_TOKEN" -H 'Content-Type: application/json' \
  -d "$(jq -n --arg u "$url" '{name: "linux-6.1", url: $u, branch: "master", kind: "kernel"}')"
[[ $CODE == 201 ]] || { echo "the kernel tree is not registered: $CODE $BODY"; exit 1; }

# case NAME: FILE PATCH-OR-EMPTY WANT (an ERE over verdicts) SUBJECT
case_of() {
  case $1 in
  abba-pipe) echo "fs/pipe.c abba-pipe.patch splat" ;;
  might-sleep) echo "kernel/locking/mutex.c might-sleep-mutex.patch splat" ;;
  lost-wakeup) echo "kernel/locking/mutex.c lost-wakeup-mutex.patch lockup" ;;
  comment) echo "kernel/locking/mutex.c - no-change|inconclusive" ;;
  pull) echo "kernel/locking/mutex.c pull no-change|inconclusive" ;;
  *) return 1 ;;
  esac
}

for name in $CASES; do
  read -r file patch want <<<"$(case_of "$name")" || { echo "$name: no such case"; continue; }
  k="$T/k-$name"
  [[ $name != pull ]] || k=$T/served/pull
  git clone -q --no-checkout "$src" "$k" && git -C "$k" checkout -q HEAD -- "$file"
  if [[ $patch == pull ]]; then
    # a maintainer's branch of two comment commits, and the mail git request-pull writes
    for i in 1 2; do
      sed -i "1s|^|/* locklab: comment $i of a pull request */\\n|" "$k/$file"
      git -C "$k" -c user.name=Maint -c user.email=maint@example.org commit -q -m "locking: comment $i" -- "$file"
    done
    git -C "$k" branch -q locking-core
    {
      printf 'From maint Mon Sep 17 00:00:00 2001\nFrom: Maint <maint@example.org>\n'
      printf 'Subject: [GIT PULL] locking/core\nMessage-ID: <pull-bench@example.org>\n\n'
      git -C "$k" request-pull "$(git -C "$src" rev-parse HEAD)" "git://$allow/pull" locking-core 2>/dev/null
    } >"$k.mbox"
  else
    if [[ $patch == - ]]; then
      sed -i '1s|^|/* locklab: a comment-only change */\n|' "$k/$file"
    else
      (cd "$k" && git apply) <"$TOP/tests/kernel-patches/$patch" || { echo "$name: the patch does not apply"; continue; }
    fi
    git -C "$k" -c user.name=Dev -c user.email=dev@example.org commit -q -m "locking: $name" -- "$file"
    git -C "$k" format-patch -q --stdout -1 >"$k.mbox"
  fi
  api POST /api/v1/submissions -H 'Content-Type: application/json' \
    -d "$(jq -n --rawfile m "$k.mbox" '{mbox: $m, tree: "linux-6.1", suites: ["smoke"]}')"
  [[ $CODE == 202 ]] || { echo "$name: not submitted: $CODE $BODY"; continue; }
  sub=$(jq -r .id <<<"$BODY")
  start=$(date +%s)
  "$BIN/locklab-agent" --server "$URL" --token "$AGENT_TOKEN" --workdir "$T/agent" \
    --lockbench "$BIN/lockbench" --kernel-cache "$KCACHE" "${agent_flags[@]}" --once >"$k.agent.log" 2>&1
  secs=$(($(date +%s) - start))
  # what the first case paid before its own work: the clone, the base builds
  paid=$(sed -nE 's/.*msg="(cloned the tree in [0-9]+ s|built kernel base(-debug)? in [0-9.]+ s)".*/\1/p' "$k.agent.log" |
    paste -sd';' - | sed 's/;/; /g')
  api GET "/api/v1/submissions/$sub"
  verdict=$(jq -r '.verdict // .state' <<<"$BODY")
  # "runs NAME: WHY" lines: each workload with the file that chose it, or "core"
  ran=$(sed -nE 's/.*msg="runs ([a-z0-9_:-]+): (the core[^"]*|([^ "]+)[^"]*)".*/\1 (\3)/p' "$k.agent.log" |
    sed 's/ ()$/ (core)/' | sort -u | paste -sd',' - | sed 's/,/, /g')
  curl -s "$URL/api/v1/submissions/$sub/reply" >"$k.reply"
  words=$(grep -m1 -oE '(BUG|WARNING|INFO): [^|]{0,90}|blocked for more than [0-9]+ seconds' "$k.reply" || true)
  # a range of commits: what the reply says of them
  commits=$(sed -n '/^commits: /,/^[^ ]/p' "$k.reply" | sed '$!b;/^commits: /!d' | tr -s ' \n' ' ')
  grep -qE "^($want)\$" <<<"$verdict" && got=as-wanted || got="WANTED $want"
  printf '%-12s %-13s %-16s %5d s\n' "$name" "$verdict" "$got" "$secs"
  fold -s -w 86 <<<"ran: ${ran:-?}" | sed 's/^/             /'
  printf '%-12s the kernel: %s\n' "" "${words:--}"
  [[ -z $paid ]] || fold -s -w 86 <<<"paid: $paid" | sed 's/^/             /'
  [[ -z $commits ]] || fold -s -w 86 <<<"$commits" | sed 's/^/             /'
done
echo "load average now $(cut -d' ' -f1-3 /proc/loadavg)"
