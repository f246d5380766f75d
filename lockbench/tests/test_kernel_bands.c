/*
 * test_kernel_bands.c - the seeds suite's composition (its bands, a boot
 * each, and the points the guest runs) and the rows of its table by bands
 * read back from a run's document (kernel_band_rows).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "../src/kernel.h"
#include "../src/suite.h"

/* The seeds' three bands, each at its top count, each boot within 1500 s. */
static void test_seeds_bands(void **state)
{
	const struct suite_band *b;
	assert_int_equal(suite_bands("seeds", &b), 3);
	const int want[3][3] = {{10, 100, 100}, {200, 1000, 1000}, {1100, 2000, 2000}};
	for (int i = 0; i < 3; i++) {
		assert_int_equal(b[i].umin, want[i][0]);
		assert_int_equal(b[i].umax, want[i][1]);
		assert_int_equal(b[i].users, want[i][2]);
		assert_true(b[i].limit_s > 0 && b[i].limit_s <= 1500);
		assert_true(i == 0 || b[i].limit_s >= b[i - 1].limit_s);
	}
	/* the quick suite is one boot, as before */
	assert_int_equal(suite_bands("quick", &b), 0);
	assert_null(b);
	assert_int_equal(suite_bands("smoke", &b), 0);
}

/* The guest's seeds plan: the four workloads at the bands' counts. */
static void test_seeds_plan(void **state)
{
	struct suite_overrides ov = {0};
	struct plan plan = {0};
	char err[256];
	assert_int_equal(suite_plan("seeds", &ov, &plan, err, sizeof(err)), 0);
	const char *const names[] = {"pipe-mutex", "epoll-ctl", "seq-read", "aim7-mix"};
	const int users[] = {100, 1000, 2000};
	assert_int_equal(plan.n, 12);
	for (size_t i = 0; i < plan.n; i++) {
		assert_string_equal(plan.points[i].w->name, names[i / 3]);
		assert_int_equal(plan.points[i].p.threads, users[i % 3]);
		assert_null(plan.points[i].ops);
	}
	plan_release(&plan);

	/* a band's boot: --users 1000 runs each workload once at 1000 */
	int one = 1000;
	ov.threads = &one;
	ov.nthreads = 1;
	assert_int_equal(suite_plan("seeds", &ov, &plan, err, sizeof(err)), 0);
	assert_int_equal(plan.n, 4);
	for (size_t i = 0; i < plan.n; i++)
		assert_int_equal(plan.points[i].p.threads, 1000);
	plan_release(&plan);
}

static struct lb_run *point(struct lb_result *r, const char *w, int users, double v, int n)
{
	struct lb_run *run = result_add_run(r, w, "kernel");
	run_set_param_num(run, "duration_ms", 1000);
	run_set_param_num(run, "users", users);
	struct lb_metric *m = run_add_metric(run, "jpm", "JPM", true, v);
	for (int i = 0; i < n; i++)
		metric_add_sample(m, v);
	return run;
}

/* Figures by band; a point's lockup, a boot's lockup and a boot not run. */
static void test_band_rows(void **state)
{
	const struct suite_band bands[] = {
	    {10, 100, 100, 600}, {200, 1000, 1000, 900}, {1100, 2000, 2000, 1500}};
	struct report_band_row rows[3];
	const char *unit;
	struct lb_result r;
	bool booted[3] = {true, true, true};

	result_init(&r);
	point(&r, "aim7-mix", 100, 1500, 2);
	point(&r, "pipe-mutex", 1000, 9000, 2);
	run_set_lockup(point(&r, "aim7-mix", 1000, 0, 0), "stall", "no progress", NULL);
	struct lb_run *g = result_add_run(&r, "lockbench-guest", "kernel");
	run_set_param_num(g, "users", 2000);
	run_set_lockup(g, "hung-task", "blocked for more than 120 seconds", NULL);

	assert_int_equal(kernel_band_rows(&r, "aim7-mix", bands, 3, booted, rows, &unit), 2);
	assert_string_equal(unit, "JPM");
	assert_int_equal(rows[0].users, 100);
	assert_true(rows[0].mean == 1500);
	assert_int_equal(rows[0].n, 2);
	assert_null(rows[0].note);
	assert_int_equal(rows[1].n, 0);
	assert_string_equal(rows[1].note, "lockup");
	assert_string_equal(rows[1].kind, "stall");
	assert_int_equal(rows[2].umin, 1100);
	assert_int_equal(rows[2].umax, 2000);
	assert_int_equal(rows[2].n, 0);
	assert_string_equal(rows[2].note, "the band's boot locked up");
	assert_string_equal(rows[2].kind, "hung-task");

	booted[2] = false;
	result_release(&r);
	result_init(&r);
	point(&r, "pipe-mutex", 100, 9000, 2);
	assert_int_equal(kernel_band_rows(&r, "pipe-mutex", bands, 3, booted, rows, &unit), 1);
	assert_int_equal(rows[0].n, 2);
	assert_non_null(strstr(rows[1].note, "no figure"));
	assert_non_null(strstr(rows[2].note, "not run"));
	result_release(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_seeds_bands),
	    cmocka_unit_test(test_seeds_plan),
	    cmocka_unit_test(test_band_rows),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
