/*
 * compare_verdict.c - a row's tests and verdict (compare_internal.h): each
 * round's figure, the paired test over a range of rounds, Benjamini-Hochberg
 * over the rows' families, the equivalence test (TOST) and the two stages of
 * a confirmation.
 */
#include "compare.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compare_internal.h"
#include "strutil.h"

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
void cmp_range_test(const struct pmetric *bm, const struct pmetric *pm, struct round_range rr,
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
void cmp_row_test(struct compare_row *r, const struct pmetric *bm, const struct pmetric *pm,
                  const struct compare_opts *o)
{
	struct range_test t;
	double mb;

	stats_summarize(bm->x, bm->n, &r->base);
	stats_summarize(pm->x, pm->n, &r->patched);
	mb = r->base.mean;
	r->change = mb != 0 ? (r->patched.mean - mb) / mb : 0;
	r->change_lo = r->change_hi = r->change;
	cmp_range_test(bm, pm, all_rounds, r->margin, o, &t);
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

/* The stages of row nrows - 1, zeroed, growing *st to nrows entries. */
struct stages *cmp_stage_add(struct stages **st, size_t nrows)
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
void cmp_judge(struct comparison *out, const struct compare_opts *o)
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
void cmp_equivalence(struct comparison *out, const struct compare_opts *o)
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
 * cmp_judge() does): the rows that come out significant and big enough are
 * what was found.  The rounds from confirm_from on test those rows alone,
 * one-sided in the direction found, BH over them, and a row is significant
 * only when that second test agrees too.  Its q is the larger of the two; a
 * row not found keeps the finding's q and cannot be significant, whatever
 * the pooled rounds say.  A false finding must then happen twice on
 * independent rounds, so its rate is about the product of the two stages'
 * (test_confirmation_rates; docs/measured/verdicts.md, make bench-aa and
 * bench-verdicts, for real runs).
 */
void cmp_judge_confirmed(struct comparison *out, const struct stages *st,
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
