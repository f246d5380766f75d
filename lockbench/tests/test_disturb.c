/*
 * test_disturb.c - a sample's disturbance from two marks, and which samples
 * are taken again (disturb.h), with hand-worked figures.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "../src/disturb.h"

/* Two marks 100 ms apart; the thread ran run_ms of them, waited delay_ms. */
static void marks(struct disturb_mark *a, struct disturb_mark *b, double run_ms, double delay_ms)
{
	memset(a, 0, sizeof(*a));
	a->wall_ns = 1000000000ull;
	a->run_ns = 5000000;
	a->delay_ns = 7000000;
	a->steal_jiffies = 40;
	a->total_jiffies = 1000;
	a->nivcsw = 3;
	a->migrations = 1;
	*b = *a;
	b->wall_ns += 100000000;
	b->run_ns += (uint64_t)(run_ms * 1e6);
	b->delay_ns += (uint64_t)(delay_ms * 1e6);
}

static void test_between(void **state)
{
	struct disturb_mark a, b;
	struct lb_disturb d;

	/* ran 93 ms of 100, waited 4 ms in the run queue; 2 of 10 jiffies stolen */
	marks(&a, &b, 93, 4);
	b.steal_jiffies += 2;
	b.total_jiffies += 10;
	b.nivcsw += 5;
	b.migrations += 2;
	disturb_between(&a, &b, &d);
	assert_float_equal(d.lost_pct, 7.0, 1e-9);
	assert_float_equal(d.delay_pct, 4.0, 1e-9);
	assert_float_equal(d.steal_pct, 20.0, 1e-9);
	assert_float_equal(d.nivcsw, 5, 0);
	assert_float_equal(d.migrations, 2, 0);

	/* nothing read (no schedstat, no /proc/stat): all 0, nothing blamed */
	memset(&a, 0, sizeof(a));
	b = a;
	b.wall_ns = 100000000;
	disturb_between(&a, &b, &d);
	assert_float_equal(d.lost_pct + d.delay_pct + d.steal_pct + d.nivcsw, 0, 0);
	assert_false(disturb_exceeds(&d, DISTURB_LIMIT_DEFAULT));

	/* counters that went backwards (another thread's file) give 0, not a wrap */
	marks(&a, &b, 99, 0);
	b.nivcsw = 0;
	b.delay_ns = 0;
	disturb_between(&a, &b, &d);
	assert_float_equal(d.nivcsw, 0, 0);
	assert_float_equal(d.delay_pct, 0, 0);
	assert_float_equal(d.lost_pct, 1.0, 1e-9);
}

static void test_exceeds(void **state)
{
	struct lb_disturb d = {0};

	/* the lost share decides, against the limit */
	d.lost_pct = 5.0;
	assert_false(disturb_exceeds(&d, 5.0)); /* at the limit: kept */
	d.lost_pct = 5.01;
	assert_true(disturb_exceeds(&d, 5.0));
	assert_false(disturb_exceeds(&d, 10.0));
	/* limit 0 records only */
	d.lost_pct = 90;
	assert_false(disturb_exceeds(&d, 0));
	/* no run time read: steal plus run-queue delay stand in for it */
	memset(&d, 0, sizeof(d));
	d.steal_pct = 3;
	d.delay_pct = 2.5;
	assert_true(disturb_exceeds(&d, 5.0));
	d.delay_pct = 1.5;
	assert_false(disturb_exceeds(&d, 5.0));
	/* switches and migrations alone do not repeat a sample: their time is in lost */
	memset(&d, 0, sizeof(d));
	d.nivcsw = 100;
	d.migrations = 10;
	d.lost_pct = 0.5;
	assert_false(disturb_exceeds(&d, 5.0));
}

/* A mark of the calling thread reads real figures that only grow. */
static void test_mark_live(void **state)
{
	struct disturb_mark a, b;
	struct lb_disturb d;
	volatile unsigned long x = 0;

	disturb_mark(&a, -1);
	for (unsigned long i = 0; i < 20000000; i++)
		x += i;
	disturb_mark(&b, a.cpu);
	assert_true(b.wall_ns > a.wall_ns);
	assert_true(b.run_ns >= a.run_ns);
	disturb_between(&a, &b, &d);
	assert_true(d.lost_pct >= 0 && d.lost_pct <= 100);
	assert_true(d.steal_pct >= 0 && d.steal_pct <= 100);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_between),
	    cmocka_unit_test(test_exceeds),
	    cmocka_unit_test(test_mark_live),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
