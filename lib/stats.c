/*
 * stats.c - summaries, Welch's and paired t-tests (of differences or of log
 * ratios), equivalence (TOST) and Benjamini-Hochberg.  The t distribution comes from GSL
 * (gsl_cdf_tdist_Q / _Qinv).
 */
#include "stats.h"

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_errno.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "strutil.h"

static double mean_of(const double *x, size_t n)
{
	double s = 0;
	for (size_t i = 0; i < n; i++)
		s += x[i];
	return n ? s / (double)n : 0;
}

/* Sample variance (n - 1), two-pass for accuracy; 0 when n < 2. */
static double var_of(const double *x, size_t n, double mean)
{
	double s = 0;
	if (n < 2)
		return 0;
	for (size_t i = 0; i < n; i++)
		s += (x[i] - mean) * (x[i] - mean);
	return s / (double)(n - 1);
}

void stats_summarize(const double *x, size_t n, struct stats_summary *out)
{
	memset(out, 0, sizeof(*out));
	out->n = n;
	if (!n)
		return;
	out->mean = mean_of(x, n);
	out->stddev = sqrt(var_of(x, n, out->mean));
	out->min = out->max = x[0];
	for (size_t i = 1; i < n; i++) {
		if (x[i] < out->min)
			out->min = x[i];
		if (x[i] > out->max)
			out->max = x[i];
	}
}

double stats_cov(const double *x, size_t n)
{
	struct stats_summary s;
	stats_summarize(x, n, &s);
	return s.mean != 0 ? s.stddev / s.mean : 0;
}

static int dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

double stats_percentile(const double *x, size_t n, double pct)
{
	double *s, rank, frac, v;
	size_t lo;

	if (!n)
		return NAN;
	if (!(pct >= 0))
		pct = 0;
	if (pct > 100)
		pct = 100;
	s = strutil_xreallocarray(NULL, n, sizeof(double));
	memcpy(s, x, n * sizeof(double));
	qsort(s, n, sizeof(double), dbl_cmp);
	rank = pct / 100.0 * (double)(n - 1);
	lo = (size_t)floor(rank);
	frac = rank - (double)lo;
	v = lo + 1 < n ? s[lo] + frac * (s[lo + 1] - s[lo]) : s[lo];
	free(s);
	return v;
}

double stats_mad_sd(const double *x, size_t n)
{
	double med, *d, mad;

	if (!n)
		return NAN;
	med = stats_percentile(x, n, 50);
	d = strutil_xreallocarray(NULL, n, sizeof(double));
	for (size_t i = 0; i < n; i++)
		d[i] = fabs(x[i] - med);
	mad = stats_percentile(d, n, 50);
	free(d);
	return 1.4826 * mad;
}

static pthread_once_t stats_gsl_once = PTHREAD_ONCE_INIT;

/* GSL's default error handler aborts the process: a server must not die of one sample */
static void stats_gsl_quiet(void)
{
	gsl_set_error_handler_off();
}

int stats_welch(const double *a, size_t na, const double *b, size_t nb, double alpha,
                struct stats_welch *out)
{
	double ma, mb, va, vb, se2, diff, half;

	pthread_once(&stats_gsl_once, stats_gsl_quiet);
	memset(out, 0, sizeof(*out));
	out->p = 1;
	if (na < 2 || nb < 2)
		return -1;
	if (!(alpha > 0 && alpha < 1))
		alpha = 0.05;
	ma = mean_of(a, na);
	mb = mean_of(b, nb);
	va = var_of(a, na, ma) / (double)na;
	vb = var_of(b, nb, mb) / (double)nb;
	se2 = va + vb;
	diff = mb - ma;
	out->diff = diff;
	if (se2 == 0 || !isfinite(se2)) {
		/* no spread at all: the means either agree or they do not */
		out->df = (double)(na + nb - 2);
		out->t = diff == 0 ? 0 : (diff > 0 ? HUGE_VAL : -HUGE_VAL);
		out->p = diff == 0 ? 1 : 0;
		out->diff_lo = out->diff_hi = diff;
		return 0;
	}
	out->t = diff / sqrt(se2);
	/* Welch-Satterthwaite; a side with zero variance contributes nothing */
	double den = 0;
	if (va > 0)
		den += va * va / (double)(na - 1);
	if (vb > 0)
		den += vb * vb / (double)(nb - 1);
	out->df = den > 0 ? se2 * se2 / den : (double)(na + nb - 2);
	/*
	 * Welch-Satterthwaite lies in [min(na, nb) - 1, na + nb - 2]; with
	 * extreme samples (1e300 beside 1e-300) the arithmetic leaves it, and
	 * GSL's t distribution fails on a huge df (fuzz/regressions/report)
	 */
	if (!(out->df <= (double)(na + nb - 2)))
		out->df = (double)(na + nb - 2);
	if (out->df < (double)((na < nb ? na : nb) - 1))
		out->df = (double)((na < nb ? na : nb) - 1);
	out->p = 2 * gsl_cdf_tdist_Q(fabs(out->t), out->df);
	if (out->p > 1)
		out->p = 1;
	half = gsl_cdf_tdist_Qinv(alpha / 2, out->df) * sqrt(se2);
	out->diff_lo = diff - half;
	out->diff_hi = diff + half;
	return 0;
}

