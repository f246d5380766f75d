/*
 * compare.h - base against patched: one row per (workload, lock, metric,
 * parameter point) over every document (round) of a side.  A paired t-test
 * over the per-round means of the rounds both sides ran (Welch's test over
 * the pooled samples when too few rounds pair), Benjamini-Hochberg across
 * all rows of the comparison, a minimum effect and the metric's direction
 * give each row a verdict.
 *
 * The server and `lockbench compare` both call this; neither computes
 * verdicts any other way.
 */
#ifndef LOCKLAB_COMPARE_H
#define LOCKLAB_COMPARE_H

#include <stdio.h>

#include "result.h"
#include "stats.h"

enum verdict {
	VERDICT_NO_CHANGE,
	VERDICT_IMPROVEMENT,
	VERDICT_REGRESSION,
	VERDICT_INCONCLUSIVE,
	VERDICT_LOCKUP,
	/* a kernel checker's report (lockdep, might_sleep, WARN, BUG, KASAN ...) new in patched */
	VERDICT_SPLAT,
};

/* "no-change", "improvement", "regression", "inconclusive", "lockup", "splat" */
const char *verdict_name(enum verdict v);

/* Rounds that must pair up before the paired test replaces Welch's (compare.c). */
#define COMPARE_MIN_PAIRS 3

struct compare_opts {
	double alpha;        /* false discovery rate, default 0.05 */
	double min_effect;   /* relative, default 0.02 */
	double equiv_margin; /* relative; no-change needs the CI inside it, default 0.05 */
	size_t min_samples;  /* paired rounds, or samples per side without pairs; default 5 */
	/*
	 * 0, or the first round of a confirmation: a row is then significant
	 * only when the rounds before it find the change and the rounds from
	 * it on confirm it (compare.c, judge_confirmed).  Default 0.
	 */
	int confirm_from;
};

#define COMPARE_OPTS_DEFAULT                                                                       \
	{                                                                                          \
		0.05, 0.02, 0.05, 5, 0                                                             \
	}

struct compare_row {
	char *workload;
	char *lock;
	char *metric;
	char *unit;
	char *params_key; /* run_params_key of the point */
	long long users;  /* "threads" or "users" param, -1 when none */
	bool higher_better;
	struct stats_summary base;
	struct stats_summary patched;
	double change;    /* relative change of the mean, (p - b) / b */
	double p;         /* two-sided p (paired or Welch), 1 when not computable */
	double q;         /* BH-adjusted p */
	double change_lo; /* relative CI of the change */
	double change_hi;
	enum verdict verdict;
	int base_lockups; /* runs of this point that locked up, per side */
	int patched_lockups;
	int base_runs;
	int patched_runs;
	char *lockup_message; /* first lockup message seen, patched first */
	char *lockup_stacks;
	/*
	 * Rounds both sides ran when p comes from a paired t-test over the
	 * per-round means (COMPARE_MIN_PAIRS or more); 0 when it comes from
	 * Welch's test over the pooled samples.
	 */
	size_t pairs;
	/* p comes from a test with enough data (min_samples) and q from the BH family */
	bool tested;
	/* tested, q < alpha and |change| >= min_effect (the "*" of reports) */
	bool significant;
	/*
	 * The workload's headline figure (throughput, ns per pair, wake time,
	 * JPM ...), as opposed to descriptive ones (fairness, CoV, CPU per op,
	 * latency percentiles).  Only an inconclusive headline row makes the
	 * comparison inconclusive or asks for more rounds; a significant
	 * regression of any metric still counts.
	 */
	bool headline;
	/*
	 * The lock is a control on every document of both sides (result.h): the
	 * change did not touch it, so its rows are the machine's A/A.  They are
	 * reported with their own verdict but decide nothing, except a lockup.
	 */
	bool control;
};

/*
 * A splat key (result.h, lb_splat) seen on either side, counted per
 * document the way LKP counts fail:runs.  new_in_patched: in some patched
 * document and in no base one, a finding of its own (VERDICT_SPLAT); a key
 * on both sides is shown, not blamed.
 */
struct compare_splat {
	char *key;
	char *message; /* the kernel's first line, from a patched document first */
	char *lines;   /* the lines after it (call trace); may be NULL */
	char *boot;    /* the boot it came from; may be NULL */
	int base_fail; /* documents of the side with the key */
	int patched_fail;
	bool new_in_patched;
};

struct comparison {
	struct compare_row *rows;
	size_t nrows;
	struct compare_splat *splats; /* sorted: new in patched first, then by key */
	size_t nsplats;
	char *suite;
	struct lb_machine machine; /* from the first patched document */
	int base_rounds;
	int patched_rounds;
	/* the options the verdicts were made with (legends quote them) */
	struct compare_opts opts;
};

void comparison_init(struct comparison *c);
void comparison_release(struct comparison *c);

/*
 * Compare nbase base documents with npatched patched ones.  Points present
 * on one side only are left out, except lockups: a point where any run
 * locked up always gets a row (metric "lockup" when no metric is on both
 * sides).  opts may be NULL for COMPARE_OPTS_DEFAULT.  out must be
 * initialised; its old rows are released.  Returns 0, or -1 with a reason
 * in err (out left empty).
 */
int compare_results(const struct lb_result *base, size_t nbase, const struct lb_result *patched,
                    size_t npatched, const struct compare_opts *opts, struct comparison *out,
                    char *err, size_t errlen);

/* True when the row takes part in the overall verdict and the more-rounds decision. */
bool compare_row_decides(const struct compare_row *r);

/* True when any row is a control row. */
bool comparison_has_controls(const struct comparison *c);

/* True for the metrics that decide (see compare_row.headline). */
bool compare_metric_is_headline(const char *metric);

/*
 * Worst verdict of the comparison: lockup > splat > regression >
 * inconclusive > improvement > no-change, where an inconclusive row counts
 * only when it is a headline row, a control row counts only when it locked
 * up, and splat means a splat key new in patched.
 */
enum verdict comparison_overall(const struct comparison *c);

#endif
