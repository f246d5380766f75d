/*
 * compare.c - base against patched.  Runs are grouped by point (workload,
 * lock, parameters) over every document of a side; each metric present on
 * both sides becomes a row with a paired t-test over rounds, of the log of
 * each round's ratio (range_test says why; no test at all
 * with fewer than COMPARE_MIN_PAIRS), and Benjamini-Hochberg runs over all
 * rows that were tested, or, when confirming, over the rounds that found a
 * change and then over the rounds that must confirm it.  No change is an
 * equivalence test of its own (TOST, equivalence()).  Lockups win over
 * everything.
 */
#include "compare.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "strutil.h"

enum { BASE, PATCHED };

/* Samples of one metric at one point on one side; strings borrowed. */
struct pmetric {
	const char *name;
	const char *unit;
	bool higher_better;
	double *x;
	int *round; /* the round (document) each sample came from */
	size_t n;
	size_t cap;
	int runs;          /* runs that gave this metric */
	int duet_runs;     /* of those, measured as duets */
	int lockstep_runs; /* of those, measured in lockstep with the other side */
	int disturb_runs;  /* of those, with a disturbance record */
	int repeated;      /* samples taken again for disturbance */
	double disturb_limit_pct;
	bool floor; /* a round's figure is its fastest sample (round_figure) */
};

struct pside {
	int runs;
	int lockups;
	const char *message; /* first lockup seen, borrowed */
	const char *stacks;
	struct pmetric *metrics;
	size_t nmetrics;
};

struct point {
	const char *workload; /* borrowed from the documents */
	const char *lock;
	char *key;
	long long users;
	struct pside side[2];
};

struct points {
	struct point *v;
	size_t n;
};

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

/* Count, per key, the documents of one side that have it. */
static void gather_splats(struct comparison *c, const struct lb_result *docs, size_t n,
                          bool patched)
{
	for (size_t d = 0; d < n; d++) {
		for (size_t k = 0; k < docs[d].nsplats; k++) {
			const struct lb_splat *sp = &docs[d].splats[k];
			bool earlier = false;
			for (size_t j = 0; j < k && !earlier; j++)
				earlier = !strcmp(docs[d].splats[j].key, sp->key);
			if (earlier)
				continue; /* one document counts once */
			struct compare_splat *cs = NULL;
			for (size_t j = 0; j < c->nsplats && !cs; j++)
				if (!strcmp(c->splats[j].key, sp->key))
					cs = &c->splats[j];
			if (!cs) {
				c->splats = strutil_xreallocarray(c->splats, c->nsplats + 1,
				                                  sizeof(*c->splats));
				cs = &c->splats[c->nsplats++];
				memset(cs, 0, sizeof(*cs));
				cs->key = strutil_xstrdup(sp->key);
				cs->message = strutil_xstrdup(sp->message ? sp->message : "");
				cs->lines = strutil_xstrdup(sp->lines);
				cs->boot = strutil_xstrdup(sp->boot);
			}
			if (patched)
				cs->patched_fail++;
			else
				cs->base_fail++;
		}
	}
}

static int splat_cmp(const void *a, const void *b)
{
	const struct compare_splat *x = a, *y = b;
	if (x->new_in_patched != y->new_in_patched)
		return x->new_in_patched ? -1 : 1;
	return strcmp(x->key, y->key);
}

static long long run_users(const struct lb_run *run)
{
	const struct lb_param *p = run_param(run, "users");
	if (!p || !p->is_num)
		p = run_param(run, "threads");
	return p && p->is_num ? p->num : -1;
}

static struct point *point_get(struct points *pts, const struct lb_run *run)
{
	char *key = run_params_key(run);
	struct point *pt;

