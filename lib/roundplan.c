/*
 * roundplan.c - rounds planned from a machine's own noise, without a
 * database (roundplan.h).
 */
#include "roundplan.h"

#include <gsl/gsl_cdf.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

double plan_mde_test(double sd, int n, double alpha)
{
	double df = (double)n - 1;

	if (n < 2 || !(sd >= 0))
		return INFINITY;
	return (gsl_cdf_tdist_Qinv(alpha / 2, df) + gsl_cdf_tdist_Qinv(0.2, df)) * sd /
	       sqrt((double)n);
}

double plan_mde(double sd, int n, double alpha)
{
	return PLAN_POLICY_FACTOR * plan_mde_test(sd, n, alpha);
}

double plan_resolution(double sd, int n, double level)
{
	double df = (double)n - 1;

	if (n < 2 || !(sd >= 0) || !(level > 0 && level < 1))
		return INFINITY;
	return (gsl_cdf_tdist_Qinv(level, df) + gsl_cdf_tdist_Qinv(0.1, df)) * sd / sqrt((double)n);
}

double plan_level(double alpha, int min_rounds, int max_rounds)
{
	int step = min_rounds > 0 ? min_rounds : 1;

	/* an unplanned job's looks (server/verdicts.c) and the planned rounds' own */
	return alpha / ((max_rounds + step - 1) / step + 2);
}

/* "hot kmutex threads=2 ops_per_sec": how the plan names a row to people */
static void plan_row_name(char *out, size_t len, const char *workload, const char *lock,
                          const char *params, const char *metric)
{
	snprintf(out, len, "%s %s%s%s %s", workload, lock, *params ? " " : "", params, metric);
}

/*
 * The target MDE of a row: the contended one where its margin is the
 * contended one; a worst wait's is its margin.  A tail's per-round spread
 * (26-48% here) puts a 10% MDE past any budget, and a row whose target no
 * rounds reach made every job of a sleeping lock plan its limit up front.
 */
static double plan_target(const char *metric, double margin, const struct plan_settings *s)
{
	if (compare_metric_is_worst_wait(metric))
		return margin;
	return margin > COMPARE_MARGIN_LATENCY ? s->mde_contended : s->mde_latency;
}

