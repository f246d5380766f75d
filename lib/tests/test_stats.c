/*
 * test_stats.c - summaries, percentiles, Welch's test and BH against values
 * computed independently (R's t.test and p.adjust give the same figures).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>

#include "stats.h"

#define near(a, b, eps) assert_true(fabs((a) - (b)) <= (eps))

static void test_summarize(void **state)
{
	const double x[] = {2, 4, 4, 4, 5, 5, 7, 9};
	struct stats_summary s;

	stats_summarize(x, 8, &s);
	assert_int_equal(s.n, 8);
	near(s.mean, 5.0, 1e-12);
	near(s.stddev, sqrt(32.0 / 7.0), 1e-12);
	near(s.min, 2, 0);
	near(s.max, 9, 0);

	stats_summarize(x, 1, &s);
	assert_int_equal(s.n, 1);
	near(s.stddev, 0, 0);
	near(s.mean, 2, 0);
	stats_summarize(x, 0, &s);
	assert_int_equal(s.n, 0);
	near(s.mean, 0, 0);
}

static void test_cov(void **state)
{
	const double x[] = {90, 100, 110};
	const double z[] = {-1, 1};
	near(stats_cov(x, 3), 10.0 / 100.0, 1e-12);
	near(stats_cov(z, 2), 0, 0);
}

/*
 * MAD spread by hand: {1, 2, 3, 4, 100}: median 3, deviations {2, 1, 0, 1,
 * 97}, their median 1, so 1.4826 (the wild 100 does not move it; the sd is
 * 43.6); {1, 2, 3, 4}: median 2.5, deviations {1.5, 0.5, 0.5, 1.5}, median
 * 1: 1.4826; one value: 0; none: NAN.
 */
static void test_mad_sd(void **state)
{
	const double a[] = {1, 2, 100, 3, 4}, b[] = {4, 3, 2, 1};

	(void)state;
	assert_true(fabs(stats_mad_sd(a, 5) - 1.4826) < 1e-12);
	assert_true(fabs(stats_mad_sd(b, 4) - 1.4826) < 1e-12);
	assert_true(stats_mad_sd(a, 1) == 0);
	assert_true(isnan(stats_mad_sd(a, 0)));
}

static void test_percentile(void **state)
{
	const double x[] = {15, 20, 35, 40, 50};
	const double unsorted[] = {50, 15, 40, 20, 35};

	near(stats_percentile(x, 5, 0), 15, 1e-12);
	near(stats_percentile(x, 5, 100), 50, 1e-12);
	near(stats_percentile(x, 5, 50), 35, 1e-12);
	near(stats_percentile(x, 5, 40), 29, 1e-12); /* rank 1.6: 20 + 0.6 * 15 */
	near(stats_percentile(unsorted, 5, 40), 29, 1e-12);
	assert_true(unsorted[0] == 50); /* input untouched */
	near(stats_percentile(x, 1, 99), 15, 0);
	assert_true(isnan(stats_percentile(x, 0, 50)));
}

static void test_welch_reference(void **state)
{
	const double a[] = {1, 2, 3, 4, 5};
	const double b[] = {2, 4, 6, 8, 10};
	struct stats_welch w;

	assert_int_equal(stats_welch(a, 5, b, 5, 0.05, &w), 0);
	near(w.t, 1.897366596, 1e-6);
	near(w.df, 5.882352941, 1e-6);
	near(w.p, 0.1075312, 1e-5);
	near(w.diff_lo, -0.8877416, 1e-5);
	near(w.diff_hi, 6.8877416, 1e-5);

	/* the other way round: t and the interval flip, p stays */
	assert_int_equal(stats_welch(b, 5, a, 5, 0.05, &w), 0);
	near(w.t, -1.897366596, 1e-6);
	near(w.p, 0.1075312, 1e-5);
	near(w.diff_hi, 0.8877416, 1e-5);
}

static void test_welch_zero_variance(void **state)
{
	const double a[] = {3, 3, 3};
	const double b[] = {3, 3, 3, 3};
	const double c[] = {4, 4, 4};
	struct stats_welch w;

	assert_int_equal(stats_welch(a, 3, b, 4, 0.05, &w), 0);
	near(w.p, 1, 0);
	near(w.diff_lo, 0, 0);
	near(w.diff_hi, 0, 0);
	assert_int_equal(stats_welch(a, 3, c, 3, 0.05, &w), 0);
	near(w.p, 0, 0);
	near(w.diff_lo, 1, 0);
	near(w.diff_hi, 1, 0);
}

/*
 * Samples near 1e100: the variances are finite, their squares are not, and
 * Welch-Satterthwaite's df came out NaN; GSL aborted the process on it
 * (found by fuzz/fuzz_report.c).  df stays in [min(na,nb)-1, na+nb-2].
 */