	for (size_t i = 0; i < pts->n; i++) {
		pt = &pts->v[i];
		if (strcmp(pt->workload, run->workload) == 0 && strcmp(pt->lock, run->lock) == 0 &&
		    strcmp(pt->key, key) == 0) {
			free(key);
			return pt;
		}
	}
	pts->v = strutil_xreallocarray(pts->v, pts->n + 1, sizeof(*pts->v));
	pt = &pts->v[pts->n++];
	memset(pt, 0, sizeof(*pt));
	pt->workload = run->workload;
	pt->lock = run->lock;
	pt->key = key;
	pt->users = run_users(run);
	return pt;
}

static struct pmetric *pside_metric(struct pside *s, const char *name)
{
	for (size_t i = 0; i < s->nmetrics; i++)
		if (strcmp(s->metrics[i].name, name) == 0)
			return &s->metrics[i];
	return NULL;
}

static void pmetric_push(struct pmetric *m, double v, int round)
{
	if (m->n == m->cap) {
		m->cap = m->cap ? m->cap * 2 : 16;
		m->x = strutil_xreallocarray(m->x, m->cap, sizeof(double));
		m->round = strutil_xreallocarray(m->round, m->cap, sizeof(int));
	}
	m->round[m->n] = round;
	m->x[m->n++] = v;
}

static void add_run(struct points *pts, int side, const struct lb_run *run, int round)
{
	struct point *pt = point_get(pts, run);
	struct pside *s = &pt->side[side];

	s->runs++;
	if (run->lockup) {
		/* a locked-up run's figures describe a broken run: not samples */
		s->lockups++;
		if (!s->message) {
			s->message = run->lockup->message ? run->lockup->message : "";
			s->stacks = run->lockup->stacks;
		}
		return;
	}
	for (size_t i = 0; i < run->nmetrics; i++) {
		const struct lb_metric *lm = &run->metrics[i];
		struct pmetric *m = pside_metric(s, lm->name);
		if (!m) {
			s->metrics =
			    strutil_xreallocarray(s->metrics, s->nmetrics + 1, sizeof(*s->metrics));
			m = &s->metrics[s->nmetrics++];
			memset(m, 0, sizeof(*m));
			m->name = lm->name;
			m->unit = lm->unit ? lm->unit : "";
			m->higher_better = lm->higher_better;
			m->floor = !strcmp(pt->workload, "uncontended") && !lm->higher_better;
		}
		m->runs++;
		m->duet_runs += !strcmp(metric_instrument(lm), LB_INSTRUMENT_DUET);
		m->lockstep_runs += !strcmp(metric_instrument(lm), LB_INSTRUMENT_LOCKSTEP);
		if (lm->ndisturb) {
			m->disturb_runs++;
			m->repeated += lm->repeated;
			if (lm->disturb_limit_pct > m->disturb_limit_pct)
				m->disturb_limit_pct = lm->disturb_limit_pct;
		}
		if (lm->nsamples) {
			for (size_t k = 0; k < lm->nsamples; k++)
				pmetric_push(m, lm->samples[k], round);
		} else {
			pmetric_push(m, lm->value, round);
		}
	}
}

static void points_release(struct points *pts)
{
	for (size_t i = 0; i < pts->n; i++) {
		for (int s = 0; s < 2; s++) {
			for (size_t k = 0; k < pts->v[i].side[s].nmetrics; k++) {
				free(pts->v[i].side[s].metrics[k].x);
				free(pts->v[i].side[s].metrics[k].round);
			}
			free(pts->v[i].side[s].metrics);
		}
		free(pts->v[i].key);
	}
	free(pts->v);
}

