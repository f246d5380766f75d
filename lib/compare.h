/*
 * compare.h - base against patched: one row per (workload, lock, metric,
 * parameter point) over every document (round) of a side.  A paired t-test
 * over the per-round means of the rounds both sides ran (of the log of each
 * round's ratio, raw differences where a mean is <= 0), Benjamini-Hochberg
 * within a family (the deciding rows: headline rows of no control; the
 * reported rows: controls and descriptive metrics; code-path notes are in
 * none), a minimum effect and the metric's direction find a change; two one-sided tests against the
 * row's margin (TOST), Benjamini-Hochberg across the rows and a Bonferroni share per look, find no
 * change.  With fewer than COMPARE_MIN_PAIRS paired rounds a row is not tested at all: too few
 * rounds to test, inconclusive.
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

/*
 * Rounds that must pair up before a row is tested at all.  Fewer: "too few
 * rounds to test", inconclusive (Welch's test over the pooled samples of one
 * or two runs treats samples taken milliseconds apart as independent: 6 of 8
 * same-binary A/A pairs flagged "changes" of up to 41%).
 */
#define COMPARE_MIN_PAIRS 3

/* The default equivalence margins (compare_row_margin). */
#define COMPARE_MARGIN_LATENCY      0.03  /* single-thread cost: ns per pair, wake time */
#define COMPARE_MARGIN_THROUGHPUT   0.10  /* contended throughput, fairness, descriptive metrics */
#define COMPARE_MARGIN_INSTRUCTIONS 0.005 /* a deterministic count (instructions_per_pair) */
/*
 * The worst waits of a sleeping lock (compare_metric_is_worst_wait): a
 * tail, whose per-round paired spread on a loaded 2-CPU machine is 10 and
 * more times a throughput row's; docs/verdicts.md argues the figure.
 */
#define COMPARE_MARGIN_WORST_WAIT 0.75

/*
 * An instruction count is a code-path note (compare_row_is_note): it never
 * decides alone, and escalates to a deciding row only when it moved by
 * this much or more (relative) beside a timed deciding row of its lock that
 * was not shown unchanged (compare_notes_escalate).  iai-callgrind's
 * default soft limit (+10% Ir) and CodSpeed's default threshold (10%);
 * docs/verdicts.md argues the choice.
 */
#define COMPARE_NOTE_ESCALATE 0.10

/*
 * What the paired test of a row takes from each round (compare_verdict.c,
 * range_test): the log of the ratio patched / base (the default), or the
 * raw difference patched - base.  A row whose paired round means are not
 * all > 0 is tested on raw differences either way.
 */
enum compare_test {
	COMPARE_TEST_LOG,
	COMPARE_TEST_RAW,
};

struct compare_opts {
	double alpha;      /* false discovery rate, default 0.05 */
	double min_effect; /* relative, default 0.02 */
	/*
	 * Relative equivalence margin of every row; 0 (the default) gives each
	 * row its own (compare_row_margin).
	 */
	double equiv_margin;
	size_t min_samples; /* paired rounds a row needs for any verdict; default 5 */
	/*
	 * 0, or the first round of a confirmation: a row is then significant
	 * only when the rounds before it find the change and the rounds from
	 * it on confirm it (compare_verdict.c, judge_confirmed).  Default 0.
	 */
	int confirm_from;
	/*
	 * Looks at the data the caller plans (the server compares after every
	 * few rounds): a row is no-change only at BH-adjusted TOST q < alpha /
	 * looks, a Bonferroni share per look.  Default 1.
	 */
	int looks;
	enum compare_test test; /* default COMPARE_TEST_LOG */
	/*
	 * Judge the rows by statistics alone even when base and patched ran
	 * one image (struct comparison, identical_code): what an A/A of the
	 * statistical path (make bench-verdicts) needs.  Default false.
	 */
	bool ignore_image;
};