static void test_welch_extreme(void **state)
{
	const double a[] = {1e100, 3e100, 2e100}, b[] = {2e100, 5e100, 1e100, 4e100};
	struct stats_welch w;

	(void)state;
	assert_int_equal(stats_welch(a, 3, b, 4, 0.05, &w), 0);
	assert_true(w.df >= 2 && w.df <= 5);
	assert_true(w.p >= 0 && w.p <= 1);
}

static void test_welch_too_few(void **state)
{
	const double a[] = {1, 2};
	struct stats_welch w;
	assert_int_equal(stats_welch(a, 1, a, 2, 0.05, &w), -1);
	assert_int_equal(stats_welch(a, 2, a, 0, 0.05, &w), -1);
	near(w.p, 1, 0);
}

/* Paired t-test against a hand computation: d = 1, 2, 3, 2, 2 -> mean 2, sd 0.7071 */
static void test_paired(void **state)
{
	const double a[] = {10, 20, 30, 40, 50};
	const double b[] = {11, 22, 33, 42, 52};
	struct stats_welch w;

	assert_int_equal(stats_paired(a, b, 5, 0.05, &w), 0);
	assert_true(fabs(w.t - 2 / (sqrt(0.5) / sqrt(5))) < 1e-9); /* 6.3246 */
	assert_true(w.df == 4);
	assert_true(w.p > 0.0025 && w.p < 0.0035); /* t(4) = 6.32: p = 0.0032 */
	assert_true(w.diff_lo < 2 && w.diff_hi > 2);
	assert_true(fabs((w.diff_hi - 2) - 2.776445 * sqrt(0.5) / sqrt(5)) < 1e-5);
	/* a constant offset is certain; no difference at all is p = 1 */
	const double c[] = {12, 22, 32, 42, 52};
	assert_int_equal(stats_paired(a, c, 5, 0.05, &w), 0);
	assert_true(w.p == 0 && w.diff_lo == 2 && w.diff_hi == 2);
	assert_int_equal(stats_paired(a, a, 5, 0.05, &w), 0);
	assert_true(w.p == 1);
	assert_int_equal(stats_paired(a, b, 1, 0.05, &w), -1);
}

/*
 * TOST against a hand computation: d = 0.1, 0.3, -0.1, 0.1 -> mean 0.1, sd
 * 0.16330, se 0.081650, df 3.  Margin +-0.5: t = 7.3485 and 4.8990, p is the
 * larger one-sided p, Q(4.8990; 3) = 0.0081383; margin +-0.2: t = 3.6742 and
 * 1.2247, p = Q(1.2247; 3) = 0.15403.  The p-values are mpmath's regularized
 * incomplete beta (30 digits), not GSL's.
 */
static void test_tost(void **state)
{
	const double a[] = {10, 10, 10, 10};
	const double b[] = {10.1, 10.3, 9.9, 10.1};
	const double c[] = {12, 22, 32, 42, 52};
	const double d[] = {10, 20, 30, 40, 50};
	double p;

	assert_int_equal(stats_tost_paired(a, b, 4, -0.5, 0.5, &p), 0);
	near(p, 0.008138301729714277, 1e-9);
	assert_int_equal(stats_tost_paired(a, b, 4, -0.2, 0.2, &p), 0);
	near(p, 0.15403400462517866, 1e-9);
	/* an asymmetric band: the nearer bound decides (t = (0.5 - 0.1) / se again) */
	assert_int_equal(stats_tost_paired(a, b, 4, -5, 0.5, &p), 0);
	near(p, 0.008138301729714277, 1e-9);
	/* no spread: inside the band is certain, on or outside it is not */
	assert_int_equal(stats_tost_paired(d, c, 5, -3, 3, &p), 0);
	assert_true(p == 0);
	assert_int_equal(stats_tost_paired(d, c, 5, -2, 2, &p), 0);
	assert_true(p == 1);
	assert_int_equal(stats_tost_paired(a, b, 1, -1, 1, &p), -1);
	assert_int_equal(stats_tost_paired(a, b, 4, 1, 1, &p), -1);
}

/*
 * The paired test of log ratios against a hand computation: ln(b / a) =
 * 0.1, 0.3, -0.1, 0.1 (the d of test_tost) -> mean 0.1, se 0.081650, t =
 * 1.2247, df 3, p = 2 Q(1.2247; 3) = 0.30807; the interval 0.1 +- t(0.975;
 * 3) se = 0.1 +- 3.1824463 * 0.081650 back from logs is exp(.) - 1 =
 * -14.772% .. +43.311%, around exp(0.1) - 1 = +10.517%.  p-values and the
 * quantile are mpmath's (30 digits), not GSL's.
 */