static struct compare_row *new_row(struct comparison *c, const struct point *pt, const char *metric,
                                   const char *unit, bool higher_better)
{
	struct compare_row *r;
	const struct pside *b = &pt->side[BASE], *p = &pt->side[PATCHED];

	c->rows = strutil_xreallocarray(c->rows, c->nrows + 1, sizeof(*c->rows));
	r = &c->rows[c->nrows++];
	memset(r, 0, sizeof(*r));
	r->workload = strutil_xstrdup(pt->workload);
	r->lock = strutil_xstrdup(pt->lock);
	r->metric = strutil_xstrdup(metric);
	r->headline = compare_row_is_headline(pt->workload, metric);
	r->unit = strutil_xstrdup(unit);
	r->params_key = strutil_xstrdup(pt->key);
	r->users = pt->users;
	r->higher_better = higher_better;
	r->p = 1;
	r->q = 1;
	r->p_eq = 1;
	r->q_eq = 1;
	r->margin = compare_row_margin(metric, pt->users, &c->opts);
	r->base_runs = b->runs;
	r->patched_runs = p->runs;
	r->base_lockups = b->lockups;
	r->patched_lockups = p->lockups;
	if (p->lockups) {
		r->lockup_message = strutil_xstrdup(p->message);
		r->lockup_stacks = strutil_xstrdup(p->stacks);
	} else if (b->lockups) {
		r->lockup_message = strutil_xstrdup(b->message);
		r->lockup_stacks = strutil_xstrdup(b->stacks);
	}
	return r;
}

/* The rounds a test looks at: [from, to). */
struct round_range {
	int from;
	int to;
};

static const struct round_range all_rounds = {INT_MIN, INT_MAX};

static bool in_range(int round, struct round_range rr)
{
	return round >= rr.from && round < rr.to;
}

/*
 * The figure of round `round` of m: the mean of its samples, or for an
 * uncontended time (m->floor) the smallest.  One thread alone on a lock
 * costs what its code costs, and this machine kind adds to that, never
 * takes away: 40% of samples sit on a floor 2% wide, the rest 6-48% above
 * it, a steal spike on top of some.  The round's mean mixes how many
 * samples landed on the floor, a draw that differs between the two sides of
 * a round (10.9% a round paired in docs/measured/2026-12-05-verdict-sim.md);
 * the floor moves only with the code.  False when the round has none.
 */
static bool round_figure(const struct pmetric *m, int round, double *fig)
{
	double sum = 0, min = INFINITY;
	size_t n = 0;

	for (size_t i = 0; i < m->n; i++)
		if (m->round[i] == round) {
			sum += m->x[i];
			if (m->x[i] < min)
				min = m->x[i];
			n++;
		}
	if (n)
		*fig = m->floor ? min : sum / (double)n;
	return n > 0;
}

/*
 * The rounds in rr both sides ran, as pairs of per-round figures (b[i], p[i]);
 * the arrays hold bm->n entries.  Returns the number of pairs.
 */
static size_t round_pairs(const struct pmetric *bm, const struct pmetric *pm, struct round_range rr,
                          double *b, double *p)
{
	size_t n = 0;

	for (size_t i = 0; i < bm->n; i++) {
		bool seen = false;

		if (!in_range(bm->round[i], rr))
			continue;
		for (size_t k = 0; k < i && !seen; k++)
			seen = bm->round[k] == bm->round[i];
		if (seen || !round_figure(pm, bm->round[i], &p[n]))
			continue;
		round_figure(bm, bm->round[i], &b[n]);
		n++;
	}
	return n;
}

/* What one test of a row over some rounds gave. */
struct range_test {
	double p;      /* two-sided, 1 when not computable */
	double mb, mp; /* base and patched means over these rounds */
	/*
	 * The test's relative change, 0 when mb is 0: of the geometric mean
	 * of the per-round ratios when logs, else of the mean
	 */
	double change;
	double lo, hi;    /* relative interval of the change */
	double p_eq;      /* TOST p against +-margin, 1 when not computable */
	size_t pairs;     /* paired rounds */
	bool computed;    /* a test ran (COMPARE_MIN_PAIRS pairs or more) */
	bool tested;      /* computed, with enough pairs (min_samples) for a verdict */
	bool logs;        /* the test took log ratios, not raw differences */
	double sd_robust; /* stats_mad_sd of the per-round changes, NAN when not computed */
};

/*
 * The robust spread of n paired rounds' changes, in the units of the paired
 * test: ln(p / b) when logs, else (p - b) / |mb|.
 */
