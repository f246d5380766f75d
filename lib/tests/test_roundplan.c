/*
 * test_roundplan.c - the MDE rounds are planned with, a plan built from a
 * profile, its looks, and the rows a plan marks as not resolvable
 * (roundplan.h), against hand-worked figures: t
 * quantiles from printed tables (t(0.975, 4) = 2.776445, t(0.8, 4) =
 * 0.940965, t(0.975, 5) = 2.570582, t(0.8, 5) = 0.919544, t(0.975, 11) =
 * 2.200985, t(0.8, 11) = 0.875530, t(0.975, 2) = 4.302653, t(0.8, 2) =
 * 1.060660, t(0.975, 3) = 3.182446, t(0.8, 3) = 0.978472, t(0.975, 19) =
 * 2.093024, t(0.8, 19) = 0.861310).  Nothing is connected to.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "compare.h"
#include "roundplan.h"

static void test_mde(void **state)
{
	(void)state;
	/* one test: (t(0.975, n-1) + t(0.8, n-1)) * sd / sqrt(n) */
	assert_true(fabs(plan_mde_test(0.02, 5, 0.05) - 0.0332495) < 1e-6);
	assert_true(fabs(plan_mde_test(0.02, 6, 0.05) - 0.0284968) < 1e-6);
	assert_true(fabs(plan_mde_test(0.5, 12, 0.05) - 0.4440566) < 1e-6);
	assert_true(plan_mde_test(0, 5, 0.05) == 0);
	assert_true(isinf(plan_mde_test(0.02, 1, 0.05)));
	assert_true(isinf(plan_mde_test(NAN, 5, 0.05)));
	/* the policy's: PLAN_POLICY_FACTOR times that */
	assert_true(fabs(plan_mde(0.02, 5, 0.05) - 1.75 * 0.0332495) < 1e-6);
	assert_true(fabs(plan_mde(0.5, 12, 0.05) - 1.75 * 0.4440566) < 1e-6);
	assert_true(isinf(plan_mde(0.02, 1, 0.05)));
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
	/*
	 * Said up front, and still deciding: the comparison stays inconclusive
	 * (no Tested-by past a row not shown unchanged), but the row buys no
	 * rounds it could not use.
	 */
	assert_true(compare_row_decides(&c.rows[0]));
	assert_false(compare_row_wants_rounds(&c.rows[0]));
	assert_int_equal(comparison_overall(&c), VERDICT_INCONCLUSIVE);
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
	/* 5, 16, 20 */
	assert_int_equal(plan_looks("{\"rounds\": 16, \"max_rounds\": 20}", 5), 4);
	/* 5, 8, 13, 18, 20 */
	assert_int_equal(plan_looks("{\"rounds\": 8, \"max_rounds\": 20}", 5), 6);
	/* 3, 8, 13, 18, 20: a plan at or under --min-rounds looks first at its rounds */
	assert_int_equal(plan_looks("{\"rounds\": 3, \"max_rounds\": 20}", 5), 6);
	/* 5, 6 (the limit) */
	assert_int_equal(plan_looks("{\"rounds\": 6, \"max_rounds\": 6}", 5), 3);
	/* 4 (the limit) */
	assert_int_equal(plan_looks("{\"rounds\": 4, \"max_rounds\": 4}", 5), 2);
	assert_int_equal(plan_looks(NULL, 5), 0);
	assert_int_equal(plan_looks("not json", 5), 0);
}

/* The next look, by hand with --min-rounds 5: the one schedule the server asks by. */
static void test_next_look(void **state)
{
	(void)state;
	assert_int_equal(plan_next_look(16, 5, 20, 5), 16); /* first look done: the plan's rounds */
	assert_int_equal(plan_next_look(16, 16, 20, 5), 20); /* then a step, capped */
	assert_int_equal(plan_next_look(8, 8, 20, 5), 13);
	assert_int_equal(plan_next_look(0, 5, 20, 5), 10); /* no plan: a step at a time */
	assert_int_equal(plan_next_look(0, 18, 20, 5), 20);
	assert_int_equal(plan_next_look(30, 5, 20, 5), 20); /* never past the limit */
}

