/*
 * stats.h - the statistics verdicts stand on.  Distributions come from GSL;
 * nothing here is hand-rolled beyond sums.  GSL's error handler (abort) is
 * turned off by the first test run here: a sample GSL cannot take gives a
 * NaN p-value (counted as 1), never a dead process.
 */
#ifndef LOCKLAB_STATS_H
#define LOCKLAB_STATS_H

#include <stddef.h>

struct stats_summary {
	size_t n;
	double mean;
	double stddev; /* sample standard deviation (n-1); 0 when n < 2 */
	double min;
	double max;
};

void stats_summarize(const double *x, size_t n, struct stats_summary *out);

/* Coefficient of variation (stddev/mean), 0 when mean is 0. */
double stats_cov(const double *x, size_t n);

/*
 * Percentile pct in [0,100] of x, linear interpolation; x is not changed.
 * NAN when n is 0.
 */
double stats_percentile(const double *x, size_t n, double pct);

/*
 * A spread that one wild value cannot move: 1.4826 times the median absolute
 * deviation from the median (the normal's sd when x is normal).  NAN when n
 * is 0.
 */
double stats_mad_sd(const double *x, size_t n);

struct stats_welch {
	double t; /* (mean(b) - mean(a)) / standard error */
	double df;
	double p; /* two-sided */
	/*
	 * The estimate, mean(b) - mean(a), and its 95% (1 - alpha given)
	 * confidence interval; stats_paired_log gives relative figures instead
	 */
	double diff;
	double diff_lo;
	double diff_hi;
};

/*
 * Welch's unequal-variance t-test of a against b.  Returns 0, or -1 when
 * either side has fewer than 2 values.  When both variances are 0 the
 * p-value is 1 for equal means and 0 otherwise.  alpha sets the interval.
 */
int stats_welch(const double *a, size_t na, const double *b, size_t nb, double alpha,
                struct stats_welch *out);

/*
 * Paired t-test of b[i] - a[i] over n pairs, the same result struct (t, df =
 * n - 1, two-sided p, the interval of mean(b - a)).  Returns 0, or -1 when
 * n < 2.  No spread in the differences: p is 1 when they are all 0, else 0.
 */
int stats_paired(const double *a, const double *b, size_t n, double alpha, struct stats_welch *out);

/*
 * Equivalence of paired samples by two one-sided tests (TOST, Schuirmann
 * 1987): H0 is mean(b - a) <= lo or >= hi, H1 is lo < mean(b - a) < hi.
 * Two paired t-tests, (mean - lo) / se against "> 0" and (hi - mean) / se
 * against "> 0", each one-sided with df = n - 1; the equivalence p-value is
 * the larger of the two.  p <= alpha exactly when the (1 - 2 alpha)
 * interval of the paired test lies inside (lo, hi).  Returns 0 with *p set,
 * or -1 when n < 2 or lo >= hi.  No spread in the differences: p is 0 when
 * their mean is strictly inside (lo, hi), else 1.
 */
int stats_tost_paired(const double *a, const double *b, size_t n, double lo, double hi, double *p);

/*
 * The paired t-test of the log ratios d[i] = ln(b[i] / a[i]): t, df = n - 1
 * and the two-sided p of mean(d) against 0, and, back from logs, relative
 * figures: diff = exp(mean(d)) - 1, the change of the geometric mean of the
 * ratios (0.05: b is 5% above a), and the interval exp(ci) - 1.  A
 * multiplicative change (a lock 30x slower, with a bimodal patched figure)
 * is a constant shift of the logs, where raw differences spread with the
 * size of the figure.  Returns 0, or -1 when n < 2 or some value is <= 0 or
 * not finite (no log: the caller tests raw differences, stats_paired).
 */
int stats_paired_log(const double *a, const double *b, size_t n, double alpha,
                     struct stats_welch *out);

/*
 * TOST of the log ratios ln(b[i] / a[i]) against a relative band (lo, hi),
 * -0.03 and 0.03 for +-3%: the bounds are ln(1 + lo) and ln(1 + hi), so
 * p <= alpha exactly when stats_paired_log's (1 - 2 alpha) interval lies
 * inside (lo, hi).  Returns 0 with *p set, or -1 (p = 1) when n < 2,
 * lo >= hi, lo <= -1 or some value is <= 0 or not finite.
 */
int stats_tost_paired_log(const double *a, const double *b, size_t n, double lo, double hi,
                          double *p);

/* Benjamini-Hochberg adjusted p-values (q), same order as p. */
void stats_bh_adjust(const double *p, size_t n, double *q);

#endif
