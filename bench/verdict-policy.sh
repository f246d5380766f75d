# bench/verdict-policy.sh - the server's round policy, for the bench scripts
# that measure how often verdicts are wrong (sourced, not run).
#
# policy_verdict RUNNER DIR: runs rounds with RUNNER VARIANT ROUND OUT (one
# side of one round, a lockbench-result/1 document to OUT) into DIR and prints
# "VERDICT ROUNDS FOUND", FOUND being the round from which a change found was
# confirmed (0 when nothing was found).  As server/results.c does: interleaved rounds (ABBA),
# MIN_ROUNDS first; a change found (a regression or improvement of a row that
# is no control) buys as many rounds again, which must confirm it (compare
# --confirm-from), and that comparison is the answer; otherwise an
# inconclusive comparison buys MIN_ROUNDS more, up to MAX_ROUNDS.  A lockup
# ends it at once.  The verdicts come from `lockbench compare`, the code the
# server calls.
#
# TEST (log or raw; empty: compare's default) is compare's --test, and
# judges by statistics alone (--ignore-image: sides that ran one image are
# still tested, which is what an A/A of the tests needs); TEST=image is
# what the server does: the log test, and one image both sides is a
# no-change of controls (lockbench image).  With
# TEST=log-cont (raw-cont) is an experiment on the policy, not the server's:
# a found change that the fresh rounds do not confirm buys MIN_ROUNDS more
# like an inconclusive look (up to MAX_ROUNDS) instead of ending
# inconclusive; it plans one look more for it.  With
# PAIR_RUNNER set (a function: ROUND BASE_OUT PATCHED_OUT), a round's two
# sides are run by it together (lockstep) instead of one RUNNER call each.
# PLAN set (a file: `lockbench plan`'s output), the rounds follow that plan
# as the server's do for a planned job: the first look at
# min(MIN_ROUNDS, the plan's rounds), then the plan's rounds, then
# MIN_ROUNDS more at a time up to the plan's max_rounds (plan_next_look in
# lib/roundplan.h), and compare judges with --plan (its looks,
# first rounds, and the rows the plan says this machine cannot resolve).
# With or without a plan compare gets the job's limit (--max-rounds): a row
# whose own rounds show it cannot be resolved by then decides nothing.
# REUSE=1 the rounds already in DIR are taken as they are and only missing
# ones are run: two policies judge the same documents (bench-verdicts'
# COMPARE_TESTS="raw log"); without it DIR's rounds are removed first.
# policy_opts: the options policy_verdict's compare judges with under TEST
# and PLAN (one a line; the looks are --looks'), which collect_rows of
# bench-verdicts shares, so that the verdicts it prints are the decision's.
policy_opts() {
  local cap=$MAX_ROUNDS
  case ${TEST:-} in
  image) ;;
  '') echo --ignore-image ;;
  *) printf '%s\n' --test "${TEST%-cont}" --ignore-image ;;
  esac
  if [[ -n ${PLAN:-} ]]; then
    cap=$(perl -MJSON::PP -0777 -ne 'print decode_json($_)->{max_rounds}, "\n"' "$PLAN")
    printf '%s\n' --plan "$PLAN" --min-rounds "$MIN_ROUNDS"
  fi
  # the job's limit: an inconclusive row whose spread cannot fit inside its
  # margin by then decides nothing (futility, as the server: compare --max-rounds)
  printf '%s\n' --max-rounds "$cap"
  # the looks the server plans: one every MIN_ROUNDS up to MAX_ROUNDS, one to confirm
  printf '%s\n' --looks "$(((MAX_ROUNDS + MIN_ROUNDS - 1) / MIN_ROUNDS + 1 + ${POLICY_CONT:-0}))"
}

