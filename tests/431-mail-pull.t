#!/usr/bin/env bash
# A pull request as the lists send it ([GIT PULL], the text git request-pull
# writes) is a submission of its own kind: the repository and ref it names
# are fetched by the agent from a git daemon on loopback, under the fetch
# policy, measured against the merge base with the tree, and the reply
# threads to the pull request.  Its inline diff is not applied as a patch;
# a URL the policy refuses is a 422.  A range of commits is measured one
# commit at a time, as a series' prefixes are (patch-K columns labelled with
# the commit, merges along their first parent), up to --max-prefixes
# commits; a longer range is one patch, and the reply says which it was.
# To a kernel tree a range is always one patch, and the reply says why.
. "$(dirname "$0")/lib/tap.sh"
. "$(dirname "$0")/lib/pg.sh"
. "$(dirname "$0")/lib/server.sh"
. "$(dirname "$0")/lib/agent.sh"

pg_start || bail_out "no postgres"
server_start --min-rounds 2 --max-rounds 4 || bail_out "no server"
register_agent
tree_init

# the locking tree's maintainer: a branch with two changes to kmutex, on top
# of a commit that is older than the tree's tip (the merge base is the base)
gc() { git -C "$T/pull" -c user.name=Maint -c user.email=maint@example.org "$@"; }
git clone -q "$T/tree" "$T/pull"
git -C "$T/pull" checkout -q -b locking-core HEAD~1
printf '\n/* the owner hands off to the first waiter */\n' >>"$T/pull/lockbench/locks/kmutex.c"
gc commit -qam 'locking/kmutex: say who hands off'
printf '/* and the waiter spins first */\n' >>"$T/pull/lockbench/locks/kmutex.c"
gc commit -qam 'locking/kmutex: say who spins'
git_daemon "$T" pull || bail_out "no git daemon"
gport=$GPORT
base=$(git -C "$T/tree" rev-parse HEAD~1)
{
  printf 'From maint Mon Sep 17 00:00:00 2001\nFrom: Maint <maint@example.org>\nTo: locking@vger.example.org\n'
  printf 'Subject: [GIT PULL] locking/core for next\nMessage-ID: <pull-1@example.org>\nDate: Mon, 30 Nov 2026 10:00:00 +0000\n\n'
  printf 'Please pull the locking tree.\n\n'
  git -C "$T/pull" request-pull "$base" "git://127.0.0.1:$gport/pull" locking-core 2>/dev/null
  # the diffstat's diff, inline, as some maintainers send it: not a patch to apply
  git -C "$T/pull" diff "$base" locking-core | sed 's/handoff/TYPO-THAT-DOES-NOT-APPLY/'
} >"$T/pull.mbox"
like "$(cat "$T/pull.mbox")" 'are available in the Git repository at:' "git request-pull wrote the pull request"

submit_mbox "$T/pull.mbox"
is "$CODE" 202 "the pull request is taken" || diag "$BODY"
psub=$SUB
api GET "/api/v1/submissions/$psub"
is "$(jq -r '.git.url + " " + .git.ref' <<<"$BODY")" "git://127.0.0.1:$gport/pull locking-core" \
  "as the repository and ref it names"
is "$(jq -r '[.patches[] | select(.seq > 0)] | length' <<<"$BODY")" 0 "its inline diff is no patch"
is "$(jq -r '.patches[0].message_id' <<<"$BODY")" "<pull-1@example.org>" "the mail is kept as its seq 0"

# two commits, more than this agent measures one at a time: one patch
LOCKLAB_FETCH_ALLOW="127.0.0.1:$gport" "$BIN/locklab-agent" --server "$URL" --token "$AGENT_TOKEN" \
  --workdir "$T/agent" --native-tree "$T/tree" --max-prefixes 1 --once >"$T/agent.log" 2>&1
ok $? "the agent runs the pull request's job" || diag "$(tail -n 20 "$T/agent.log")"
like "$(cat "$T/agent.log")" 'the range has 2 commits, more than 1 \(--max-prefixes\): measured as one patch' \
  "a range longer than --max-prefixes is one patch"
