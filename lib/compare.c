/*
 * compare.c - base against patched.  Runs are grouped by point (workload,
 * lock, parameters) over every document of a side; each metric present on
 * both sides becomes a row with a paired t-test over rounds, of the log of
 * each round's ratio (range_test says why; no test at all
 * with fewer than COMPARE_MIN_PAIRS), and Benjamini-Hochberg runs over all
 * rows that were tested, or, when confirming, over the rounds that found a
 * change and then over the rounds that must confirm it.  No change is an
 * equivalence test of its own (TOST, cmp_equivalence()).  Lockups win over
 * everything.  The grouping by point is compare_gather.c, the tests and
 * verdicts compare_verdict.c; this file holds compare_results and the
 * questions asked of a comparison.
 */
#include "compare.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compare_internal.h"
#include "strutil.h"

const char *verdict_name(enum verdict v)
{
	switch (v) {
	case VERDICT_NO_CHANGE:
		return "no-change";
	case VERDICT_IMPROVEMENT:
		return "improvement";
	case VERDICT_REGRESSION:
		return "regression";
	case VERDICT_INCONCLUSIVE:
		return "inconclusive";
	case VERDICT_LOCKUP:
		return "lockup";
	case VERDICT_SPLAT:
		return "splat";
	}
	return "unknown";
}

void comparison_init(struct comparison *c)
{
	static const struct compare_opts def = COMPARE_OPTS_DEFAULT;
	memset(c, 0, sizeof(*c));
	c->opts = def;
}

static void row_release(struct compare_row *r)
{
	free(r->workload);
	free(r->lock);
	free(r->metric);
	free(r->unit);
	free(r->params_key);
	free(r->lockup_message);
	free(r->lockup_stacks);
}

void comparison_release(struct comparison *c)
{
	for (size_t i = 0; i < c->nrows; i++)
		row_release(&c->rows[i]);
	free(c->rows);
	for (size_t i = 0; i < c->nsplats; i++) {
		free(c->splats[i].key);
		free(c->splats[i].message);
		free(c->splats[i].lines);
		free(c->splats[i].boot);
	}
	free(c->splats);
	free(c->image);
	free(c->suite);
	free(c->machine.hostname);
	free(c->machine.model);
	free(c->machine.kernel);
	free(c->machine.guest_thresholds);
	comparison_init(c);
}

static int row_cmp(const void *a, const void *b)
{
	const struct compare_row *x = a, *y = b;
	int c;

	if ((c = strcmp(x->workload, y->workload)) != 0)
		return c;
	if ((c = strcmp(x->lock, y->lock)) != 0)
		return c;
	if ((c = strcmp(x->metric, y->metric)) != 0)
		return c;
	if (x->users != y->users)
		return x->users < y->users ? -1 : 1;
	return strcmp(x->params_key, y->params_key);
}

static void copy_machine(struct lb_machine *dst, const struct lb_machine *src)
{
	dst->hostname = strutil_xstrdup(src->hostname);
	dst->cpus = src->cpus;
	dst->model = strutil_xstrdup(src->model);
	dst->kernel = strutil_xstrdup(src->kernel);
	dst->guest_thresholds =
	    src->guest_thresholds ? strutil_xstrdup(src->guest_thresholds) : NULL;
}

/* A control only when every document of both sides names it one. */
/*
 * The image every document of both sides carries, or NULL when one lacks
 * it or two differ (a kernel run records none: its code under test is the
 * kernel's).
 */
static const char *shared_image(const struct lb_result *base, size_t nbase,
                                const struct lb_result *patched, size_t npatched)
{
	const char *img = nbase && npatched ? base[0].image : NULL;

	for (size_t d = 0; img && d < nbase; d++)
		if (!base[d].image || strcmp(base[d].image, img))
			return NULL;
	for (size_t d = 0; img && d < npatched; d++)
		if (!patched[d].image || strcmp(patched[d].image, img))
			return NULL;
	return img;
}

static bool is_control(const struct lb_result *base, size_t nbase, const struct lb_result *patched,
                       size_t npatched, const char *lock)
{
	for (size_t d = 0; d < nbase; d++)
		if (!result_is_control(&base[d], lock))
			return false;
	for (size_t d = 0; d < npatched; d++)
		if (!result_is_control(&patched[d], lock))
			return false;
	return nbase + npatched > 0;
}