static void test_paired_log(void **state)
{
	const double a[] = {10, 20, 40, 5};
	double b[4];
	const double d[] = {0.1, 0.3, -0.1, 0.1};
	struct stats_welch w;
	double p;

	for (int i = 0; i < 4; i++)
		b[i] = a[i] * exp(d[i]);
	assert_int_equal(stats_paired_log(a, b, 4, 0.05, &w), 0);
	near(w.t, 1.2247448713915890, 1e-9);
	assert_true(w.df == 3);
	near(w.p, 0.30806800925035734, 1e-9);
	near(w.diff, expm1(0.1), 1e-12);
	near(w.diff_lo, -0.14772467481120493, 1e-9);
	near(w.diff_hi, 0.43310820114334072, 1e-9);
	/*
	 * TOST against -50% .. +64.87% (exp(0.5) - 1): log bounds ln 0.5 and
	 * 0.5, the upper one nearer, t = 0.4 / se = 4.8990, p as in test_tost
	 */
	assert_int_equal(stats_tost_paired_log(a, b, 4, -0.5, expm1(0.5), &p), 0);
	near(p, 0.008138301729714277, 1e-9);
	/* +-10%: (ln 1.1 - 0.1) / se = -0.0574, p = Q(-0.0574; 3) = 0.52110 (mpmath) */
	assert_int_equal(stats_tost_paired_log(a, b, 4, -0.1, 0.1, &p), 0);
	near(p, 0.52109614559859944, 1e-9);

	/*
	 * A multiplicative, bimodal change (the tracking test's: 250 or 800
	 * against 20): raw differences t = 3.3453, p = 0.028695; log ratios t
	 * = 10.877, p = 0.00040547 (mpmath)
	 */
	const double base[] = {20, 21, 19, 20, 20}, patched[] = {250, 800, 250, 800, 250};
	assert_int_equal(stats_paired(base, patched, 5, 0.05, &w), 0);
	near(w.p, 0.028694563670181656, 1e-9);
	assert_int_equal(stats_paired_log(base, patched, 5, 0.05, &w), 0);
	near(w.t, 10.877481841603753, 1e-9);
	near(w.p, 0.00040546697960433487, 1e-11);
	near(w.diff, 18.915326163382319, 1e-9);

	/* a constant ratio is certain; a ratio of 1 everywhere is p = 1 */
	const double twice[] = {20, 40, 80, 10};
	assert_int_equal(stats_paired_log(a, twice, 4, 0.05, &w), 0);
	assert_true(w.p == 0);
	near(w.diff_lo, 1, 1e-12);
	near(w.diff_hi, 1, 1e-12);
	assert_int_equal(stats_paired_log(a, a, 4, 0.05, &w), 0);
	assert_true(w.p == 1 && w.diff == 0);

	/* no log of 0 or a negative figure: -1, for the caller to take raw differences */
	const double zero[] = {10, 0, 40, 5}, neg[] = {10, 20, -40, 5};
	assert_int_equal(stats_paired_log(a, zero, 4, 0.05, &w), -1);
	assert_true(w.p == 1);
	assert_int_equal(stats_paired_log(neg, a, 4, 0.05, &w), -1);
	assert_int_equal(stats_tost_paired_log(a, zero, 4, -0.1, 0.1, &p), -1);
	assert_true(p == 1);
	assert_int_equal(stats_paired_log(a, b, 1, 0.05, &w), -1);
	assert_int_equal(stats_tost_paired_log(a, b, 4, -1, 0.1, &p), -1);
	assert_int_equal(stats_tost_paired_log(a, b, 4, 0.1, 0.1, &p), -1);
}

static void test_bh(void **state)
{
	const double p[] = {0.01, 0.04, 0.03, 0.005, 0.5};
	const double want[] = {0.025, 0.05, 0.05, 0.025, 0.5};
	double q[5];

	stats_bh_adjust(p, 5, q);
	for (int i = 0; i < 5; i++)
		near(q[i], want[i], 1e-12);

	/* monotone: a smaller p never gets a larger q */
	const double p2[] = {0.02, 0.021};
	double q2[2];
	stats_bh_adjust(p2, 2, q2);
	near(q2[0], 0.021, 1e-12);
	near(q2[1], 0.021, 1e-12);

	/* capped at 1 */
	const double p3[] = {0.9, 0.95, 1.0};
	double q3[3];
	stats_bh_adjust(p3, 3, q3);
	for (int i = 0; i < 3; i++)
		near(q3[i], 1.0, 1e-12);
	stats_bh_adjust(p3, 0, q3); /* nothing to do, no crash */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_summarize),       cmocka_unit_test(test_cov),
	    cmocka_unit_test(test_percentile),      cmocka_unit_test(test_mad_sd),
	    cmocka_unit_test(test_welch_reference), cmocka_unit_test(test_welch_zero_variance),
	    cmocka_unit_test(test_welch_extreme),   cmocka_unit_test(test_welch_too_few),
	    cmocka_unit_test(test_paired),          cmocka_unit_test(test_tost),
	    cmocka_unit_test(test_paired_log),      cmocka_unit_test(test_bh),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