api GET "/api/v1/submissions/$psub"
is "$(jq -r .state <<<"$BODY")" done "the pull request is done" || diag "$(tail -n 20 "$T/agent.log")"
like "$(jq -r .verdict <<<"$BODY")" '^(no-change|improvement|regression|inconclusive)$' "with a verdict"
like "$(cat "$T/agent.log")" 'measuring pthread,kmutex' "the pulled commit is measured on the lock it touches"
like "$(cat "$T/agent.log")" "base ${base:0:12}" "against the merge base with the tree, not the tree's tip"
api GET "/api/v1/submissions/$psub/reply"
is "$CODE" 200 "there is a reply"
like "$BODY" $'In-Reply-To: <pull-1@example.org>' "threaded to the pull request"
like "$BODY" 'Subject: Re: \[GIT PULL\] locking/core for next' "under its subject"
like "$(tr -s ' \n' ' ' <<<"$BODY")" "commits: the pulled range's 2 commits, measured as one patch" \
  "the reply says the range was measured as one patch"
api GET "/api/v1/submissions/$psub/results"
is "$(jq -r '[.results[].variant] | unique | join(" ")' <<<"$BODY")" "base patched" "no per-commit variants"

# three commits, the last a merge of a side branch (a README change): each
# commit along the first parents is measured, as a series' prefixes are
gc checkout -q -b side "$base"
printf 'a note\n' >>"$T/pull/README.md"
gc commit -qam 'README: a note'
gc checkout -q -b locking-urgent "$base"
printf '\n/* urgent: the owner hands off */\n' >>"$T/pull/lockbench/locks/kmutex.c"
gc commit -qam 'locking/kmutex: an urgent note'
# code this time (one nop before kmutex_lock's compare-and-swap): an image of its own
sed -i '/^static void kmutex_lock(void \*p)$/,/atomic_compare_exchange/ s|^\(\t/\* acquire: pairs\)|\t__asm__ volatile("nop");\n\1|' \
  "$T/pull/lockbench/locks/kmutex.c"
grep -q 'volatile("nop")' "$T/pull/lockbench/locks/kmutex.c" || diag "the nop was not put in kmutex_lock"
gc commit -qam 'locking/kmutex: another urgent note'
gc merge -q --no-ff -m 'Merge branch side' side
c1=$(git -C "$T/pull" rev-parse --short=12 locking-urgent~2)
c2=$(git -C "$T/pull" rev-parse --short=12 locking-urgent~1)
{
  printf 'From maint Mon Sep 17 00:00:00 2001\nFrom: Maint <maint@example.org>\nTo: locking@vger.example.org\n'
  printf 'Subject: [GIT PULL] locking/urgent\nMessage-ID: <pull-3@example.org>\nDate: Mon, 30 Nov 2026 11:00:00 +0000\n\n'
  git -C "$T/pull" request-pull "$base" "git://127.0.0.1:$gport/pull" locking-urgent 2>/dev/null
} >"$T/urgent.mbox"
submit_mbox "$T/urgent.mbox"
is "$CODE" 202 "the second pull request is taken" || diag "$BODY"
usub=$SUB
LOCKLAB_FETCH_ALLOW="127.0.0.1:$gport" "$BIN/locklab-agent" --server "$URL" --token "$AGENT_TOKEN" \
  --workdir "$T/agent" --native-tree "$T/tree" --once >"$T/agent2.log" 2>&1
ok $? "the agent runs it" || diag "$(tail -n 20 "$T/agent2.log")"
like "$(cat "$T/agent2.log")" "patch-1 is commit 1 of 3 of the range: $c1 locking/kmutex: an urgent note" \
  "the first commit is patch-1"
like "$(cat "$T/agent2.log")" "patched is commit 3 of 3 of the range: [0-9a-f]{12} Merge branch side" \
  "the merge, along its first parent, is the last"
api GET "/api/v1/submissions/$usub"
is "$(jq -r .state <<<"$BODY")" done "it is done" || diag "$(tail -n 20 "$T/agent2.log")"
api GET "/api/v1/submissions/$usub/results"
is "$(jq -r '[.results[].variant] | unique | join(" ")' <<<"$BODY")" "base patch-1 patch-2 patched" \
  "a variant per commit"
is "$(jq -r '[.results[] | select(.variant == "patch-2") | .document.commit.label] | unique | join(" ")' <<<"$BODY")" \
  "$c2 locking/kmutex: another urgent note" "labelled with its commit"