int compare_results(const struct lb_result *base, size_t nbase, const struct lb_result *patched,
                    size_t npatched, const struct compare_opts *opts, struct comparison *out,
                    char *err, size_t errlen)
{
	static const struct compare_opts def = COMPARE_OPTS_DEFAULT;
	const struct compare_opts *o = opts ? opts : &def;
	struct points pts = {NULL, 0};
	struct stages *st = NULL;

	comparison_release(out);
	if (!(o->alpha > 0 && o->alpha < 1)) {
		strutil_errf(err, errlen, "alpha: expected a value between 0 and 1, got %g",
		             o->alpha);
		return -1;
	}
	if (o->confirm_from < 0) {
		strutil_errf(err, errlen, "confirm_from: expected a round >= 0, got %d",
		             o->confirm_from);
		return -1;
	}
	if (!(o->min_effect >= 0) || !(o->equiv_margin >= 0)) {
		strutil_errf(err, errlen, "min_effect and equiv_margin: expected values >= 0");
		return -1;
	}
	if (o->looks < 1) {
		strutil_errf(err, errlen, "looks: expected 1 or more, got %d", o->looks);
		return -1;
	}
	if ((nbase && !base) || (npatched && !patched)) {
		strutil_errf(err, errlen, "compare: missing documents");
		return -1;
	}
	out->opts = *o;
	out->base_rounds = (int)nbase;
	out->patched_rounds = (int)npatched;
	const struct lb_result *first = npatched ? &patched[0] : nbase ? &base[0] : NULL;
	out->suite = strutil_xstrdup(first && first->suite ? first->suite : "");
	if (first)
		copy_machine(&out->machine, &first->machine);
	cmp_gather_splats(out, patched, npatched, true);
	cmp_gather_splats(out, base, nbase, false);
	for (size_t i = 0; i < out->nsplats; i++)
		out->splats[i].new_in_patched =
		    out->splats[i].patched_fail && !out->splats[i].base_fail;
	if (out->nsplats)
		qsort(out->splats, out->nsplats, sizeof(*out->splats), cmp_splat_cmp);
	const char *img = shared_image(base, nbase, patched, npatched);
	if (img && !o->ignore_image) {
		out->identical_code = true;
		out->image = strutil_xstrdup(img);
	}

	for (size_t d = 0; d < nbase; d++)
		for (size_t i = 0; i < base[d].nruns; i++)
			cmp_add_run(&pts, BASE, &base[d].runs[i], base[d].round);
	for (size_t d = 0; d < npatched; d++)
		for (size_t i = 0; i < patched[d].nruns; i++)
			cmp_add_run(&pts, PATCHED, &patched[d].runs[i], patched[d].round);

	for (size_t i = 0; i < pts.n; i++) {
		const struct point *pt = &pts.v[i];
		bool locked = pt->side[BASE].lockups || pt->side[PATCHED].lockups;
		bool control =
		    out->identical_code || is_control(base, nbase, patched, npatched, pt->lock);
		size_t before = out->nrows;

		for (size_t k = 0; k < pt->side[PATCHED].nmetrics; k++) {
			const struct pmetric *pm = &pt->side[PATCHED].metrics[k];
			const struct pmetric *bm = NULL;
			for (size_t j = 0; j < pt->side[BASE].nmetrics; j++)
				if (strcmp(pt->side[BASE].metrics[j].name, pm->name) == 0)
					bm = &pt->side[BASE].metrics[j];
			if (!bm)
				continue;
			struct compare_row *r =
			    cmp_new_row(out, pt, pm->name, pm->unit, pm->higher_better);
			r->verdict = locked ? VERDICT_LOCKUP : VERDICT_INCONCLUSIVE;
			r->control = control;
			r->measured_runs = bm->runs + pm->runs;
			r->duet_runs = bm->duet_runs + pm->duet_runs;
			r->lockstep_runs = bm->lockstep_runs + pm->lockstep_runs;
			r->disturb_runs = bm->disturb_runs + pm->disturb_runs;
			r->repeated = bm->repeated + pm->repeated;
			r->disturb_limit_pct = bm->disturb_limit_pct > pm->disturb_limit_pct
			                           ? bm->disturb_limit_pct
			                           : pm->disturb_limit_pct;
			cmp_row_test(r, bm, pm, o);
			if (o->confirm_from > 0) {
				struct round_range found = {INT_MIN, o->confirm_from},
				                   again = {o->confirm_from, INT_MAX};
				struct stages *sr = cmp_stage_add(&st, out->nrows);
				cmp_range_test(bm, pm, found, r->margin, o, &sr->found);
				cmp_range_test(bm, pm, again, r->margin, o, &sr->again);
			}
		}
		if (locked && out->nrows == before) {
			struct compare_row *r = cmp_new_row(out, pt, "lockup", "", false);
			r->verdict = VERDICT_LOCKUP;
			r->control = control;
			if (o->confirm_from > 0)
				cmp_stage_add(&st, out->nrows);
		}
	}

	cmp_equivalence(out, o);
	if (o->confirm_from > 0)
		cmp_judge_confirmed(out, st, o);
	else
		cmp_judge(out, o);
	if (out->nrows)
		qsort(out->rows, out->nrows, sizeof(*out->rows), row_cmp);
	compare_notes_escalate(out);
	free(st);
	cmp_points_release(&pts);
	return 0;
}