static double round_spread_robust(const double *b, const double *p, size_t n, bool logs, double mb)
{
	double *d = strutil_xreallocarray(NULL, n ? n : 1, sizeof(double)), sd;

	for (size_t i = 0; i < n; i++)
		d[i] = logs ? log(p[i] / b[i]) : (mb != 0 ? (p[i] - b[i]) / fabs(mb) : 0);
	sd = stats_mad_sd(d, n);
	free(d);
	return sd;
}

/*
 * One row's test over the rounds in rr.
 *
 * Interleaved rounds are pairs: base and patched of one round ran minutes
 * apart at most, so a paired t-test over the per-round means cancels the
 * drift of a shared machine and counts rounds, not the samples inside one
 * run, as the independent units.  (Pooling every sample into Welch's test
 * flagged 2 of 3 same-binary A/A comparisons of the smoke suite on this
 * machine: samples of one run are not independent.)  With fewer than
 * COMPARE_MIN_PAIRS pairs there is no test: too few rounds to test, and the
 * row can be nothing but inconclusive.  margin is the row's relative
 * equivalence margin, for the TOST p.
 *
 * The test is on the log of each round's ratio, ln(patched / base)
 * (COMPARE_TEST_LOG): a lock's cost moves by a factor, and a machine's
 * drift scales both sides of a round alike, so the logs of the ratios are
 * the figure with a constant spread.  Raw differences of a 25-40x slowdown
 * with a bimodal patched figure (250 or 800 ns against 20) spread with the
 * figure and left it inconclusive at 5 rounds a stage (p 0.013, q 0.053);
 * the log ratios gave t ~ 12 on the same rounds.  A metric that can be 0
 * or negative has no log ratio: when any paired round's mean is <= 0 the
 * row falls back to raw differences (and says so, compare_row.log_ratio).
 */
static void range_test(const struct pmetric *bm, const struct pmetric *pm, struct round_range rr,
                       double margin, const struct compare_opts *o, struct range_test *t)
{
	struct stats_welch w;
	size_t cap = bm->n + 1;
	double *b = strutil_xreallocarray(NULL, cap, sizeof(double)),
	       *p = strutil_xreallocarray(NULL, cap, sizeof(double));
	size_t npairs = round_pairs(bm, pm, rr, b, p);
	double mb = 0, mp = 0;

	memset(t, 0, sizeof(*t));
	t->p = 1;
	t->p_eq = 1;
	t->sd_robust = NAN;
	t->pairs = npairs;
	for (size_t i = 0; i < npairs; i++) {
		mb += b[i] / (double)npairs;
		mp += p[i] / (double)npairs;
	}
	t->mb = mb;
	t->mp = mp;
	t->change = mb != 0 ? (mp - mb) / mb : 0;
	t->lo = t->hi = t->change;
	if (npairs < COMPARE_MIN_PAIRS)
		goto out;
	if (o->test == COMPARE_TEST_LOG && stats_paired_log(b, p, npairs, o->alpha, &w) == 0) {
		t->logs = true;
		t->change = w.diff;
		t->lo = w.diff_lo;
		t->hi = w.diff_hi;
		if (margin > 0 && margin < 1)
			stats_tost_paired_log(b, p, npairs, -margin, margin, &t->p_eq);
	} else if (stats_paired(b, p, npairs, o->alpha, &w) == 0) {
		double band = margin * fabs(mb);

		if (mb != 0) {
			double lo = w.diff_lo / mb, hi = w.diff_hi / mb;
			t->lo = lo < hi ? lo : hi;
			t->hi = lo < hi ? hi : lo;
		}
		if (band > 0)
			stats_tost_paired(b, p, npairs, -band, band, &t->p_eq);
	} else {
		goto out;
	}
	t->computed = true;
	t->tested = npairs >= o->min_samples;
	t->p = w.p;
	t->sd_robust = round_spread_robust(b, p, npairs, t->logs, mb);
out:
	free(b);
	free(p);
}

