/*
 * roundplan.h - rounds planned from a machine's own noise: the
 * part that needs no database, shared by the server (server/plan.c keeps
 * the profiles per machine class and plans its jobs), the agent (its noise
 * A/A becomes a profile here) and `lockbench plan` / `lockbench compare
 * --plan`, so that a bench or an operator judges rounds as the server does.
 *
 * A profile is, per headline suite point, the standard deviation of the
 * per-round paired relative change of an A/A (the same lockbench both
 * sides).  A plan is a JSON object: the rounds to ask for first ("rounds"),
 * the job's limit ("max_rounds"), and per row its sd, target MDE, margin,
 * the rounds at which one test reaches the target ("rounds", null when
 * none within the limit: the first look, plan_mde_test), the policy's MDE
 * at the limit ("mde_at_max", plan_mde), the smallest margin it can
 * show no-change inside at the limit ("resolution_at_max", plan_resolution)
 * and whether that is inside its margin ("resolvable"); "unresolvable" says
 * in words which rows this machine cannot resolve.  docs/api.md has the
 * contract.
 */
#ifndef LOCKLAB_ROUNDPLAN_H
#define LOCKLAB_ROUNDPLAN_H

#include <jansson.h>
#include <stddef.h>

#include "compare.h"

/* What a plan is made for: the server's options, or lockbench plan's. */
struct plan_settings {
	double alpha;         /* two-sided, of the paired test */
	int min_rounds;       /* the rounds a job asks for first, and its step */
	int max_rounds;       /* a job's limit */
	int budget_s;         /* seconds a planned job's rounds may take */
	double mde_latency;   /* target MDE of single-thread rows, relative */
	double mde_contended; /* target MDE of contended throughput / fairness */
};

/* One point of a profile. */
struct profile_point {
	const char *workload, *lock, *params, *metric;
	long long users; /* -1 when none */
	double sd;       /* of the per-round paired relative change */
};

/*
 * MDE of one paired test over n rounds whose per-round relative change has
 * standard deviation sd: (t(1 - alpha/2, n-1) + t(0.8, n-1)) * sd / sqrt(n).
 * Infinity below two rounds.  No job is one test: what a job can see is
 * plan_mde's.
 */
double plan_mde_test(double sd, int n, double alpha);

/*
 * How much larger than one test's MDE the change is that the server's
 * policy finds in 4 jobs of 5: a look every 5 rounds up to 20, BH over the
 * deciding rows at each, futility, and a finding confirmed one-sided on as
 * many fresh rounds.  A finding at an early look is confirmed on as few
 * rounds as found it, and both stages must pass, so the policy needs more
 * than the test alone.  Calibrated with bench/verdict_sim.c (the timed
 * rows' noise shapes: the change found in 80% of jobs is 1.6-1.75 times
 * plan_mde_test at 20 rounds; docs/verdicts.md, "The MDE a plan promises").
 */
#define PLAN_POLICY_FACTOR 1.75

/*
 * The MDE a plan promises and every reader prints ("the smallest change
 * it could have seen"): the change the policy as it runs finds in 4 jobs of
 * 5 when n rounds are its limit, PLAN_POLICY_FACTOR * plan_mde_test.
 */
double plan_mde(double sd, int n, double alpha);

/*
 * The resolution of an equivalence test over n rounds of spread sd at
 * one-sided level `level` (alpha / looks, as no-change is judged): the
 * smallest margin inside which an unchanged row's interval lies with
 * probability 0.8, (t(1 - level, n-1) + t(0.9, n-1)) * sd / sqrt(n).  A
 * row is resolvable when this is within its margin: for a no-change, the
 * test that asks the most (at level 0.05 / 6 it is 1.3 times plan_mde_test).
 * Infinity below two rounds or with a level outside (0, 1).
 */
double plan_resolution(double sd, int n, double level);

/*
 * The level a plan judges resolution at: alpha over an unplanned job's
 * looks (a look every min_rounds up to max_rounds, and a confirmation, as
 * server/verdicts.c) and one more, the planned rounds' own look, so never
 * above the level the job's comparison shares alpha at (plan_looks).
 */