static int verdict_rank(enum verdict v)
{
	switch (v) {
	case VERDICT_LOCKUP:
		return 5;
	case VERDICT_SPLAT:
		return 4;
	case VERDICT_REGRESSION:
		return 3;
	case VERDICT_INCONCLUSIVE:
		return 2;
	case VERDICT_IMPROVEMENT:
		return 1;
	case VERDICT_NO_CHANGE:
		return 0;
	}
	return 2;
}

double compare_row_margin(const char *metric, long long users, const struct compare_opts *opts)
{
	static const char *const throughput[] = {"ops_per_sec", "jpm", "writes_per_sec"};

	if (opts && opts->equiv_margin > 0)
		return opts->equiv_margin;
	if (!strcmp(metric, "instructions_per_pair"))
		return COMPARE_MARGIN_INSTRUCTIONS;
	if (compare_metric_is_worst_wait(metric))
		return COMPARE_MARGIN_WORST_WAIT;
	if (!compare_metric_is_headline(metric))
		return COMPARE_MARGIN_THROUGHPUT;
	for (size_t i = 0; i < sizeof(throughput) / sizeof(throughput[0]); i++)
		if (!strcmp(metric, throughput[i]) && users > 1)
			return COMPARE_MARGIN_THROUGHPUT;
	return COMPARE_MARGIN_LATENCY;
}

bool compare_metric_is_worst_wait(const char *metric)
{
	return !strcmp(metric, "wait_worst_us") || !strcmp(metric, "wait_p999_worst_us");
}

bool compare_metric_is_headline(const char *metric)
{
	static const char *const headline[] = {
	    "ops_per_sec", "ns_per_pair", "wake_ms", "jpm", "writes_per_sec", "lockup",
	};
	for (size_t i = 0; i < sizeof(headline) / sizeof(headline[0]); i++)
		if (!strcmp(metric, headline[i]))
			return true;
	return compare_metric_is_worst_wait(metric);
}

bool compare_row_is_headline(const char *workload, const char *metric)
{
	/*
	 * long-hold's throughput is its 100 us hold's, not the lock's: the worst
	 * waits are its headline (Jain's index describes)
	 */
	if (workload && !strcmp(workload, "long-hold") && !strcmp(metric, "ops_per_sec"))
		return false;
	/*
	 * Oversubscribed throughput decides nothing: its A/A spread (sd of the
	 * paired round differences, 8 rounds, 2 vCPUs at load 8-26, `make
	 * bench-quick`) was 15-230% for ops_per_sec and 7-60% for cpu_ns_per_op,
	 * against a 10% margin.  wake-latency's wakeup_p50_us (8.5-21%) and
	 * wakeup_p99_us (52-3000%) are not headline metrics either: all are shown.
	 */
	if (workload && !strcmp(workload, "oversub") && !strcmp(metric, "ops_per_sec"))
		return false;
	return compare_metric_is_headline(metric);
}

double compare_eq_level(const struct compare_opts *o)
{
	return o->alpha / (o->looks > 1 ? o->looks : 1);
}

bool compare_row_moved(const struct compare_row *r)
{
	return r->margin > 0 && isfinite(r->change) && fabs(r->change) > r->margin;
}