json_t *plan_build(const struct profile_point *pts, size_t n, double round_s, const char *measured,
                   const struct plan_settings *s, int *first, int *cap)
{
	json_t *rows = json_array(), *notes = json_array();
	int resolvable_need = 0;
	double level = plan_level(s->alpha, s->min_rounds, s->max_rounds);

	*cap = s->max_rounds;
	if (round_s > 0 && (double)s->budget_s / round_s < *cap)
		*cap = (int)((double)s->budget_s / round_s);
	if (*cap < COMPARE_MIN_PAIRS)
		*cap = COMPARE_MIN_PAIRS; /* fewer rounds cannot test at all */
	for (size_t i = 0; i < n; i++) {
		const struct profile_point *p = &pts[i];
		const char *params = p->params ? p->params : "";
		double margin = compare_row_margin(p->metric, p->users, NULL),
		       target = plan_target(p->metric, margin, s);
		double mde_max = plan_mde(p->sd, *cap, s->alpha),
		       res_max = plan_resolution(p->sd, *cap, level);
		bool resolvable = res_max <= margin;
		int need = 0;
		char name[512];

		if (!compare_row_is_headline(p->workload, p->metric) ||
		    !strcmp(p->metric, "lockup"))
			continue;
		/*
		 * the first look: where one test reaches the target (a look
		 * finds, fresh rounds confirm); what the job can see at its
		 * limit is the policy's, mde_at_max
		 */
		for (int k = COMPARE_MIN_PAIRS; k <= *cap && !need; k++)
			if (plan_mde_test(p->sd, k, s->alpha) <= target &&
			    plan_resolution(p->sd, k, level) <= margin)
				need = k;
		if (resolvable && need > resolvable_need)
			resolvable_need = need;
		if (resolvable && !need)
			resolvable_need = *cap; /* inside its margin only at the limit */
		json_array_append_new(
		    rows, json_pack("{s:s, s:s, s:s, s:s, s:I, s:f, s:f, s:f, s:o, s:f, s:f, s:b}",
		                    "workload", p->workload, "lock", p->lock, "params", params,
		                    "metric", p->metric, "users", (json_int_t)p->users, "sd", p->sd,
		                    "target", target, "margin", margin, "rounds",
		                    need ? json_integer(need) : json_null(), "mde_at_max",
		                    isfinite(mde_max) ? mde_max : 0.0, "resolution_at_max",
		                    isfinite(res_max) ? res_max : 0.0, "resolvable", resolvable));
		if (!resolvable) {
			plan_row_name(name, sizeof(name), p->workload, p->lock, params, p->metric);
			json_array_append_new(
			    notes,
			    json_sprintf("this machine cannot resolve less than %.1f%% on %s "
			                 "(margin +-%g%%, at %d rounds)",
			                 res_max * 100, name, margin * 100, *cap));
		}
	}
	*first = resolvable_need ? resolvable_need : (s->min_rounds < *cap ? s->min_rounds : *cap);
	if (*first < COMPARE_MIN_PAIRS)
		*first = COMPARE_MIN_PAIRS;
	return json_pack("{s:i, s:i, s:f, s:f, s:i, s:f, s:f, s:s, s:o, s:o}", "rounds", *first,
	                 "max_rounds", *cap, "round_seconds", round_s, "level", level,
	                 "budget_seconds", s->budget_s, "target_latency", s->mde_latency,
	                 "target_contended", s->mde_contended, "measured", measured ? measured : "",
	                 "rows", rows, "unresolvable", notes);
}

int plan_first_look(int rounds, int min_rounds)
{
	return rounds > min_rounds && min_rounds >= COMPARE_MIN_PAIRS ? min_rounds : rounds;
}

int plan_next_look(int planned, int wanted, int cap, int min_rounds)
{
	int step = min_rounds > 0 ? min_rounds : 1;
	int w = planned > wanted ? planned : wanted + step;

	return w < cap ? w : cap;
}

/* An integer member of the plan in plan_text, 0 without a plan. */
static int plan_int(const char *plan_text, const char *key)
{
	json_t *plan = plan_text ? json_loads(plan_text, 0, NULL) : NULL;
	int n = (int)json_integer_value(json_object_get(plan, key));

	json_decref(plan);
	return n;
}

int plan_first_rounds(const char *plan_text)
{
	return plan_int(plan_text, "rounds");
}

int plan_max_rounds(const char *plan_text)
{
	return plan_int(plan_text, "max_rounds");
}

int plan_looks(const char *plan_text, int min_rounds)
{
	int rounds = plan_first_rounds(plan_text), cap = plan_max_rounds(plan_text);
	int looks = 1;

	if (rounds <= 0 || cap <= 0)
		return 0;
	for (int w = plan_first_look(rounds, min_rounds); w < cap; looks++)
		w = plan_next_look(rounds, w, cap, min_rounds);
	return looks + 1; /* and a confirmation */
}

void plan_compare_opts(const char *plan_text, int min_rounds, struct compare_opts *opts)
{
	int looks = plan_looks(plan_text, min_rounds), first = plan_first_rounds(plan_text);

	if (looks > opts->looks)
		opts->looks = looks;
	if (first >= COMPARE_MIN_PAIRS && (size_t)first < opts->min_samples)
		opts->min_samples = (size_t)first;
}