double plan_level(double alpha, int min_rounds, int max_rounds);

/*
 * The plan of a profile of n points whose rounds take round_s seconds
 * (measured: when it was measured, UTC, or ""): a new JSON object, *first
 * and *cap set to the rounds to ask for first (the job's first look, see
 * plan_first_look) and the job's limit.  Points that are no headline
 * (compare_row_is_headline) are left out.  A point is resolvable when its
 * resolution at the limit (plan_resolution at plan_level) is inside its
 * margin; the rounds it needs are the fewest whose MDE is within its
 * target and whose resolution is within its margin.
 */
json_t *plan_build(const struct profile_point *pts, size_t n, double round_s, const char *measured,
                   const struct plan_settings *s, int *first, int *cap);

/*
 * The first look of a job planned for rounds: a plan past min_rounds looks
 * first at min_rounds, so that a change large enough to be found there is
 * confirmed as in an unplanned job; the planned rounds are the next look.
 */
int plan_first_look(int rounds, int min_rounds);

/*
 * The rounds a job that looked at wanted and wants more asks for next: its
 * plan's rounds (planned, 0 without a plan) when it has not reached them,
 * else min_rounds more; never past cap.  The one schedule the server asks
 * by and plan_looks counts.
 */
int plan_next_look(int planned, int wanted, int cap, int min_rounds);

/*
 * The looks a job planned by plan_text takes at most (its first look, its
 * planned rounds, a min_rounds step at a time to its limit) and one for a
 * confirmation; 0 without a plan.
 */
int plan_looks(const char *plan_text, int min_rounds);

/* The plan's first rounds (its "rounds"), 0 without a plan. */
int plan_first_rounds(const char *plan_text);

/* The plan's limit (its "max_rounds"), 0 without a plan. */
int plan_max_rounds(const char *plan_text);

/*
 * The options a comparison of a job planned by plan_text (may be NULL) is
 * judged with, from those of an unplanned one: no-change shares alpha over
 * the plan's looks when they are more, and a row is tested from the rounds
 * the plan asks for first when they are fewer than opts->min_samples.
 */
void plan_compare_opts(const char *plan_text, int min_rounds, struct compare_opts *opts);

/*
 * Mark the rows of cmp that plan_text (may be NULL) says this machine
 * cannot resolve: their compare_row.unresolvable is set to the resolution
 * at the job's limit (a plan made before resolution_at_max: its MDE).
 */
void plan_mark_rows(const char *plan_text, struct comparison *cmp);

/*
 * Futility, from a job's own rounds: mark the rows of cmp (as unresolvable,
 * with that MDE) that cannot reach no-change within cap rounds whatever
 * more rounds show.  A row is looked at when it is an inconclusive,
 * tested headline row of no control, not marked yet: the spread of its
 * per-round paired change is recovered from its interval (as
 * plan_profile_points does), taken at its 90% lower confidence bound
 * (sd * sqrt(df / chi2(0.9, df)), so that a spread seen large by chance
 * rarely stops a row), and when the resolution of that spread at cap
 * rounds (plan_resolution at cmp's alpha / looks, the level no-change is
 * judged at) is past the row's margin, its interval is unlikely to fit
 * inside the margin at cap rounds even around no change at all (a row is
 * marked with that resolution).  The row's robust
 * spread (compare_row.round_sd_robust, the MAD's) must say so too: it is
 * the smaller of the two that counts, so one spoiled round among good ones
 * asks for more rounds instead of giving the row up (a row without a
 * robust spread is never marked).  A profile plans from
 * a few A/A rounds (3 by default: 2 degrees of freedom); the job's own
 * rounds have more, and this reads them at every look.  Returns the rows
 * marked.
 */
size_t plan_mark_futile(struct comparison *cmp, int cap);

/*
 * The profile points of an A/A comparison of k paired rounds (cmp), as the
 * posted profile's "points": per row with a paired interval, the spread of
 * the per-round relative change recovered from it, sd = halfwidth *
 * sqrt(pairs) / t(1 - alpha/2, pairs - 1).  A new JSON array.
 */
json_t *plan_profile_points(const struct comparison *cmp);

#endif