/* Summaries, relative change and, when possible, the test of one row over every round. */
static void row_test(struct compare_row *r, const struct pmetric *bm, const struct pmetric *pm,
                     const struct compare_opts *o)
{
	struct range_test t;
	double mb;

	stats_summarize(bm->x, bm->n, &r->base);
	stats_summarize(pm->x, pm->n, &r->patched);
	mb = r->base.mean;
	r->change = mb != 0 ? (r->patched.mean - mb) / mb : 0;
	r->change_lo = r->change_hi = r->change;
	range_test(bm, pm, all_rounds, r->margin, o, &t);
	r->pairs = t.pairs;
	r->round_sd_robust = t.sd_robust;
	if (!t.computed)
		return;
	r->p = t.p;
	r->p_eq = t.p_eq;
	r->log_ratio = t.logs;
	/* the change the test measured, so that it lies inside its interval */
	if (t.logs)
		r->change = t.change;
	if (mb != 0) {
		r->change_lo = t.lo;
		r->change_hi = t.hi;
	}
	/* only rows that may get a statistical verdict join the BH family */
	r->tested = r->verdict != VERDICT_LOCKUP && t.tested;
}

/*
 * The smallest change of row r that counts: min_effect, except for an
 * instruction count, which is deterministic: there any change past the
 * row's own (tiny) margin is real.
 */
static double row_min_effect(const struct compare_row *r, const struct compare_opts *o)
{
	if (!strcmp(r->metric, "instructions_per_pair") && r->margin < o->min_effect)
		return r->margin;
	return o->min_effect;
}

/* A move big enough to report: min_effect, or any move off a zero base. */
static bool big_enough(double mb, double mp, double change, double min_effect)
{
	return mb == 0 ? mp != 0 : fabs(change) >= min_effect;
}

/*
 * sig: the test found the row's change (and, when confirming, confirmed
 * it); r->equivalent: the equivalence test found it inside its margin.  A
 * change must be significant and at least min_effect; no-change is the
 * equivalence test's alone (a significant change below min_effect is not
 * "no change" when its interval reaches past the margin).
 */
static enum verdict decide(const struct compare_row *r, bool sig, const struct compare_opts *o)
{
	double mb = r->base.mean;