/*
 * A plan from a profile of four points, by hand (alpha 0.05, --min-rounds
 * 5, --max-rounds 15, 20 s a round inside a 3600 s budget: the limit is 15,
 * and resolution is judged at 0.05 / (15 / 5 + 2) = 0.01, one-sided):
 * - uncontended, sd 1%: at 4 rounds one test's MDE (the first look's
 *   measure) is (3.182446 + 0.978472) * 0.01 / 2 = 2.08% <= 3% but the
 *   resolution (4.540703 + 1.637744) * 0.01 / 2 = 3.09% > its 3% margin;
 *   at 5 (3.746947 + 1.533206) * 0.01 / sqrt(5) = 2.36%: 5 rounds;
 * - hot at 8 threads, sd 30%: resolution at 15 rounds (2.624494 +
 *   1.345030) * 0.3 / sqrt(15) = 30.75% > its 10% margin: not resolvable,
 *   and said so; its MDE there 1.75 * (2.144787 + 0.868055) * 0.3 /
 *   sqrt(15) = 40.84%;
 * - hot at 4 threads, sd 12%: MDE at 15 rounds 16.34%, past its 10%
 *   target, and resolution 12.30%: an unchanged row would rarely show
 *   no-change, so not resolvable;
 * - hot's cov is no headline: left out.
 * The first rounds are the resolvable rows' most, 5.
 */