#define COMPARE_OPTS_DEFAULT                                                                       \
	{                                                                                          \
		0.05, 0.02, 0, 5, 0, 1, COMPARE_TEST_LOG, false                                    \
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
	/*
	 * Relative change: when log_ratio, that of the geometric mean of the
	 * per-round ratios, exp(mean ln(p / b)) - 1, the figure the test
	 * measured; else of the mean, (p - b) / b
	 */
	double change;
	/*
	 * The p and BH-adjusted q the verdict used: the paired test over every
	 * round, or when confirming the stage whose q is reported (q >= p).
	 * 1 when not computable.
	 */
	double p;
	double q;
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
	 * Rounds both sides ran, the units of the paired t-test; below
	 * COMPARE_MIN_PAIRS the row is not tested ("too few rounds to test").
	 */
	size_t pairs;
	/*
	 * The paired tests took the log of each round's ratio; false when they
	 * took raw differences (compare_opts.test, or a round mean <= 0)
	 */
	bool log_ratio;
	/* the row's relative equivalence margin (compare_row_margin) */
	double margin;
	/*
	 * Equivalence: TOST p of the paired log ratios against ln(1 +- margin)
	 * (raw differences: +-margin of the base mean), its BH-adjusted q over the tested rows, and
	 * whether q < alpha / looks (the row may then be no-change).
	 */
	double p_eq;
	double q_eq;
	bool equivalent;
	/* p comes from a test with enough data (min_samples) and q from the BH family */
	bool tested;
	/* tested, q < alpha and |change| >= min_effect (the "*" of reports) */
	bool significant;
	/*
	 * The workload's headline figure (throughput, ns per pair, wake time,
	 * JPM ...), as opposed to descriptive ones (fairness, CoV, CPU per op,
	 * latency percentiles).  Only headline rows of no control decide
	 * (compare_row_decides); a descriptive row's regression is reported.
	 */
	bool headline;
	/*
	 * The lock is a control on every document of both sides (result.h): the
	 * change did not touch it, so its rows are the machine's A/A.  They are
	 * reported with their own verdict but decide nothing, except a lockup.
	 */
	bool control;
	/*
	 * How the row was measured, over both sides' runs: runs that gave the
	 * metric, those measured as duets (result.h, LB_INSTRUMENT_DUET) or in
	 * lockstep with the other side (LB_INSTRUMENT_LOCKSTEP), those
	 * with a disturbance record, the samples they took again for
	 * disturbance, and the largest limit that decided it (0: recorded only).
	 */
	int measured_runs;
	int duet_runs;
	int lockstep_runs;
	int disturb_runs;
	int repeated;
	double disturb_limit_pct;
	/*
	 * 0, or the smallest margin this machine can resolve on the row (its
	 * resolution at the job's most rounds, relative, roundplan.h) when that
	 * is above the row's margin: the server's plan from the machine class's
	 * noise profile sets it (server/plan.h), or the job's own rounds
	 * (plan_mark_futile).  Such a row, when inconclusive, decides nothing:
	 * it is "not resolvable on this machine", never no-change.
	 */
	double unresolvable;
	/*
	 * The spread of the per-round paired change that one spoiled round
	 * cannot move (stats_mad_sd of the log ratios, or of the differences
	 * over the base mean), over every round; NAN when untested.  Futility
	 * (roundplan.h) gives up on a row only when this spread, too, says so.
	 */
	double round_sd_robust;
	/*
	 * A code-path note (compare_row_is_note) that escalated: it moved by
	 * COMPARE_NOTE_ESCALATE or more beside a timed deciding row of its
	 * lock not shown unchanged, so it decides (compare_notes_escalate).
	 */
	bool escalated;
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
	/*
	 * Every base and every patched document carries one image (result.h):
	 * the patch changed no code the suite runs, so no figure can have
	 * changed because of it.  Every row is then a control (this machine's
	 * own A/A), nothing but a lockup decides, and the overall verdict is
	 * no-change.  image is that image ("sha256:..."), else NULL.
	 */
	bool identical_code;
	char *image;
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

/*
 * True when the row takes part in the overall verdict: a lockup of any
 * row; else a headline row of no control (whether it was resolved or
 * not: an inconclusive or unresolvable one makes the comparison
 * inconclusive, never no-change), or a code-path note that escalated.
 * Descriptive rows, controls and code-path notes are reported and decide
 * nothing.
 */
bool compare_row_decides(const struct compare_row *r);

/*
 * True when more rounds may settle the row: it decides, it is inconclusive,
 * and it is not one this machine cannot resolve (unresolvable: said up
 * front by the plan, or by futility from the job's own rounds) while its
 * change lies inside its margin.  Such a row stops buying rounds but still
 * holds the comparison at inconclusive.
 */
bool compare_row_wants_rounds(const struct compare_row *r);

/*
 * True when the comparison asks for more rounds: no row locked up and some
 * row wants them (compare_row_wants_rounds).  The server, `lockbench
 * compare` (its JSON's more_rounds) and the verdict simulator ask by it.
 */
bool comparison_wants_rounds(const struct comparison *c);

/*
 * True when a look found a change to confirm: a regression or improvement
 * of a row that decides, and no lockup (a lockup is a fact, not a finding
 * to confirm).  The server then asks for as many rounds again.
 */
bool comparison_found_change(const struct comparison *c);

/*
 * True for a code-path note: an exact count, not a timing
 * (instructions_per_pair, or a descriptive row with the same figure in
 * every run of both sides).  Notes are outside every Benjamini-Hochberg
 * family (their q is their p) and decide only when escalated.
 */
bool compare_row_is_note(const struct compare_row *r);

/*
 * Set every row's escalated flag: a note escalates when its verdict is a
 * regression or improvement of COMPARE_NOTE_ESCALATE or more and a timed
 * headline row of no control at the same workload and lock is inconclusive
 * or moved the same way.  compare_results calls it; a caller that reads
 * stored rows back calls it again.
 */
void compare_notes_escalate(struct comparison *c);

/* The one-sided level no-change is judged at: alpha over the looks. */
double compare_eq_level(const struct compare_opts *o);

/* True when the row's change estimate lies past its margin, either way. */
bool compare_row_moved(const struct compare_row *r);

/* True when any row is a control row. */
bool comparison_has_controls(const struct comparison *c);

/*
 * The relative equivalence margin of a row of metric at users threads
 * (-1 unknown): opts->equiv_margin when set, else COMPARE_MARGIN_INSTRUCTIONS
 * for instruction counts, COMPARE_MARGIN_THROUGHPUT for contended headline
 * metrics (throughput at more than one thread) and for descriptive metrics,
 * COMPARE_MARGIN_WORST_WAIT for the worst waits, and COMPARE_MARGIN_LATENCY
 * for the rest (single-thread cost, wake time).
 */
double compare_row_margin(const char *metric, long long users, const struct compare_opts *opts);

/*
 * True for the metrics that decide (see compare_row.headline): throughput,
 * ns per pair, wake time, JPM, and the worst waits of a sleeping lock under
 * a long hold (compare_metric_is_worst_wait).  Jain's fairness index is
 * descriptive: a waiter starved for a few holds in a thousand barely moves
 * a share of acquisitions.
 */
bool compare_metric_is_headline(const char *metric);
/*
 * True for the worst-wait rows: wait_worst_us (the longest wait of any
 * thread, the median over the repetitions) and wait_p999_worst_us (the
 * worst thread's p99.9 wait).  lockbench reports them for the locks whose
 * waiters sleep, at more than one thread, on long-hold: where a spinner or
 * a re-locking holder can steal the lock from a woken waiter.  Higher is worse.
 */
bool compare_metric_is_worst_wait(const char *metric);
/* The same for a row of workload: long-hold's ops_per_sec is not (the hold sets it). */
bool compare_row_is_headline(const char *workload, const char *metric);

/*
 * Worst verdict of the comparison: lockup > splat > regression >
 * inconclusive > improvement > no-change over the rows that decide
 * (compare_row_decides), and splat means a splat key new in patched.  A
 * comparison in which no row decided is inconclusive (nothing was shown),
 * except when both sides ran one image (identical_code): no-change.
 */
enum verdict comparison_overall(const struct comparison *c);

#endif
