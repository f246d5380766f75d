/*
 * plan.h - rounds planned from a machine class's own noise.
 *
 * Agents measure their suite's A/A spread (the same lockbench both sides, a
 * few paired rounds) and post it per suite point: the standard deviation of
 * the per-round paired relative change (POST /api/v1/noise).  The server
 * keeps the latest figure per (machine class, suite, point) in
 * noise_profiles.  When a job of a class with a profile is first claimed
 * (or, for a job claimed before its class had one, when its agent posts
 * the profile and no result of the job is in yet), plan_job works out for
 * every headline point the rounds that bring its minimum detectable effect
 * (MDE: alpha two-sided, power 0.8) down to the target (--plan-mde-latency
 * for single-thread rows, --plan-mde-contended for contended throughput and
 * fairness), within --plan-budget seconds and --max-rounds, and sets the
 * job's first rounds and its own limit from it (a plan past --min-rounds
 * looks first at --min-rounds, then at its rounds).
 * A point whose MDE at that limit is still above its margin
 * (compare_row_margin) cannot reach no-change on this machine: the plan
 * says so up front ("this machine cannot resolve less than X% on <row>"),
 * and such a row, when inconclusive, decides nothing (compare_row.
 * unresolvable): it is reported as not resolvable, never as no-change, and
 * does not keep a Tested-by.  Without a profile a job keeps the server's
 * --min-rounds / --max-rounds.  docs/api.md has the contract.
 */
#ifndef LOCKLAB_SERVER_PLAN_H
#define LOCKLAB_SERVER_PLAN_H

#include <libpq-fe.h>

#include "roundplan.h"

/*
 * Plan job_id's rounds from its machine class's profile, inside the
 * caller's transaction, once: a job that already has a plan or a result is
 * left alone, and so is one whose class has no profile for its suite.
 * Returns DB_OK or a db_tx code.
 */
int plan_job(PGconn *c, long long job_id);

#endif