static void test_build(void **state)
{
	const struct plan_settings s = {0.05, 5, 15, 3600, 0.03, 0.10};
	const struct profile_point pts[] = {
	    {"uncontended", "kmutex", "threads=1", "ns_per_pair", 1, 0.01},
	    {"hot", "kmutex", "threads=8", "ops_per_sec", 8, 0.3},
	    {"hot", "kmutex", "threads=8", "cov", 8, 0.5},
	    {"hot", "kmutex", "threads=4", "ops_per_sec", 4, 0.12},
	};
	int first = 0, cap = 0;
	json_t *plan, *rows, *r;
	char *text;
	struct comparison c;

	(void)state;
	assert_true(fabs(plan_level(0.05, 5, 15) - 0.01) < 1e-12);
	assert_true(fabs(plan_resolution(0.01, 5, 0.01) - 0.0236136) < 1e-6);
	assert_true(isinf(plan_resolution(0.01, 1, 0.01)));
	assert_true(isinf(plan_resolution(0.01, 5, 0)));
	plan = plan_build(pts, 4, 20, "2026-12-02T00:00:00Z", &s, &first, &cap);
	assert_non_null(plan);
	assert_int_equal(first, 5);
	assert_int_equal(cap, 15);
	assert_int_equal(json_integer_value(json_object_get(plan, "rounds")), 5);
	assert_int_equal(json_integer_value(json_object_get(plan, "max_rounds")), 15);
	assert_true(fabs(json_real_value(json_object_get(plan, "level")) - 0.01) < 1e-12);
	rows = json_object_get(plan, "rows");
	assert_int_equal(json_array_size(rows), 3);
	r = json_array_get(rows, 0);
	assert_int_equal(json_integer_value(json_object_get(r, "rounds")), 5);
	assert_true(json_is_true(json_object_get(r, "resolvable")));
	r = json_array_get(rows, 1);
	assert_true(json_is_null(json_object_get(r, "rounds")));
	assert_true(json_is_false(json_object_get(r, "resolvable")));
	assert_true(fabs(json_real_value(json_object_get(r, "mde_at_max")) - 0.40840) < 1e-4);
	assert_true(fabs(json_real_value(json_object_get(r, "resolution_at_max")) - 0.30748) <
	            1e-4);
	r = json_array_get(rows, 2);
	assert_true(json_is_false(json_object_get(r, "resolvable")));
	assert_true(fabs(json_real_value(json_object_get(r, "mde_at_max")) - 0.16336) < 1e-4);
	assert_true(fabs(json_real_value(json_object_get(r, "resolution_at_max")) - 0.12299) <
	            1e-4);
	assert_int_equal(json_array_size(json_object_get(plan, "unresolvable")), 2);
	assert_string_equal(
	    json_string_value(json_array_get(json_object_get(plan, "unresolvable"), 0)),
	    "this machine cannot resolve less than 30.7% on hot kmutex threads=8 "
	    "ops_per_sec (margin +-10%, at 15 rounds)");
	/* the plan as the server stores it marks the row it cannot resolve */
	text = json_dumps(plan, JSON_COMPACT);
	comparison_init(&c);
	c.rows = calloc(1, sizeof(*c.rows));
	c.nrows = 1;
	row(&c.rows[0], "hot", "threads=8", "ops_per_sec", VERDICT_INCONCLUSIVE);
	free(c.rows[0].lock);
	c.rows[0].lock = strdup("kmutex");
	plan_mark_rows(text, &c);
	assert_true(fabs(c.rows[0].unresolvable - 0.30748) < 1e-4);
	comparison_release(&c);
	free(text);
	json_decref(plan);

	/* 600 s a round in a 3600 s budget: 6 rounds at most */
	plan = plan_build(pts, 1, 600, "", &s, &first, &cap);
	assert_int_equal(cap, 6);
	assert_int_equal(first, 5);
	json_decref(plan);
	/* 3000 s a round: never fewer than a paired test can use */
	plan = plan_build(pts, 1, 3000, "", &s, &first, &cap);
	assert_int_equal(cap, COMPARE_MIN_PAIRS);
	assert_int_equal(first, COMPARE_MIN_PAIRS);
	json_decref(plan);
	/* nothing resolvable: the first rounds are --min-rounds */
	plan = plan_build(&pts[1], 1, 20, "", &s, &first, &cap);
	assert_int_equal(first, 5);
	json_decref(plan);
	/*
	 * a sleeping lock's worst waits (A/A per-round spread 28% and 50%):
	 * their target MDE is their margin, so the plan asks for the rounds
	 * that reach it, not for its limit
	 */
	const struct profile_point tails[] = {
	    {"long-hold", "kmutex", "threads=2", "wait_worst_us", 2, 0.28},
	    {"long-hold", "kmutex", "threads=2", "wait_p999_worst_us", 2, 0.50},
	};
	plan = plan_build(tails, 2, 20, "", &s, &first, &cap);
	rows = json_object_get(plan, "rows");
	assert_int_equal(json_array_size(rows), 2);
	r = json_array_get(rows, 0);
	assert_true(json_real_value(json_object_get(r, "target")) == COMPARE_MARGIN_WORST_WAIT);
	assert_int_equal(json_integer_value(json_object_get(r, "rounds")), 5);
	r = json_array_get(rows, 1);
	assert_true(json_is_true(json_object_get(r, "resolvable")));
	assert_true(json_integer_value(json_object_get(r, "rounds")) > 5);
	assert_true(first == json_integer_value(json_object_get(r, "rounds")) && first < cap);
	json_decref(plan);
}

/* The options a planned job is judged with (roundplan.h, plan_compare_opts). */
static void test_compare_opts(void **state)
{
	struct compare_opts o = COMPARE_OPTS_DEFAULT;

	(void)state;
	o.looks = 5;
	plan_compare_opts("{\"rounds\": 4, \"max_rounds\": 20}", 5, &o);
	/* 4, 9, 14, 19, 20 and a confirmation */
	assert_int_equal(o.looks, 6);
	assert_int_equal(o.min_samples, 4);
	o = (struct compare_opts)COMPARE_OPTS_DEFAULT;
	o.looks = 5;
	plan_compare_opts("{\"rounds\": 16, \"max_rounds\": 20}", 5, &o);
	assert_int_equal(o.looks, 5); /* 5, 16, 20, a confirmation: fewer than unplanned */
	assert_int_equal(o.min_samples, 5);
	o = (struct compare_opts)COMPARE_OPTS_DEFAULT;
	plan_compare_opts(NULL, 5, &o);
	assert_int_equal(o.looks, 1);
	assert_int_equal(o.min_samples, 5);
}

