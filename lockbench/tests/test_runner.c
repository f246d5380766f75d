/*
 * test_runner.c - the watchdog's stall time and stall clock, and when it
 * prints a progress line and what the line says (runner.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "../src/runner.h"

static void test_stall_scales_with_threads(void **state)
{
	struct runner_opts o = RUNNER_OPTS_DEFAULT;
	assert_int_equal(runner_stall_ms(&o, 1), 2000);
	assert_int_equal(runner_stall_ms(&o, 10), 4000);
	assert_int_equal(runner_stall_ms(&o, 100), 6000);
}

/* the false lockup of hot/pthread at 2 threads under TCG: 2.6 s was not enough */
static void test_stall_emulated(void **state)
{
	struct runner_opts o = RUNNER_OPTS_DEFAULT;
	int native = runner_stall_ms(&o, 2);
	o.emulated = true;
	assert_int_equal(runner_stall_ms(&o, 2), RUNNER_EMULATED_STALL * native);
	assert_true(runner_stall_ms(&o, 2) > 2600);
	o.stall_ms = 5000;
	assert_int_equal(runner_stall_ms(&o, 1), 25000);
}

static void test_stall_credit(void **state)
{
	uint64_t ms = 1000000;
	assert_int_equal(runner_stall_credit_ns(0), 0);
	assert_int_equal(runner_stall_credit_ns(20 * ms), 20 * ms);
	assert_int_equal(runner_stall_credit_ns(RUNNER_STALL_CREDIT_MS * ms),
	                 RUNNER_STALL_CREDIT_MS * ms);
	/* the watchdog itself was not scheduled for 2.6 s: counted as the cap */
	assert_int_equal(runner_stall_credit_ns(2600 * ms), RUNNER_STALL_CREDIT_MS * ms);
	/* looks 20 ms apart accrue the stall at the wall clock's pace */
	uint64_t stalled = 0;
	for (int i = 0; i < 100; i++)
		stalled += runner_stall_credit_ns(20 * ms);
	assert_int_equal(stalled, 2000 * ms);
}

/* A line every period in which the counters grew, never without growth. */
static void test_progress_due(void **state)
{
	uint64_t s = 1000000000;
	/* off */
	assert_false(runner_progress_due(0, 100 * s, 0, 10, 0));
	assert_false(runner_progress_look(0, 100 * s, 0));
	/* the period has not passed */
	assert_false(runner_progress_look(5, 4 * s, 0));
	assert_false(runner_progress_due(5, 4 * s, 0, 10, 0));
	/* it has, and the counters grew */
	assert_true(runner_progress_look(5, 5 * s, 0));
	assert_true(runner_progress_due(5, 5 * s, 0, 10, 0));
	assert_true(runner_progress_due(5, 11 * s, 6 * s, 11, 10));
	/* a hung point: the period passed, nothing grew, no line */
	assert_true(runner_progress_look(5, 11 * s, 6 * s));
	assert_false(runner_progress_due(5, 11 * s, 6 * s, 10, 10));
	/* a clock that went back is no period */
	assert_false(runner_progress_due(5, 1 * s, 6 * s, 11, 10));
}

static void test_progress_format(void **state)
{
	char line[256];
	int n =
	    runner_progress_format(line, sizeof(line), "hot", "pthread", 4, 123456, 2345000000u);
	assert_string_equal(line, "lockbench: hot pthread 4 threads: 123456 operations so far "
	                          "(2.3 s)\n");
	assert_int_equal(n, (int)strlen(line));
	/* kernel workloads have no lock; aim7-mix counts users */
	runner_progress_format(line, sizeof(line), "aim7-mix", NULL, 2000, 7, 812400000000u);
	assert_string_equal(
	    line, "lockbench: aim7-mix kernel 2000 users: 7 operations so far (812.4 s)\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_stall_scales_with_threads),
	    cmocka_unit_test(test_stall_emulated),
	    cmocka_unit_test(test_stall_credit),
	    cmocka_unit_test(test_progress_due),
	    cmocka_unit_test(test_progress_format),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