policy_verdict() {
  local runner=$1 dir=$2 r=0 want=$MIN_ROUNDS confirm=0 bs ps json i cont=0
  local planned=0 cap=$MAX_ROUNDS
  local -a opt=()
  [[ ${TEST:-} == *-cont ]] && cont=1
  mapfile -t opt < <(POLICY_CONT=$cont policy_opts)
  if [[ -n ${PLAN:-} ]]; then
    read -r planned cap < <(perl -MJSON::PP -0777 -ne '$p = decode_json($_); print "$p->{rounds} $p->{max_rounds}\n"' "$PLAN")
    want=$planned
    ((planned > MIN_ROUNDS && MIN_ROUNDS >= 3)) && want=$MIN_ROUNDS
  fi
  [[ ${REUSE:-0} == 1 ]] || rm -f "$dir"/r-*.json
  while :; do
    while ((r < want)); do
      if [[ ! -s $dir/r-b$r.json || ! -s $dir/r-p$r.json ]]; then
        if [[ -n ${PAIR_RUNNER:-} ]]; then
          "$PAIR_RUNNER" $r "$dir/r-b$r.json" "$dir/r-p$r.json"
        elif ((r % 2 == 0)); then
          "$runner" base $r "$dir/r-b$r.json"; "$runner" patched $r "$dir/r-p$r.json"
        else
          "$runner" patched $r "$dir/r-p$r.json"; "$runner" base $r "$dir/r-b$r.json"
        fi
      fi
      r=$((r + 1))
    done
    bs=$dir/r-b0.json ps=$dir/r-p0.json
    for ((i = 1; i < r; i++)); do bs+=",$dir/r-b$i.json" ps+=",$dir/r-p$i.json"; done
    if ((confirm)); then
      json=$("$LB" compare "$bs" "$ps" --format json --confirm-from "$confirm" "${opt[@]}")
    else
      json=$("$LB" compare "$bs" "$ps" --format json "${opt[@]}")
    fi
    # found: a change in a row that decides; more: the comparison asks for more
    # rounds (more_rounds: a deciding row inconclusive that rounds may still settle)
    set -- $(perl -MJSON::PP -0777 -ne '
      my $d = decode_json($_); my ($found, $lockup) = (0, 0);
      for my $r (@{ $d->{rows} }) {
        $lockup = 1 if $r->{verdict} eq "lockup";
        $found = 1 if $r->{decides} && $r->{verdict} =~ /^(regression|improvement)$/;
      }
      print "$d->{overall} ", ($lockup ? 0 : $found), " ", ($d->{more_rounds} ? 1 : 0), "\n"' <<<"$json")
    if ((!confirm && $2)); then confirm=$r; want=$((2 * r)); continue; fi
    # -cont: a change the fresh rounds did not confirm is looked at again later
    if ((cont && confirm)) && [[ $1 == inconclusive ]] && ((r < cap)); then
      confirm=0; want=$((r + MIN_ROUNDS)); continue
    fi
    if ((!confirm && $3)) && ((want < cap)); then
      # the plan's rounds when not reached yet, else MIN_ROUNDS more; never past the cap
      want=$((planned > want ? planned : want + MIN_ROUNDS))
      ((want > cap)) && want=$cap
      continue
    fi
    echo "$1 $r $confirm"; return
  done
}

# fair_side VARIANT ROUND OUT: one side of the fairness case (bench-verdicts'
# fair, tests/160-lockbench-fairness.t): kmutex hands the lock to a waiter that starves (the 2016
# rewrite's handoff); kmutex-2009 has no handoff.  The patched side
# is kmutex-2009's long-hold run named kmutex, without an image (it is other
# code): what taking the handoff away from kmutex would measure.
fair_side() {
  local lock=kmutex
  [[ $1 == patched ]] && lock=kmutex-2009
  "$LB" run --suite quick --workloads long-hold --locks "$lock" --no-instructions \
    --variant "$1" --round "$2" --json "$3.raw" --quiet || return 1
  perl -MJSON::PP -0777 -ne 'my $d = decode_json($_); delete $d->{image};
    $_->{lock} = "kmutex" for @{$d->{runs}}; print encode_json($d)' "$3.raw" >"$3"
  rm -f "$3.raw"
}

# steal_side VARIANT ROUND OUT: one side of the starvation case
# (tests/160-lockbench-fairness.t): long-hold of kmutex, and on the patched
# side the test build's kmutex-woken-steal named kmutex (kmutex with one
# line changed: a woken waiter spins but never asks for the handoff).  Both
# from the test build (LB_TEST, default "$LB-test"), without an image: two
# builds of the code.  STEAL_PATCHED=kmutex makes it an A/A of that path.
steal_side() {
  local lock=kmutex
  [[ $1 == patched ]] && lock=${STEAL_PATCHED:-kmutex-woken-steal}
  "${LB_TEST:-$LB-test}" run --suite quick --workloads long-hold --locks "$lock" \
    --no-instructions --variant "$1" --round "$2" --json "$3.raw" --quiet || return 1
  perl -MJSON::PP -0777 -ne 'my $d = decode_json($_); delete $d->{image};
    $_->{lock} = "kmutex" for @{$d->{runs}}; print encode_json($d)' "$3.raw" >"$3"
  rm -f "$3.raw"
}