/*
 * Futility from a job's own rounds, by hand.  A row whose interval over n
 * pairs is +-h has the per-round spread sd = h * sqrt(n) / t(0.975, n-1);
 * its 90% lower bound is sd * sqrt(df / chi2(0.9, df)) (chi2(0.9, 7) =
 * 12.017037, chi2(0.9, 3) = 6.251389), and the resolution at the cap of
 * that at the comparison's level, 0.05 / 5 looks = 0.01 (t(0.99, 19) =
 * 2.539483, t(0.9, 19) = 1.327728; t(0.99, 39) = 2.425841, t(0.9, 39) =
 * 1.303639).
 * - hot at 8 threads, 8 pairs, +-12% (t(0.975, 7) = 2.364624): sd = 0.12 *
 *   sqrt(8) / 2.364624 = 14.35%, lower 14.35% * sqrt(7 / 12.017) = 10.96%,
 *   resolution at 20 rounds (2.539483 + 1.327728) * 0.1096 / sqrt(20) =
 *   9.47%: inside its 10% margin, not marked; at +-17% a lower sd of
 *   15.52% and a resolution of 13.42%: marked (its MDE, 10.25%, would have
 *   said so too, but at +-16.5% an MDE of 9.95% would not: 13.03%);
 * - the same at a cap of 40 rounds: (2.425841 + 1.303639) * 0.1552 /
 *   sqrt(40) = 9.15%: not marked;
 * - a narrow row, a control, a no-change row, a descriptive row: never;
 * - the same wide interval from one spoiled round among good ones (a robust
 *   spread of 1%: resolution at 20 rounds 0.86%): not marked, and a row
 *   without a robust spread neither.
 */
