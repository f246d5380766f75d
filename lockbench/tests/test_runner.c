/* test_runner.c - the watchdog's stall time and stall clock (runner.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

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

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_stall_scales_with_threads),
	    cmocka_unit_test(test_stall_emulated),
	    cmocka_unit_test(test_stall_credit),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
