/*
 * test_changepoint.c - E-Divisive against values worked by hand, a clean
 * step, one outlier, a bimodal metric and a step below the minimum effect.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>

#include "changepoint.h"

#define near(a, b, eps) assert_true(fabs((a) - (b)) <= (eps))

/*
 * {0,0,1,1} split in the middle: 4 cross pairs at distance 1, no distance
 * inside a side: (2*2/4) * (2*4/(2*2) - 0 - 0) = 2.
 * {0,1,2,3}: cross distances 2+3+1+2 = 8, one pair at 1 on each side:
 * 1 * (2*8/4 - 1 - 1) = 2.  {0,1,2,3} with alpha 2: cross 4+9+1+4 = 18,
 * sides 1 and 1: 1 * (36/4 - 2) = 7.
 */
static void test_q_by_hand(void **state)
{
	const double a[] = {0, 0, 1, 1}, b[] = {0, 1, 2, 3};
	const double c[] = {5, 5, 5, 9, 9, 9};

	near(changepoint_q(a, 4, 2, 1.0), 2.0, 1e-12);
	near(changepoint_q(b, 4, 2, 1.0), 2.0, 1e-12);
	near(changepoint_q(b, 4, 2, 2.0), 7.0, 1e-12);
	/* 9 cross pairs at 4: (9/6) * (2*36/9) = 12 */
	near(changepoint_q(c, 6, 3, 1.0), 12.0, 1e-12);
	/* a side of one value has no inside distance: not a split */
	near(changepoint_q(c, 6, 1, 1.0), 0.0, 0);
}

/* A little deterministic noise around level: +-1% */
static double noisy(double level, int i)
{
	static const double e[] = {0.4, -0.7, 0.1, 0.9, -0.3, -0.8, 0.6, -0.1, 0.2, -0.5, 0.8};

	return level * (1 + e[i % 11] / 100);
}

static void test_one_step(void **state)
{
	struct changepoint_opts o;
	struct changepoint_step s[4];
	double x[20];
	int i, n;

	changepoint_defaults(&o);
	for (i = 0; i < 20; i++)
		x[i] = noisy(i < 11 ? 100 : 130, i);
	n = changepoint_find(x, 20, &o, s, 4);
	assert_int_equal(n, 1);
	assert_int_equal(s[0].at, 11);
	assert_true(s[0].p <= 0.05);
	near(s[0].change, 0.30, 0.02);

	/* ten values, five a side: still found (the fewest the test resolves at 5%) */
	for (i = 0; i < 10; i++)
		x[i] = noisy(i < 5 ? 50 : 40, i);
	n = changepoint_find(x, 10, &o, s, 4);
	assert_int_equal(n, 1);
	assert_int_equal(s[0].at, 5);
	near(s[0].change, -0.20, 0.02);
}

static void test_one_outlier(void **state)
{
	struct changepoint_opts o;
	struct changepoint_step s[4];
	double x[20];
	int i, where[] = {0, 1, 7, 10, 18, 19};

	changepoint_defaults(&o);
	for (size_t w = 0; w < sizeof(where) / sizeof(where[0]); w++) {
		for (i = 0; i < 20; i++)
			x[i] = noisy(100, i);
		x[where[w]] = 1000; /* one run ten times off */
		assert_int_equal(changepoint_find(x, 20, &o, s, 4), 0);
		x[where[w]] = 10;
		assert_int_equal(changepoint_find(x, 20, &o, s, 4), 0);
	}
}

static void test_bimodal(void **state)
{
	/* hot on 2 vCPUs: a run lands in one of two modes, at random */
	const int mode[24] = {0, 1, 1, 0, 1, 0, 0, 0, 1, 1, 0, 1,
	                      0, 1, 1, 0, 0, 1, 0, 1, 1, 0, 0, 1};
	struct changepoint_opts o;
	struct changepoint_step s[4];
	double x[24];
	int i;

	changepoint_defaults(&o);
	for (i = 0; i < 24; i++)
		x[i] = noisy(mode[i] ? 31e6 : 18e6, i);
	assert_int_equal(changepoint_find(x, 24, &o, s, 4), 0);
	/* the same modes, everything halved from 12 on (a step wider than the modes' gap): found */
	for (i = 12; i < 24; i++)
		x[i] *= 0.5;
	assert_int_equal(changepoint_find(x, 24, &o, s, 4), 1);
	assert_int_equal(s[0].at, 12);
	assert_true(s[0].change < -0.2);
}

static void test_small_and_short(void **state)
{
	struct changepoint_opts o;
	struct changepoint_step s[4];
	double x[20];
	int i;

	changepoint_defaults(&o);
	/* a clean step of 0.5%: significant, but below the minimum effect */
	for (i = 0; i < 20; i++)
		x[i] = i < 10 ? 100 : 100.5;
	assert_int_equal(changepoint_find(x, 20, &o, s, 4), 0);
	o.min_effect = 0.001;
	assert_int_equal(changepoint_find(x, 20, &o, s, 4), 1);
	/* too short a series: nothing, never a crash */
	changepoint_defaults(&o);
	assert_int_equal(changepoint_find(x, 3, &o, s, 4), 0);
	assert_int_equal(changepoint_find(x, 0, &o, s, 4), 0);
}

static void test_two_steps(void **state)
{
	struct changepoint_opts o;
	struct changepoint_step s[4];
	double x[30];
	int i, n;

	changepoint_defaults(&o);
	/* a regression at 10 and its fix at 20 */
	for (i = 0; i < 30; i++)
		x[i] = noisy(i >= 10 && i < 20 ? 80 : 100, i);
	n = changepoint_find(x, 30, &o, s, 4);
	assert_int_equal(n, 2);
	assert_int_equal(s[0].at, 10);
	assert_int_equal(s[1].at, 20);
	assert_true(s[0].change < -0.15 && s[1].change > 0.15);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_q_by_hand),       cmocka_unit_test(test_one_step),
	    cmocka_unit_test(test_one_outlier),     cmocka_unit_test(test_bimodal),
	    cmocka_unit_test(test_small_and_short), cmocka_unit_test(test_two_steps),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