bool compare_row_is_note(const struct compare_row *r)
{
	if (!strcmp(r->metric, "instructions_per_pair"))
		return true;
	/* any other exact count: one figure in every run of both sides */
	return !r->headline && r->base.n > 1 && r->patched.n > 1 && r->base.stddev == 0 &&
	       r->patched.stddev == 0;
}

/* A timed row a note of r's lock may escalate beside: headline, no control, no note. */
static bool note_escalates_beside(const struct compare_row *note, const struct compare_row *t)
{
	if (t == note || !t->headline || t->control || compare_row_is_note(t) ||
	    strcmp(t->workload, note->workload) || strcmp(t->lock, note->lock))
		return false;
	/* not shown unchanged, and not shown to move the other way */
	return t->verdict == VERDICT_INCONCLUSIVE || t->verdict == note->verdict;
}

void compare_notes_escalate(struct comparison *c)
{
	for (size_t i = 0; i < c->nrows; i++) {
		struct compare_row *r = &c->rows[i];

		r->escalated = false;
		if (!compare_row_is_note(r) || r->control ||
		    (r->verdict != VERDICT_REGRESSION && r->verdict != VERDICT_IMPROVEMENT) ||
		    !(fabs(r->change) >= COMPARE_NOTE_ESCALATE))
			continue;
		for (size_t k = 0; k < c->nrows && !r->escalated; k++)
			r->escalated = note_escalates_beside(r, &c->rows[k]);
	}
}

bool compare_row_decides(const struct compare_row *r)
{
	if (r->verdict == VERDICT_LOCKUP)
		return true;
	if (r->control)
		return false;
	/*
	 * An exact count decides only beside a timed row it may explain: a
	 * nop (+1 instruction a pair, 30 -> 31, no time anything measures)
	 * ended `regression` by its count alone.
	 */
	if (compare_row_is_note(r))
		return r->escalated;
	/*
	 * Every headline row decides, resolved or not: an inconclusive one,
	 * even one this machine cannot resolve (unresolvable), holds the
	 * comparison at inconclusive, so a Tested-by is never sent past a row
	 * that was not shown unchanged.  Descriptive rows are reported only.
	 */
	return r->headline;
}

bool compare_row_wants_rounds(const struct compare_row *r)
{
	if (r->verdict != VERDICT_INCONCLUSIVE || !compare_row_decides(r))
		return false;
	/*
	 * Rounds cannot fit its interval inside its margin by the job's limit;
	 * one that moved past its margin keeps looking for the change (a 20%
	 * loss on hot kmutex at 8 threads alone).
	 */
	return !(r->unresolvable > 0) || compare_row_moved(r);
}

bool comparison_wants_rounds(const struct comparison *c)
{
	bool more = false;

	for (size_t i = 0; i < c->nrows; i++) {
		if (c->rows[i].verdict == VERDICT_LOCKUP)
			return false;
		more |= compare_row_wants_rounds(&c->rows[i]);
	}
	return more;
}

bool comparison_found_change(const struct comparison *c)
{
	bool found = false;

	for (size_t i = 0; i < c->nrows; i++) {
		const struct compare_row *r = &c->rows[i];

		if (r->verdict == VERDICT_LOCKUP)
			return false;
		found |= (r->verdict == VERDICT_REGRESSION || r->verdict == VERDICT_IMPROVEMENT) &&
		         compare_row_decides(r);
	}
	return found;
}

bool comparison_has_controls(const struct comparison *c)
{
	for (size_t i = 0; i < c->nrows; i++)
		if (c->rows[i].control)
			return true;
	return false;
}

enum verdict comparison_overall(const struct comparison *c)
{
	enum verdict worst = VERDICT_NO_CHANGE;
	size_t decided = 0;

	for (size_t i = 0; i < c->nrows; i++) {
		enum verdict v = c->rows[i].verdict;
		if (!compare_row_decides(&c->rows[i]))
			continue;
		decided++;
		if (verdict_rank(v) > verdict_rank(worst))
			worst = v;
	}
	/* nothing decided: nothing was shown, unless no code changed at all */
	if (!decided && !c->identical_code)
		worst = VERDICT_INCONCLUSIVE;
	for (size_t i = 0; i < c->nsplats; i++)
		if (c->splats[i].new_in_patched &&
		    verdict_rank(VERDICT_SPLAT) > verdict_rank(worst))
			worst = VERDICT_SPLAT;
	return worst;
}