api GET "/api/v1/submissions/$usub/reply"
is "$CODE" 200 "there is a reply"
like "$BODY" "commits: the pulled range's 3, each measured as a series' patch:" "listing the commits"
like "$BODY" "patch-1: $c1 locking/kmutex: an urgent note" "patch-1's"
like "$BODY" "patch-2: $c2 locking/kmutex: another urgent" "patch-2's"
like "$BODY" "patched: [0-9a-f]{12} Merge branch side" "and the last"
# where a change came in: a column per commit, each its change against the base
like "$BODY" 'by commit: each prefix.s change against the base' "the reply has the columns by commit"
bc=$(sed -n '/^by commit:/,/^\*: significant against/p' <<<"$BODY")
like "$(sed -n 2p <<<"$bc")" '^ +base +patch-1 +patch-2 +patched +metric$' "headed base, patch-1, patch-2, patched"
# a name too long for the line goes on its own, the figures below it
figs=$(grep -A1 -E '^  [a-z-]+\.kmutex\.' <<<"$bc" | grep -cE '^ +[0-9.e+-]+( +[-+][0-9.]+%[ *]?){3}$')
[[ $figs -ge 1 ]]
ok $? "a kmutex row has the base's mean and a change for each commit ($figs rows)"
awk 'length > 100 { bad = 1 } END { exit bad }' <<<"$BODY"
ok $? "no line of the reply is wider than 100 columns"
api GET "/api/v1/submissions/$usub/report?format=text"
is "$(sed -n '/^by commit:/,/^\*: significant against/p' <<<"$BODY")" "$bc" "the text report has the same columns by commit"

# to a kernel tree the range is one patch whatever its length: each commit
# would be a kernel build and the boots of every round.  The agent says so in
# its documents (two rounds posted here as an agent posts them: a kernel job
# is minutes of builds and boots, tests/520); the reply gives the reason.
api POST /api/v1/trees -H "Authorization: Bearer $ADMIN_TOKEN" -H 'Content-Type: application/json' \
  -d "$(jq -n --arg u "git://127.0.0.1:$gport/pull" '{name: "linux", url: $u, branch: "master", kind: "kernel"}')"
is "$CODE" 201 "a kernel tree is registered" || diag "$BODY"
sed 's/pull-3@/pull-4@/; s/locking\/urgent$/locking\/urgent for the kernel/' "$T/urgent.mbox" >"$T/kpull.mbox"
jq -Rs '{mbox: ., tree: "linux"}' "$T/kpull.mbox" >"$T/req.json"
api POST /api/v1/submissions -d @"$T/req.json"
is "$CODE" 202 "a pull request to the kernel tree is taken" || diag "$BODY"
ksub=$(jq -r .id <<<"$BODY")
claim "$AGENT_TOKEN"
kjob=$JOB
is "$(sql "SELECT submission_id FROM jobs WHERE id = $kjob")" "$ksub" "its job is claimed"
for r in 0 1 2 3; do
  [[ $(sql "SELECT state FROM jobs WHERE id = $kjob") == done ]] && break
  for v in base patched; do
    result_doc "$v" "$r" 1.0 quick >"$T/k.json"
    if [[ $v == patched ]]; then
      jq -c '.commit = {label: "0123456789ab locking: the last of three", range: 3}' \
        "$T/k.json" >"$T/kc.json" && mv "$T/kc.json" "$T/k.json"
    fi
    api POST "/api/v1/jobs/$kjob/results" -H "Authorization: Bearer $AGENT_TOKEN" \
      -H "Idempotency-Key: job-$kjob-$v-$r" -d @"$T/k.json"
    [[ $CODE == 200 || $CODE == 201 ]] || diag "round $r $v: $CODE $BODY"
  done
done
api GET "/api/v1/submissions/$ksub"
is "$(jq -r .state <<<"$BODY")" done "the kernel pull request is done"
api GET "/api/v1/submissions/$ksub/reply"
like "$(tr -s ' \n' ' ' <<<"$BODY")" \
  "commits: the pulled range's 3 commits, measured as one patch: a kernel tree's range is built and booted once, as its series are" \
  "the reply says a kernel tree's range is one patch, and why"

# a repository the fetch policy refuses is refused at once
sed 's|git://127.0.0.1:[0-9]*/pull|file:///etc/pull|; s/pull-1@/pull-2@/' "$T/pull.mbox" >"$T/bad.mbox"
submit_mbox "$T/bad.mbox"
is "$CODE" 422 "a pull request naming a file:// URL is refused"
like "$BODY" 'pull request file:///etc/pull' "saying which"
done_testing
