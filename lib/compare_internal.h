/*
 * compare_internal.h - shared by the comparison's files only; the public
 * interface is compare.h.
 *
 * compare_gather.c groups the documents' runs by point, compare_verdict.c
 * tests each row and gives the verdicts, compare.c holds compare_results and
 * the questions asked of a comparison.  Each function's full contract is the
 * comment above its definition.
 */
#ifndef LOCKLAB_COMPARE_INTERNAL_H
#define LOCKLAB_COMPARE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "compare.h"
#include "result.h"

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

/* The rounds a test looks at: [from, to). */
struct round_range {
	int from;
	int to;
};

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

/* The two tests of a row when the comparison confirms (compare_opts.confirm_from). */
struct stages {
	struct range_test found; /* the rounds before confirm_from */
	struct range_test again; /* confirm_from and later */
};

/* ---- compare_gather.c ---- */

void cmp_gather_splats(struct comparison *c, const struct lb_result *docs, size_t n, bool patched);
int cmp_splat_cmp(const void *a, const void *b);
void cmp_add_run(struct points *pts, int side, const struct lb_run *run, int round);
void cmp_points_release(struct points *pts);
struct compare_row *cmp_new_row(struct comparison *c, const struct point *pt, const char *metric,
                                const char *unit, bool higher_better);

/* ---- compare_verdict.c ---- */

void cmp_range_test(const struct pmetric *bm, const struct pmetric *pm, struct round_range rr,
                    double margin, const struct compare_opts *o, struct range_test *t);
void cmp_row_test(struct compare_row *r, const struct pmetric *bm, const struct pmetric *pm,
                  const struct compare_opts *o);
struct stages *cmp_stage_add(struct stages **st, size_t nrows);
void cmp_judge(struct comparison *out, const struct compare_opts *o);
void cmp_equivalence(struct comparison *out, const struct compare_opts *o);
void cmp_judge_confirmed(struct comparison *out, const struct stages *st,
                         const struct compare_opts *o);

#endif