	if (mb == 0) {
		/* no relative scale: any significant move off zero is a change */
		double diff = r->patched.mean - mb;
		if (sig && diff != 0)
			return (diff > 0) == r->higher_better ? VERDICT_IMPROVEMENT
			                                      : VERDICT_REGRESSION;
		if (r->patched.mean == 0 && r->base.stddev == 0 && r->patched.stddev == 0)
			return VERDICT_NO_CHANGE;
		return VERDICT_INCONCLUSIVE;
	}
	if (sig && fabs(r->change) >= row_min_effect(r, o))
		return (r->change > 0) == r->higher_better ? VERDICT_IMPROVEMENT
		                                           : VERDICT_REGRESSION;
	return r->equivalent ? VERDICT_NO_CHANGE : VERDICT_INCONCLUSIVE;
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

/* The two tests of a row when the comparison confirms (compare_opts.confirm_from). */
struct stages {
	struct range_test found; /* the rounds before confirm_from */
	struct range_test again; /* confirm_from and later */
};

/* The stages of row nrows - 1, zeroed, growing *st to nrows entries. */
static struct stages *stage_add(struct stages **st, size_t nrows)
{
	*st = strutil_xreallocarray(*st, nrows, sizeof(**st));
	memset(&(*st)[nrows - 1], 0, sizeof(**st));
	return &(*st)[nrows - 1];
}

/* The way a test saw the patched side move: its own estimate's sign. */
static bool moved_up(const struct range_test *t)
{
	return t->logs ? t->change > 0 : t->mp - t->mb > 0;
}

/* True when both tests saw the patched side move the same way. */
static bool same_way(const struct range_test *a, const struct range_test *b)
{
	return moved_up(a) == moved_up(b);
}

/*
 * Benjamini-Hochberg over the rows with in[i]: q[i] is row i's adjusted
 * p-value, 1 for the rows left out.  p, in and q hold n entries.
 */
static void bh_rows(const double *p, const bool *in, size_t n, double *q)
{
	double *pin = strutil_xreallocarray(NULL, n + 1, sizeof(double)),
	       *qin = strutil_xreallocarray(NULL, n + 1, sizeof(double));
	size_t m = 0;

	for (size_t i = 0; i < n; i++)
		if (in[i])
			pin[m++] = p[i];
	if (m)
		stats_bh_adjust(pin, m, qin);
	m = 0;
	for (size_t i = 0; i < n; i++)
		q[i] = in[i] ? qin[m++] : 1;
	free(pin);
	free(qin);
}

/*
 * The families a test's p-values are adjusted in (row_family): the rows
 * that decide (headline rows of no control) are the family that finds
 * changes, so that its first-ranked threshold is alpha over the rows that
 * can change the answer (5 of the quick suite's 48 tested rows, not 48);
 * controls and descriptive rows are reported, with a family of their own;
 * a code-path note (an exact count, p 0 by fiat when it differs) is in
 * none: its q is its p, and it cannot take rank 1 and loosen the others'.
 */
enum row_family {
	FAMILY_NONE = -1,
	FAMILY_DECIDING,
	FAMILY_REPORTED,
	FAMILY_NOTE,
};

static enum row_family row_family(const struct compare_row *r, bool tested)
{
	if (!tested)
		return FAMILY_NONE;
	if (compare_row_is_note(r))
		return FAMILY_NOTE;
	return r->headline && !r->control ? FAMILY_DECIDING : FAMILY_REPORTED;
}

/* Benjamini-Hochberg within each family of fam; notes keep q = p, FAMILY_NONE q = 1. */
static void bh_families(const double *p, const enum row_family *fam, size_t n, double *q)
{
	double *qf = strutil_xreallocarray(NULL, n + 1, sizeof(double));
	bool *in = strutil_xreallocarray(NULL, n + 1, sizeof(bool));

	for (size_t i = 0; i < n; i++)
		q[i] = fam[i] == FAMILY_NOTE ? p[i] : 1;
	for (int f = FAMILY_DECIDING; f <= FAMILY_REPORTED; f++) {
		for (size_t i = 0; i < n; i++)
			in[i] = fam[i] == (enum row_family)f;
		bh_rows(p, in, n, qf);
		for (size_t i = 0; i < n; i++)
			if (in[i])
				q[i] = qf[i];
	}
	free(qf);
	free(in);
}

/* Every round tested at once: BH within each family of tested rows, then the verdicts. */
static void judge(struct comparison *out, const struct compare_opts *o)
{
	size_t n = out->nrows;
	double *p = strutil_xreallocarray(NULL, n + 1, sizeof(double)),
	       *q = strutil_xreallocarray(NULL, n + 1, sizeof(double));
	enum row_family *fam = strutil_xreallocarray(NULL, n + 1, sizeof(*fam));

	for (size_t i = 0; i < n; i++) {
		fam[i] = row_family(&out->rows[i], out->rows[i].tested);
		p[i] = out->rows[i].p;
	}
	bh_families(p, fam, n, q);
	for (size_t i = 0; i < n; i++) {
		struct compare_row *r = &out->rows[i];
		if (!r->tested)
			continue; /* lockup, too few samples or no spread to test */
		r->q = q[i];
		r->verdict = decide(r, r->q < o->alpha, o);
		r->significant = r->q < o->alpha && big_enough(r->base.mean, r->patched.mean,
		                                               r->change, row_min_effect(r, o));
	}
	free(p);
	free(q);
	free(fam);
}

/*
 * No change, by two one-sided tests (TOST) per row against +-margin (of the
 * ratio: ln(1 - margin) and ln(1 + margin) for log ratios; of the base mean
 * for raw differences), over every round, and a row is equivalent when its
 * BH-adjusted TOST p (q_eq) < alpha / looks, a Bonferroni share for each
 * look the caller plans.  BH runs over two families apart: the tested
 * headline rows of no control (the rows a Tested-by stands on,
 * compare_row_decides), and every other tested row (controls, descriptive
 * metrics: their no-change is no part of a Tested-by).  Within the first
 * family BH's q of the largest p is that p, so "every deciding row
 * equivalent" is exactly "the largest of their TOST p-values < alpha /
 * looks": an intersection-union test, whose false Tested-by rate is at
 * most that level whatever the number of rows (Berger 1982).  One family
 * for all rows let 40-odd noisy descriptive rows (48 tested rows in the
 * quick suite of two locks) raise a deciding row's q by up to m / rank:
 * 7 of 25 comparisons of a comment-only patch ended inconclusive at 20
 * rounds (docs/measured/verdicts.md, 2026-12-03).  Equivalently: the paired interval of the
 * change at level 1 - 2 level k / m (k rows found equivalent of the m of
 * its family) lies inside +-margin.
 */
static void equivalence(struct comparison *out, const struct compare_opts *o)
{
	size_t n = out->nrows;
	double *p = strutil_xreallocarray(NULL, n + 1, sizeof(double)),
	       *q = strutil_xreallocarray(NULL, n + 1, sizeof(double));
	enum row_family *fam = strutil_xreallocarray(NULL, n + 1, sizeof(*fam));
	double level = compare_eq_level(o);

	/* the deciding rows, the reported rows: one BH each; notes on their own p */
	for (size_t i = 0; i < n; i++) {
		const struct compare_row *r = &out->rows[i];

		p[i] = r->p_eq;
		fam[i] = row_family(r, r->tested && r->base.mean != 0);
	}
	bh_families(p, fam, n, q);
	for (size_t i = 0; i < n; i++) {
		/* untested rows stay at 1, not equivalent */
		out->rows[i].q_eq = fam[i] == FAMILY_NONE ? 1 : q[i];
		out->rows[i].equivalent = fam[i] != FAMILY_NONE && q[i] < level;
	}
	free(p);
	free(q);
	free(fam);
}

/*
 * Found, then confirmed on rounds the finding did not see.  The rounds
 * before confirm_from are tested as one comparison (BH over every row, as
 * judge() does): the rows that come out significant and big enough are
 * what was found.  The rounds from confirm_from on test those rows alone,
 * one-sided in the direction found, BH over them, and a row is significant
 * only when that second test agrees too.  Its q is the larger of the two; a
 * row not found keeps the finding's q and cannot be significant, whatever
 * the pooled rounds say.  A false finding must then happen twice on
 * independent rounds, so its rate is about the product of the two stages'
 * (test_confirmation_rates; docs/measured/verdicts.md, make bench-aa and
 * bench-verdicts, for real runs).
 */
static void judge_confirmed(struct comparison *out, const struct stages *st,
                            const struct compare_opts *o)
{
	size_t n = out->nrows;
	double *p = strutil_xreallocarray(NULL, n + 1, sizeof(double)),
	       *qf = strutil_xreallocarray(NULL, n + 1, sizeof(double)),
	       *qa = strutil_xreallocarray(NULL, n + 1, sizeof(double));
	bool *found = strutil_xreallocarray(NULL, n + 1, sizeof(bool));
	enum row_family *fam = strutil_xreallocarray(NULL, n + 1, sizeof(*fam)),
	                *fam2 = strutil_xreallocarray(NULL, n + 1, sizeof(*fam2));

	for (size_t i = 0; i < n; i++) {
		fam[i] = row_family(&out->rows[i],
		                    out->rows[i].verdict != VERDICT_LOCKUP && st[i].found.tested);
		p[i] = st[i].found.p;
	}
	bh_families(p, fam, n, qf);
	for (size_t i = 0; i < n; i++) {
		const struct range_test *f = &st[i].found, *a = &st[i].again;

		found[i] = fam[i] != FAMILY_NONE && qf[i] < o->alpha &&
		           big_enough(f->mb, f->mp, f->change, row_min_effect(&out->rows[i], o));
		/*
		 * The finding fixed the direction before the new rounds ran, so
		 * their test is one-sided, in that direction.
		 */
		fam2[i] = found[i] && a->tested ? fam[i] : FAMILY_NONE;
		p[i] = same_way(f, a) ? a->p / 2 : 1 - a->p / 2;
	}
	bh_families(p, fam2, n, qa);
	for (size_t i = 0; i < n; i++) {
		struct compare_row *r = &out->rows[i];
		const struct range_test *f = &st[i].found, *a = &st[i].again;
		bool sig = false;

		/*
		 * The halves decide: a row joins when the finding's rounds could
		 * test it, though all rounds pooled may be too few pairs to.
		 */
		if (r->verdict == VERDICT_LOCKUP || !(r->tested || f->tested))
			continue;
		r->tested = true;
		/* p and q of the stage that decided, never of two (q >= p) */
		r->p = f->p;
		r->q = qf[i];
		if (found[i] && a->tested) {
			bool same = same_way(f, a);

			if (!same) {
				r->q = 1; /* the new rounds move the other way */
				r->p = p[i];
			} else if (qa[i] > r->q) {
				r->q = qa[i];
				r->p = p[i];
			}
			sig = same && qa[i] < o->alpha;
		} else if (found[i]) {
			r->q = 1; /* found, but the new rounds cannot test it */
		}
		r->verdict = decide(r, sig, o);
		r->significant = sig && big_enough(r->base.mean, r->patched.mean, r->change,
		                                   row_min_effect(r, o));
	}
	free(p);
	free(qf);
	free(qa);
	free(fam);
	free(fam2);
	free(found);
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
	gather_splats(out, patched, npatched, true);
	gather_splats(out, base, nbase, false);
	for (size_t i = 0; i < out->nsplats; i++)
		out->splats[i].new_in_patched =
		    out->splats[i].patched_fail && !out->splats[i].base_fail;
	if (out->nsplats)
		qsort(out->splats, out->nsplats, sizeof(*out->splats), splat_cmp);
	const char *img = shared_image(base, nbase, patched, npatched);
	if (img && !o->ignore_image) {
		out->identical_code = true;
		out->image = strutil_xstrdup(img);
	}

	for (size_t d = 0; d < nbase; d++)
		for (size_t i = 0; i < base[d].nruns; i++)
			add_run(&pts, BASE, &base[d].runs[i], base[d].round);
	for (size_t d = 0; d < npatched; d++)
		for (size_t i = 0; i < patched[d].nruns; i++)
			add_run(&pts, PATCHED, &patched[d].runs[i], patched[d].round);

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
			    new_row(out, pt, pm->name, pm->unit, pm->higher_better);
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
			row_test(r, bm, pm, o);
			if (o->confirm_from > 0) {
				struct round_range found = {INT_MIN, o->confirm_from},
				                   again = {o->confirm_from, INT_MAX};
				struct stages *sr = stage_add(&st, out->nrows);
				range_test(bm, pm, found, r->margin, o, &sr->found);
				range_test(bm, pm, again, r->margin, o, &sr->again);
			}
		}
		if (locked && out->nrows == before) {
			struct compare_row *r = new_row(out, pt, "lockup", "", false);
			r->verdict = VERDICT_LOCKUP;
			r->control = control;
			if (o->confirm_from > 0)
				stage_add(&st, out->nrows);
		}
	}

	equivalence(out, o);
	if (o->confirm_from > 0)
		judge_confirmed(out, st, o);
	else
		judge(out, o);
	if (out->nrows)
		qsort(out->rows, out->nrows, sizeof(*out->rows), row_cmp);
	compare_notes_escalate(out);
	free(st);
	points_release(&pts);
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