/* The paired t-test over the differences d[0..n): mean, interval and p. */
static int paired_diffs(const double *d, size_t n, double alpha, struct stats_welch *out)
{
	double md = 0, vd = 0, se, half;

	pthread_once(&stats_gsl_once, stats_gsl_quiet);
	memset(out, 0, sizeof(*out));
	out->p = 1;
	if (n < 2)
		return -1;
	if (!(alpha > 0 && alpha < 1))
		alpha = 0.05;
	md = mean_of(d, n);
	vd = var_of(d, n, md);
	out->df = (double)(n - 1);
	out->diff = md;
	se = sqrt(vd / (double)n);
	if (se == 0 || !isfinite(se)) {
		out->t = md == 0 ? 0 : (md > 0 ? HUGE_VAL : -HUGE_VAL);
		out->p = md == 0 ? 1 : 0;
		out->diff_lo = out->diff_hi = md;
		return 0;
	}
	out->t = md / se;
	out->p = 2 * gsl_cdf_tdist_Q(fabs(out->t), out->df);
	if (out->p > 1)
		out->p = 1;
	half = gsl_cdf_tdist_Qinv(alpha / 2, out->df) * se;
	out->diff_lo = md - half;
	out->diff_hi = md + half;
	return 0;
}

/* TOST of the differences d[0..n) against (lo, hi). */
static int tost_diffs(const double *d, size_t n, double lo, double hi, double *p)
{
	double md, se, plo, phi;

	pthread_once(&stats_gsl_once, stats_gsl_quiet);
	*p = 1;
	if (n < 2 || !(lo < hi))
		return -1;
	md = mean_of(d, n);
	se = sqrt(var_of(d, n, md) / (double)n);
	if (se == 0 || !isfinite(se)) {
		*p = md > lo && md < hi ? 0 : 1;
		return 0;
	}
	plo = gsl_cdf_tdist_Q((md - lo) / se, (double)(n - 1));
	phi = gsl_cdf_tdist_Q((hi - md) / se, (double)(n - 1));
	*p = plo > phi ? plo : phi;
	return 0;
}

/*
 * d[i] = b[i] - a[i], or ln(b[i] / a[i]) when logs; a new array of n + 1
 * entries, or NULL when a log ratio cannot be taken (a value <= 0 or not
 * finite).
 */
static double *pair_diffs(const double *a, const double *b, size_t n, bool logs)
{
	double *d = strutil_xreallocarray(NULL, n + 1, sizeof(double));

	for (size_t i = 0; i < n; i++) {
		if (!logs) {
			d[i] = b[i] - a[i];
			continue;
		}
		if (!(a[i] > 0 && b[i] > 0 && isfinite(a[i]) && isfinite(b[i]))) {
			free(d);
			return NULL;
		}
		d[i] = log(b[i] / a[i]);
	}
	return d;
}

int stats_paired(const double *a, const double *b, size_t n, double alpha, struct stats_welch *out)
{
	double *d = pair_diffs(a, b, n, false);
	int rc = paired_diffs(d, n, alpha, out);

	free(d);
	return rc;
}

int stats_tost_paired(const double *a, const double *b, size_t n, double lo, double hi, double *p)
{
	double *d = pair_diffs(a, b, n, false);
	int rc = tost_diffs(d, n, lo, hi, p);

	free(d);
	return rc;
}

int stats_paired_log(const double *a, const double *b, size_t n, double alpha,
                     struct stats_welch *out)
{
	double *d = n >= 2 ? pair_diffs(a, b, n, true) : NULL;
	int rc;

	if (!d) {
		memset(out, 0, sizeof(*out));
		out->p = 1;
		return -1;
	}
	rc = paired_diffs(d, n, alpha, out);
	free(d);
	/* back from logs: the interval of the ratio, as a relative change */
	out->diff = expm1(out->diff);
	out->diff_lo = expm1(out->diff_lo);
	out->diff_hi = expm1(out->diff_hi);
	return rc;
}

int stats_tost_paired_log(const double *a, const double *b, size_t n, double lo, double hi,
                          double *p)
{
	double *d;
	int rc;

	*p = 1;
	if (n < 2 || !(lo < hi) || !(lo > -1) || !(d = pair_diffs(a, b, n, true)))
		return -1;
	rc = tost_diffs(d, n, log1p(lo), log1p(hi), p);
	free(d);
	return rc;
}

struct pidx {
	double p;
	size_t i;
};

static int pidx_cmp(const void *a, const void *b)
{
	const struct pidx *x = a, *y = b;
	if (x->p != y->p)
		return x->p < y->p ? -1 : 1;
	return (x->i > y->i) - (x->i < y->i);
}

void stats_bh_adjust(const double *p, size_t n, double *q)
{
	struct pidx *s;
	double run = 1;

	if (!n)
		return;
	s = strutil_xreallocarray(NULL, n, sizeof(*s));
	for (size_t i = 0; i < n; i++) {
		/* a missing p-value (NaN) counts as 1 */
		s[i].p = p[i] >= 0 && p[i] <= 1 ? p[i] : (p[i] < 0 ? 0 : 1);
		s[i].i = i;
	}
	qsort(s, n, sizeof(*s), pidx_cmp);
	/* step-up: walk from the largest p down, keeping q monotone */
	for (size_t k = n; k-- > 0;) {
		double v = s[k].p * (double)n / (double)(k + 1);
		if (v < run)
			run = v;
		q[s[k].i] = run;
	}
	free(s);
}