static void test_futile(void **state)
{
	struct comparison c;

	(void)state;
	comparison_init(&c);
	c.opts.alpha = 0.05;
	c.opts.looks = 5;
	c.rows = calloc(5, sizeof(*c.rows));
	c.nrows = 5;
	for (int i = 0; i < 5; i++) {
		row(&c.rows[i], "hot", "threads=8", i == 4 ? "cov" : "ops_per_sec",
		    i == 3 ? VERDICT_NO_CHANGE : VERDICT_INCONCLUSIVE);
		c.rows[i].pairs = 8;
		c.rows[i].tested = true;
		c.rows[i].margin = 0.10;
		c.rows[i].change_lo = -0.17;
		c.rows[i].change_hi = 0.17;
		c.rows[i].round_sd_robust = 0.30; /* the rounds agree: spread everywhere */
	}
	c.rows[0].change_lo = -0.12;
	c.rows[0].change_hi = 0.12;
	c.rows[2].control = true;
	assert_int_equal(plan_mark_futile(&c, 20), 1); /* row 1 alone */
	assert_true(c.rows[0].unresolvable == 0);
	assert_true(fabs(c.rows[1].unresolvable - 0.13421) < 2e-4);
	assert_true(c.rows[2].unresolvable == 0 && c.rows[3].unresolvable == 0 &&
	            c.rows[4].unresolvable == 0);
	/* given up: no more rounds for it, and it holds the comparison inconclusive */
	assert_true(compare_row_decides(&c.rows[1]));
	assert_false(compare_row_wants_rounds(&c.rows[1]));
	assert_int_equal(comparison_overall(&c), VERDICT_INCONCLUSIVE);
	/* a marked row whose change lies past its margin keeps looking */
	c.rows[1].change = -0.11;
	assert_true(compare_row_moved(&c.rows[1]));
	assert_true(compare_row_wants_rounds(&c.rows[1]));
	c.rows[1].change = 0.10; /* at its margin: inside */
	assert_false(compare_row_wants_rounds(&c.rows[1]));
	c.rows[1].change = 0;
	/* marked once: a second look leaves it as it is */
	assert_int_equal(plan_mark_futile(&c, 20), 0);
	c.rows[1].unresolvable = 0;
	assert_int_equal(plan_mark_futile(&c, 40), 0);
	/* +-16.5%: a regression's MDE (9.95%) would keep it, no-change's cannot */
	c.rows[1].change_lo = -0.165;
	c.rows[1].change_hi = 0.165;
	assert_int_equal(plan_mark_futile(&c, 20), 1);
	assert_true(fabs(c.rows[1].unresolvable - 0.13026) < 2e-4);
	c.rows[1].unresolvable = 0;
	/* four pairs (df 3): the lower bound is looser, sqrt(3 / 6.251389) */
	c.rows[1].pairs = 4;
	c.rows[1].change_lo = -0.40;
	c.rows[1].change_hi = 0.40;
	/* sd 0.40 * 2 / 3.182446 = 25.14%, lower 17.41%, resolution at 20: 15.06% */
	assert_int_equal(plan_mark_futile(&c, 20), 1);
	assert_true(fabs(c.rows[1].unresolvable - 0.15059) < 2e-4);
	/* one spoiled round: the robust spread is small, the row asks for rounds */
	c.rows[1].unresolvable = 0;
	c.rows[1].round_sd_robust = 0.01;
	assert_int_equal(plan_mark_futile(&c, 20), 0);
	assert_true(compare_row_decides(&c.rows[1]));
	/* the robust spread at 16% is under the classical bound (17.41%): it counts */
	c.rows[1].round_sd_robust = 0.16;
	assert_int_equal(plan_mark_futile(&c, 20), 1);
	assert_true(fabs(c.rows[1].unresolvable - 3.867211 * 0.16 / sqrt(20)) < 2e-4);
	c.rows[1].unresolvable = 0;
	c.rows[1].round_sd_robust = NAN;
	assert_int_equal(plan_mark_futile(&c, 20), 0);
	c.rows[1].round_sd_robust = 0.30;
	/* an untested row (too few rounds) is left alone */
	c.rows[1].unresolvable = 0;
	c.rows[1].tested = false;
	assert_int_equal(plan_mark_futile(&c, 20), 0);
	comparison_release(&c);
}

/* The posted A/A profile: a row's spread from its interval; equal ratios in every pair are 0. */
static void test_profile_points(void **state)
{
	struct comparison c;
	json_t *pts;

	(void)state;
	comparison_init(&c);
	c.opts.alpha = 0.05;
	c.rows = calloc(4, sizeof(*c.rows));
	c.nrows = 4;
	for (int i = 0; i < 4; i++) {
		row(&c.rows[i], "uncontended", "threads=1", "ns_per_pair", VERDICT_NO_CHANGE);
		c.rows[i].pairs = 3;
	}
	/* +-4.302653 * 0.1 / sqrt(3): sd 0.1 */
	c.rows[0].change_lo = -0.248414;
	c.rows[0].change_hi = 0.248414;
	/* the same ratio in each of 3 pairs: sd 0 */
	c.rows[1].change_lo = c.rows[1].change_hi = 0;
	/* no interval at all, and a lockup: not posted */
	c.rows[2].change_lo = c.rows[2].change_hi = NAN;
	c.rows[3].verdict = VERDICT_LOCKUP;
	pts = plan_profile_points(&c);
	assert_int_equal(json_array_size(pts), 2);
	assert_true(fabs(json_real_value(json_object_get(json_array_get(pts, 0), "sd")) - 0.1) <
	            1e-5);
	assert_true(json_real_value(json_object_get(json_array_get(pts, 1), "sd")) == 0);
	json_decref(pts);
	comparison_release(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_mde),    cmocka_unit_test(test_mark_rows),
	    cmocka_unit_test(test_looks),  cmocka_unit_test(test_next_look),
	    cmocka_unit_test(test_build),  cmocka_unit_test(test_compare_opts),
	    cmocka_unit_test(test_futile), cmocka_unit_test(test_profile_points),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
