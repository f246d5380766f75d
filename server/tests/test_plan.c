/*
 * test_plan.c - the MDE the server plans rounds with, and the rows a plan
 * marks as not resolvable (plan.h), against hand-worked figures: t
 * quantiles from printed tables (t(0.975, 4) = 2.776445, t(0.8, 4) =
 * 0.940965, t(0.975, 5) = 2.570582, t(0.8, 5) = 0.919544, t(0.975, 11) =
 * 2.200985, t(0.8, 11) = 0.875530).  Nothing is connected to.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../config.h"
#include "../plan.h"
#include "compare.h"

static void test_mde(void **state)
{
	(void)state;
	/* (t(0.975, n-1) + t(0.8, n-1)) * sd / sqrt(n) */
	assert_true(fabs(plan_mde(0.02, 5, 0.05) - 0.0332495) < 1e-6);
	assert_true(fabs(plan_mde(0.02, 6, 0.05) - 0.0284968) < 1e-6);
	assert_true(fabs(plan_mde(0.5, 12, 0.05) - 0.4440566) < 1e-6);
	assert_true(plan_mde(0, 5, 0.05) == 0);
	assert_true(isinf(plan_mde(0.02, 1, 0.05)));
	assert_true(isinf(plan_mde(NAN, 5, 0.05)));
}

static void row(struct compare_row *r, const char *workload, const char *params, const char *metric,
                enum verdict v)
{
	memset(r, 0, sizeof(*r));
	r->workload = strdup(workload);
	r->lock = strdup("pthread");
	r->metric = strdup(metric);
	r->params_key = strdup(params);
	r->headline = compare_row_is_headline(workload, metric);
	r->verdict = v;
}

static void test_mark_rows(void **state)
{
	struct comparison c;
	const char *plan =
	    "{\"rounds\": 6, \"rows\": ["
	    "{\"workload\": \"hot\", \"lock\": \"pthread\", \"params\": \"threads=2\", "
	    "\"metric\": \"ops_per_sec\", \"mde_at_max\": 0.444, \"resolvable\": false},"
	    "{\"workload\": \"uncontended\", \"lock\": \"pthread\", \"params\": \"threads=1\", "
	    "\"metric\": \"ns_per_pair\", \"mde_at_max\": 0.01, \"resolvable\": true}]}";

	(void)state;
	comparison_init(&c);
	c.rows = calloc(4, sizeof(*c.rows));
	c.nrows = 4;
	row(&c.rows[0], "hot", "threads=2", "ops_per_sec", VERDICT_INCONCLUSIVE);
	row(&c.rows[1], "uncontended", "threads=1", "ns_per_pair", VERDICT_NO_CHANGE);
	row(&c.rows[2], "hot", "threads=4", "ops_per_sec", VERDICT_NO_CHANGE);
	row(&c.rows[3], "hot", "threads=2", "cov", VERDICT_INCONCLUSIVE);
	/* before the plan: the inconclusive hot row makes the comparison inconclusive */
	assert_int_equal(comparison_overall(&c), VERDICT_INCONCLUSIVE);
	plan_mark_rows(plan, &c);
	assert_true(fabs(c.rows[0].unresolvable - 0.444) < 1e-12);
	assert_true(c.rows[1].unresolvable == 0); /* resolvable */
	assert_true(c.rows[2].unresolvable == 0); /* another point */
	assert_true(c.rows[3].unresolvable == 0); /* another metric */
	assert_false(compare_row_decides(&c.rows[0]));
	assert_int_equal(comparison_overall(&c), VERDICT_NO_CHANGE);
	/* a regression found on a row the machine cannot resolve still counts */
	c.rows[0].verdict = VERDICT_REGRESSION;
	assert_true(compare_row_decides(&c.rows[0]));
	assert_int_equal(comparison_overall(&c), VERDICT_REGRESSION);
	assert_int_equal(plan_first_rounds(plan), 6);
	assert_int_equal(plan_first_rounds(NULL), 0);
	plan_mark_rows(NULL, &c); /* no plan: nothing to mark, nothing breaks */
	plan_mark_rows("not json", &c);
	comparison_release(&c);
}

/*
 * The looks of a planned job, worked by hand with --min-rounds 5: the first
 * look (at 5 when the plan is past it), the planned rounds, then 5 at a
 * time to the limit, and one for a confirmation.
 */
static void test_looks(void **state)
{
	(void)state;
	srv_cfg.min_rounds = 5;
	/* 5, 16, 20 */
	assert_int_equal(plan_looks("{\"rounds\": 16, \"max_rounds\": 20}"), 4);
	/* 5, 8, 13, 18, 20 */
	assert_int_equal(plan_looks("{\"rounds\": 8, \"max_rounds\": 20}"), 6);
	/* 3, 8, 13, 18, 20: a plan at or under --min-rounds looks first at its rounds */
	assert_int_equal(plan_looks("{\"rounds\": 3, \"max_rounds\": 20}"), 6);
	/* 5, 6 (the limit) */
	assert_int_equal(plan_looks("{\"rounds\": 6, \"max_rounds\": 6}"), 3);
	/* 4 (the limit) */
	assert_int_equal(plan_looks("{\"rounds\": 4, \"max_rounds\": 4}"), 2);
	assert_int_equal(plan_looks(NULL), 0);
	assert_int_equal(plan_looks("not json"), 0);
}

/* The next look, by hand with --min-rounds 5: the one schedule results_evaluate asks by. */
static void test_next_look(void **state)
{
	(void)state;
	srv_cfg.min_rounds = 5;
	assert_int_equal(plan_next_look(16, 5, 20), 16);  /* first look done: the plan's rounds */
	assert_int_equal(plan_next_look(16, 16, 20), 20); /* then a step, capped */
	assert_int_equal(plan_next_look(8, 8, 20), 13);
	assert_int_equal(plan_next_look(0, 5, 20), 10); /* no plan: a step at a time */
	assert_int_equal(plan_next_look(0, 18, 20), 20);
	assert_int_equal(plan_next_look(30, 5, 20), 20); /* never past the limit */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_mde),
	    cmocka_unit_test(test_mark_rows),
	    cmocka_unit_test(test_looks),
	    cmocka_unit_test(test_next_look),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