void plan_mark_rows(const char *plan_text, struct comparison *cmp)
{
	json_t *plan = plan_text ? json_loads(plan_text, 0, NULL) : NULL;
	json_t *rows = json_object_get(plan, "rows"), *o;
	size_t i;

	json_array_foreach(rows, i, o)
	{
		const char *wl = NULL, *lock = NULL, *params = NULL, *metric = NULL;
		double mde = 0;
		int resolvable = 1;

		if (json_unpack(o, "{s:s, s:s, s:s, s:s, s:F, s:b}", "workload", &wl, "lock", &lock,
		                "params", &params, "metric", &metric, "mde_at_max", &mde,
		                "resolvable", &resolvable) != 0 ||
		    resolvable)
			continue;
		/* what it cannot resolve: the equivalence's (plans before it: the MDE) */
		if (json_is_number(json_object_get(o, "resolution_at_max")))
			mde = json_number_value(json_object_get(o, "resolution_at_max"));
		for (size_t k = 0; k < cmp->nrows; k++) {
			struct compare_row *r = &cmp->rows[k];

			if (!strcmp(r->workload, wl) && !strcmp(r->lock, lock) &&
			    !strcmp(r->params_key ? r->params_key : "", params) &&
			    !strcmp(r->metric, metric))
				r->unresolvable = mde > 0 ? mde : INFINITY;
		}
	}
	json_decref(plan);
}

/*
 * The spread of row r's per-round relative change, recovered from its
 * paired interval at alpha over its pairs; NAN when it has none.  Every
 * pair at one ratio (a figure both sides measured alike in every round,
 * as a quick machine's fastest sample can be) is a spread of 0, not none.
 */
static double row_round_sd(const struct compare_row *r, double alpha)
{
	double half = (r->change_hi - r->change_lo) / 2, t, sd;

	if (r->verdict == VERDICT_LOCKUP || r->pairs < COMPARE_MIN_PAIRS)
		return NAN;
	if (isfinite(r->change_lo) && r->change_hi == r->change_lo)
		return 0;
	if (!(r->change_hi > r->change_lo))
		return NAN;
	t = gsl_cdf_tdist_Qinv(alpha / 2, (double)r->pairs - 1);
	sd = half * sqrt((double)r->pairs) / t;
	return isfinite(sd) && sd >= 0 && sd <= 10 ? sd : NAN;
}

size_t plan_mark_futile(struct comparison *cmp, int cap)
{
	size_t marked = 0;

	for (size_t i = 0; i < cmp->nrows; i++) {
		struct compare_row *r = &cmp->rows[i];
		double sd = row_round_sd(r, cmp->opts.alpha), df = (double)r->pairs - 1, sd_lo, mde;

		if (r->verdict != VERDICT_INCONCLUSIVE || r->control || !r->headline ||
		    !r->tested || r->unresolvable > 0 || isnan(sd) || cap < COMPARE_MIN_PAIRS)
			continue;
		sd_lo = sd * sqrt(df / gsl_cdf_chisq_Qinv(0.10, df));
		/*
		 * One spoiled round widens the interval as much as a noisy row
		 * does: give up only when the robust spread agrees (a 3% slowdown
		 * with one round at -50% in 5 got no-change at its first look).
		 */
		if (!(r->round_sd_robust >= 0))
			continue;
		if (r->round_sd_robust < sd_lo)
			sd_lo = r->round_sd_robust;
		mde = plan_resolution(sd_lo, cap, compare_eq_level(&cmp->opts));
		if (isfinite(mde) && mde > r->margin) {
			r->unresolvable = mde;
			marked++;
		}
	}
	return marked;
}

json_t *plan_profile_points(const struct comparison *cmp)
{
	json_t *points = json_array();

	for (size_t i = 0; i < cmp->nrows; i++) {
		const struct compare_row *r = &cmp->rows[i];
		double sd = row_round_sd(r, cmp->opts.alpha);

		if (isnan(sd))
			continue;
		json_array_append_new(
		    points,
		    json_pack("{s:s, s:s, s:s, s:s, s:I, s:f}", "workload", r->workload, "lock",
		              r->lock, "params", r->params_key ? r->params_key : "", "metric",
		              r->metric, "users", (json_int_t)r->users, "sd", sd));
	}
	return points;
}
