/*
 * test_compare.c - verdicts on synthetic samples from a seeded RNG: the bar
 * the design sets (A/A almost never a regression, a real 5% change almost
 * always caught), minimum samples, metric direction, lockups.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"

static void doc_init(struct lb_result *r, const char *variant, int round)
{
	result_init(r);
	r->suite = strdup("smoke");
	r->variant = strdup(variant);
	r->round = round;
	r->started = strdup("2026-11-29T19:40:00Z");
	r->machine.hostname = strdup(strcmp(variant, "base") == 0 ? "base-host" : "patched-host");
	r->machine.cpus = 2;
	r->machine.model = strdup("test cpu");
	r->machine.kernel = strdup("6.1");
}

/* One run of workload/lock at threads with n samples of metric. */
static struct lb_run *add_point(struct lb_result *r, const char *workload, const char *lock,
                                long long threads, const char *metric, const char *unit, bool hb,
                                const double *x, size_t n)
{
	struct lb_run *run = result_add_run(r, workload, lock);
	double sum = 0;
	run_set_param_num(run, "threads", threads);
	for (size_t i = 0; i < n; i++)
		sum += x[i];
	struct lb_metric *m = run_add_metric(run, metric, unit, hb, n ? sum / (double)n : 0);
	for (size_t i = 0; i < n; i++)
		metric_add_sample(m, x[i]);
	return run;
}

/*
 * The n samples x spread over nd documents, sample k in document k % nd,
 * each document's share as one run of the point.
 */
static void spread_point(struct lb_result *docs, size_t nd, const char *workload, const char *lock,
                         long long threads, const char *metric, const char *unit, bool hb,
                         const double *x, size_t n)
{
	for (size_t d = 0; d < nd; d++) {
		double share[64];
		size_t k = 0;

		for (size_t i = d; i < n && k < 64; i += nd)
			share[k++] = x[i];
		if (k)
			add_point(&docs[d], workload, lock, threads, metric, unit, hb, share, k);
	}
}

static void docs_init(struct lb_result *docs, size_t nd, const char *variant)
{
	for (size_t d = 0; d < nd; d++)
		doc_init(&docs[d], variant, (int)d);
}

static void docs_release(struct lb_result *docs, size_t nd)
{
	for (size_t d = 0; d < nd; d++)
		result_release(&docs[d]);
}

static void normal_samples(gsl_rng *rng, double mean, double cov, double *x, size_t n)
{
	for (size_t i = 0; i < n; i++)
		x[i] = mean + gsl_ran_gaussian(rng, mean * cov);
}

/*
 * One trial: nrounds documents a side, each carrying per_round samples of
 * hot/pthread ops_per_sec; returns the verdict of the single row.
 */
static enum verdict trial_drift(gsl_rng *rng, double base_mean, double patched_mean, double cov,
                                int nrounds, size_t per_round, bool higher_better, double drift)
{
	struct lb_result base[8], patched[8];
	struct comparison c;
	const struct compare_opts opts = COMPARE_OPTS_DEFAULT;
	char err[256];
	double x[64];
	enum verdict v;

	assert_true(nrounds <= 8 && per_round <= 64);
	for (int d = 0; d < nrounds; d++) {
		/* the machine's state during round d weighs on both sides alike */
		double f = 1 + gsl_ran_gaussian(rng, drift);

		doc_init(&base[d], "base", d);
		doc_init(&patched[d], "patched", d);
		normal_samples(rng, base_mean * f, cov, x, per_round);
		add_point(&base[d], "hot", "pthread", 2, "ops_per_sec", "ops/s", higher_better, x,
		          per_round);
		normal_samples(rng, patched_mean * f, cov, x, per_round);
		add_point(&patched[d], "hot", "pthread", 2, "ops_per_sec", "ops/s", higher_better,
		          x, per_round);
	}
	comparison_init(&c);
	assert_int_equal(compare_results(base, (size_t)nrounds, patched, (size_t)nrounds, &opts, &c,
	                                 err, sizeof(err)),
	                 0);
	assert_int_equal(c.nrows, 1);
	assert_int_equal(c.rows[0].base.n, (size_t)nrounds * per_round);
	v = c.rows[0].verdict;
	comparison_release(&c);
	for (int d = 0; d < nrounds; d++) {
		result_release(&base[d]);
		result_release(&patched[d]);
	}
	return v;
}

static enum verdict trial(gsl_rng *rng, double base_mean, double patched_mean, double cov,
                          int nrounds, size_t per_round, bool higher_better)
{
	return trial_drift(rng, base_mean, patched_mean, cov, nrounds, per_round, higher_better, 0);
}

/*
 * A shared machine: each round runs 10% faster or slower as a whole (sd),
 * both sides alike, with 1% noise inside a run.  Pooled samples would see
 * 10% noise or, worse, call an unlucky ordering a change; pairing the rounds
 * cancels it: A/A stays quiet and a 5% change is still caught.
 */
static void test_rounds_pair_against_drift(void **state)
{
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	int aa_flagged = 0, ab_caught = 0;

	gsl_rng_set(rng, 7);
	for (int i = 0; i < 200; i++) {
		enum verdict v = trial_drift(rng, 1e6, 1e6, 0.01, 8, 3, true, 0.10);
		aa_flagged += v == VERDICT_REGRESSION || v == VERDICT_IMPROVEMENT;
		ab_caught +=
		    trial_drift(rng, 1e6, 0.95e6, 0.01, 8, 3, true, 0.10) == VERDICT_REGRESSION;
	}
	gsl_rng_free(rng);
	printf("drift 10%% a round, noise 1%%, 8 rounds: A/A flagged %d/200, 5%% caught %d/200\n",
	       aa_flagged, ab_caught);
	assert_true(aa_flagged < 10);
	assert_true(ab_caught > 180);
}

/* What confirm_trial saw of its single row. */
struct confirm_seen {
	enum verdict verdict;
	double p;
	double q;
	bool significant;
};

/*
 * nfound rounds where patched is base * (1 + found), then nagain rounds
 * where it is base * (1 + again), 3 samples of hot ops_per_sec a side per
 * round, CoV cov; compared with confirm_from (0: every round at once).
 */
static struct confirm_seen confirm_trial(gsl_rng *rng, double found, double again, int nfound,
                                         int nagain, double cov, int confirm_from)
{
	struct lb_result base[32], patched[32];
	struct compare_opts opts = COMPARE_OPTS_DEFAULT;
	struct comparison c;
	struct confirm_seen seen;
	char err[256];
	double x[3];
	int n = nfound + nagain;

	assert_true(n <= 32);
	opts.confirm_from = confirm_from;
	for (int d = 0; d < n; d++) {
		doc_init(&base[d], "base", d);
		doc_init(&patched[d], "patched", d);
		normal_samples(rng, 1e6, cov, x, 3);
		add_point(&base[d], "hot", "kmutex", 2, "ops_per_sec", "ops/s", true, x, 3);
		normal_samples(rng, 1e6 * (1 + (d < nfound ? found : again)), cov, x, 3);
		add_point(&patched[d], "hot", "kmutex", 2, "ops_per_sec", "ops/s", true, x, 3);
	}
	comparison_init(&c);
	assert_int_equal(
	    compare_results(base, (size_t)n, patched, (size_t)n, &opts, &c, err, sizeof(err)), 0);
	assert_int_equal(c.nrows, 1);
	assert_int_equal(c.opts.confirm_from, confirm_from);
	seen.verdict = c.rows[0].verdict;
	seen.p = c.rows[0].p;
	seen.q = c.rows[0].q;
	seen.significant = c.rows[0].significant;
	comparison_release(&c);
	for (int d = 0; d < n; d++) {
		result_release(&base[d]);
		result_release(&patched[d]);
	}
	return seen;
}

/*
 * Confirmation: a change found in the first rounds counts only when the
 * later rounds find it again, on their own and in the same direction.
 */
static void test_confirmation(void **state)
{
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	struct confirm_seen s;

	gsl_rng_set(rng, 11);
	/* a 10% drop in both halves: found, confirmed */
	s = confirm_trial(rng, -0.10, -0.10, 8, 8, 0.01, 8);
	assert_int_equal(s.verdict, VERDICT_REGRESSION);
	assert_true(s.significant && s.q < 0.05);
	/* a fluke in the first half only: pooled, all 16 rounds call it a regression ... */
	s = confirm_trial(rng, -0.10, 0, 8, 8, 0.01, 0);
	assert_int_equal(s.verdict, VERDICT_REGRESSION);
	/* ... confirmation does not */
	s = confirm_trial(rng, -0.10, 0, 8, 8, 0.01, 8);
	assert_int_not_equal(s.verdict, VERDICT_REGRESSION);
	assert_false(s.significant);
	assert_true(s.q >= 0.05);
	/* the later rounds move the other way: not confirmed, q is 1 */
	s = confirm_trial(rng, -0.10, 0.10, 8, 8, 0.01, 8);
	assert_int_not_equal(s.verdict, VERDICT_REGRESSION);
	assert_int_not_equal(s.verdict, VERDICT_IMPROVEMENT);
	assert_true(s.q == 1);
	/* a change only the later rounds see was not found: nothing to confirm */
	s = confirm_trial(rng, 0, -0.10, 8, 8, 0.01, 8);
	assert_int_not_equal(s.verdict, VERDICT_REGRESSION);
	assert_false(s.significant);
	gsl_rng_free(rng);
}

/*
 * What confirmation buys and costs on well-behaved data (normal, CoV 3%, 3
 * samples a round): 5 rounds that find and 5 that confirm against one look
 * at 10.  Real A/A data is worse behaved (bimodal throughput, several looks),
 * which is where confirmation earns its keep: see make bench-verdicts.
 */
static void test_confirmation_rates(void **state)
{
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	int aa_once = 0, aa_confirmed = 0, ab_once = 0, ab_confirmed = 0;

	gsl_rng_set(rng, 12);
	for (int i = 0; i < 400; i++) {
		aa_once += confirm_trial(rng, 0, 0, 10, 0, 0.03, 0).significant;
		aa_confirmed += confirm_trial(rng, 0, 0, 5, 5, 0.03, 5).significant;
		ab_once +=
		    confirm_trial(rng, -0.05, 0, 10, 0, 0.03, 0).verdict == VERDICT_REGRESSION;
		ab_confirmed +=
		    confirm_trial(rng, -0.05, -0.05, 5, 5, 0.03, 5).verdict == VERDICT_REGRESSION;
	}
	gsl_rng_free(rng);
	printf("A/A flagged: one look at 10 rounds %d/400, found and confirmed (5+5) %d/400; "
	       "5%% drop caught: %d/400, %d/400\n",
	       aa_once, aa_confirmed, ab_once, ab_confirmed);
	assert_true(aa_confirmed <= 2);       /* <= 0.5% */
	assert_true(aa_confirmed <= aa_once); /* never worse than one look */
	/* the price: both halves must reach significance on 5 rounds each */
	assert_true(ab_confirmed >= 330); /* >= 82% */
}

static void test_aa_rarely_regresses(void **state)
{
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	int regressions = 0, improvements = 0, no_change = 0;

	gsl_rng_set(rng, 1);
	for (int i = 0; i < 200; i++) {
		/* 5 rounds of 2 samples: samples pooled over documents */
		enum verdict v = trial(rng, 1e6, 1e6, 0.02, 5, 2, true);
		regressions += v == VERDICT_REGRESSION;
		improvements += v == VERDICT_IMPROVEMENT;
		no_change += v == VERDICT_NO_CHANGE;
	}
	gsl_rng_free(rng);
	printf("A/A, 10 samples a side, CoV 2%%: %d regressions, %d improvements, %d no-change "
	       "of 200\n",
	       regressions, improvements, no_change);
	assert_true(regressions < 10); /* < 5% */
	assert_true(improvements < 10);
	assert_true(no_change > 150); /* A/A mostly reads as "same", not "don't know" */
}

static void test_five_percent_caught(void **state)
{
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	int caught10 = 0, caught5 = 0;

	gsl_rng_set(rng, 2);
	for (int i = 0; i < 200; i++) {
		caught10 += trial(rng, 1e6, 0.95e6, 0.02, 5, 2, true) == VERDICT_REGRESSION;
		caught5 += trial(rng, 1e6, 0.95e6, 0.02, 5, 1, true) == VERDICT_REGRESSION;
	}
	gsl_rng_free(rng);
	printf("5%% regression, CoV 2%%: caught %d/200 with 10 a side, %d/200 with 5 a side\n",
	       caught10, caught5);
	assert_true(caught10 > 180); /* > 90% */
	assert_true(caught5 > 160);
}

static void test_min_samples_inconclusive(void **state)
{
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(rng, 3);
	/* a 30% drop on 4 samples a side is still not enough to say anything */
	for (int i = 0; i < 20; i++)
		assert_int_equal(trial(rng, 1e6, 0.7e6, 0.02, 1, 4, true), VERDICT_INCONCLUSIVE);
	gsl_rng_free(rng);
}

static void test_direction(void **state)
{
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(rng, 4);
	/* lower is better (wake time): up 10% is a regression, down 10% an improvement */
	assert_int_equal(trial(rng, 4.0, 4.4, 0.01, 5, 2, false), VERDICT_REGRESSION);
	assert_int_equal(trial(rng, 4.0, 3.6, 0.01, 5, 2, false), VERDICT_IMPROVEMENT);
	/* higher is better (throughput) */
	assert_int_equal(trial(rng, 4.0, 4.4, 0.01, 5, 2, true), VERDICT_IMPROVEMENT);
	assert_int_equal(trial(rng, 4.0, 3.6, 0.01, 5, 2, true), VERDICT_REGRESSION);
	/* a real but tiny change (0.5%, very low noise) well inside its margin is no change */
	assert_int_equal(trial(rng, 1000, 1005, 0.0005, 5, 4, true), VERDICT_NO_CHANGE);
	gsl_rng_free(rng);
}

static void test_rows_and_fields(void **state)
{
	struct lb_result b[5], p[5];
	struct comparison c;
	char err[256];
	const double b8[] = {100, 101, 99, 100, 100}, p8[] = {110, 112, 108.5, 110, 110.5};
	const double b2[] = {50, 51, 49, 50, 50};

	docs_init(b, 5, "base");
	docs_init(p, 5, "patched");
	spread_point(b, 5, "hot", "tas", 8, "ops_per_sec", "ops/s", true, b8, 5);
	spread_point(p, 5, "hot", "tas", 8, "ops_per_sec", "ops/s", true, p8, 5);
	spread_point(b, 5, "hot", "tas", 2, "ops_per_sec", "ops/s", true, b2, 5);
	spread_point(p, 5, "hot", "tas", 2, "ops_per_sec", "ops/s", true, b2, 5);
	/* only on one side: left out */
	spread_point(p, 5, "hot", "tas", 64, "ops_per_sec", "ops/s", true, b2, 5);
	/* a run without samples counts its value as one sample */
	for (int i = 0; i < 5; i++) {
		struct lb_run *run = result_add_run(&b[i], "aim7-mix", "kmutex");
		run_set_param_num(run, "users", 100);
		run_set_param_num(run, "threads", 1);
		run_add_metric(run, "jpm", "JPM", true, 75000 + i);
		run = result_add_run(&p[i], "aim7-mix", "kmutex");
		run_set_param_num(run, "users", 100);
		run_set_param_num(run, "threads", 1);
		run_add_metric(run, "jpm", "JPM", true, 75000 + i);
	}

	comparison_init(&c);
	assert_int_equal(compare_results(b, 5, p, 5, NULL, &c, err, sizeof(err)), 0);
	assert_int_equal(c.nrows, 3);
	assert_string_equal(c.suite, "smoke");
	assert_string_equal(c.machine.hostname, "patched-host");
	assert_int_equal(c.base_rounds, 5);
	assert_int_equal(c.rows[0].pairs, 5);
	/* sorted by workload, lock, metric, users */
	assert_string_equal(c.rows[0].workload, "aim7-mix");
	assert_int_equal(c.rows[0].users, 100); /* users wins over threads */
	assert_int_equal(c.rows[0].base.n, 5);
	assert_string_equal(c.rows[0].params_key, "threads=1,users=100");
	assert_int_equal(c.rows[0].verdict, VERDICT_NO_CHANGE);
	assert_int_equal(c.rows[1].users, 2);
	assert_int_equal(c.rows[2].users, 8);
	assert_string_equal(c.rows[2].unit, "ops/s");
	assert_true(c.rows[2].higher_better);
	/*
	 * the geometric mean of the round ratios 1.1, 112/101, 108.5/99, 1.1,
	 * 1.105 (the log-ratio test's change); the means' change is 10.2%
	 */
	assert_true(c.rows[2].log_ratio);
	assert_true(fabs(c.rows[2].change - 0.1019649168951445) < 1e-9);
	assert_true(c.rows[2].change_lo < 0.10196 && c.rows[2].change_hi > 0.10197);
	assert_true(c.rows[2].tested);
	assert_true(c.rows[2].significant);
	assert_true(c.rows[2].q >= c.rows[2].p);
	assert_int_equal(c.rows[2].verdict, VERDICT_IMPROVEMENT);
	assert_int_equal(c.rows[2].base_runs, 5);
	assert_int_equal(c.rows[2].base_lockups, 0);
	assert_null(c.rows[2].lockup_message);
	/* margins: contended throughput (8 threads, 100 AIM7 users) 10% */
	assert_true(c.rows[2].margin == COMPARE_MARGIN_THROUGHPUT);
	assert_true(c.rows[0].margin == COMPARE_MARGIN_THROUGHPUT);
	assert_true(compare_row_margin("ns_per_pair", 1, NULL) == COMPARE_MARGIN_LATENCY);
	assert_true(compare_row_margin("ops_per_sec", 1, NULL) == COMPARE_MARGIN_LATENCY);
	assert_true(compare_row_margin("fairness", 1, NULL) == COMPARE_MARGIN_THROUGHPUT);
	assert_int_equal(comparison_overall(&c), VERDICT_IMPROVEMENT);
	comparison_release(&c);
	assert_int_equal(c.nrows, 0);
	docs_release(b, 5);
	docs_release(p, 5);
}

static void test_lockups(void **state)
{
	struct lb_result b, p;
	struct comparison c;
	char err[256];
	const double x[] = {100, 101, 99, 100, 100};

	doc_init(&b, "base", 0);
	doc_init(&p, "patched", 0);
	/* threads=8: patched locked up once among good runs; its figure is not a sample */
	add_point(&b, "hot", "kmutex", 8, "ops_per_sec", "ops/s", true, x, 5);
	add_point(&p, "hot", "kmutex", 8, "ops_per_sec", "ops/s", true, x, 5);
	struct lb_run *run = add_point(&p, "hot", "kmutex", 8, "ops_per_sec", "ops/s", true, x, 1);
	run->metrics[0].samples[0] = 1;
	run_set_lockup(run, "stall", "no progress for 2.0 s", "thread 3: futex_wait");
	/* threads=16: the base side locked up, the patched side has figures */
	run = result_add_run(&b, "hot", "kmutex");
	run_set_param_num(run, "threads", 16);
	run_set_lockup(run, "deadline", "run did not end before its deadline", NULL);
	add_point(&p, "hot", "kmutex", 16, "ops_per_sec", "ops/s", true, x, 5);
	/* threads=32: only the patched side ran it, and it locked up */
	run = result_add_run(&p, "hot", "kmutex");
	run_set_param_num(run, "threads", 32);
	run_set_lockup(run, "hung-task", "INFO: task lockbench blocked for more than 10 seconds",
	               NULL);

	comparison_init(&c);
	assert_int_equal(compare_results(&b, 1, &p, 1, NULL, &c, err, sizeof(err)), 0);
	assert_int_equal(c.nrows, 3);

	/* rows sort by metric before users: "lockup" < "ops_per_sec" */
	const struct compare_row *r8 = NULL, *r16 = NULL, *r32 = NULL;
	for (size_t i = 0; i < c.nrows; i++) {
		if (c.rows[i].users == 8)
			r8 = &c.rows[i];
		if (c.rows[i].users == 16)
			r16 = &c.rows[i];
		if (c.rows[i].users == 32)
			r32 = &c.rows[i];
	}
	assert_ptr_equal(r8, &c.rows[2]);
	assert_string_equal(r8->metric, "ops_per_sec");
	assert_int_equal(r8->verdict, VERDICT_LOCKUP);
	assert_int_equal(r8->patched.n, 5); /* the locked-up run's figure is left out */
	assert_true(r8->patched.min == 99);
	assert_int_equal(r8->patched_runs, 2);
	assert_int_equal(r8->patched_lockups, 1);
	assert_int_equal(r8->base_lockups, 0);
	assert_string_equal(r8->lockup_message, "no progress for 2.0 s");
	assert_string_equal(r8->lockup_stacks, "thread 3: futex_wait");
	assert_false(r8->significant);
	assert_non_null(r16);
	assert_non_null(r32);
	assert_string_equal(r16->metric, "lockup");
	assert_int_equal(r16->verdict, VERDICT_LOCKUP);
	assert_int_equal(r16->base_lockups, 1);
	assert_int_equal(r16->patched_lockups, 0);
	assert_string_equal(r16->lockup_message, "run did not end before its deadline");
	assert_null(r16->lockup_stacks);
	assert_string_equal(r32->metric, "lockup");
	assert_int_equal(r32->patched_lockups, 1);
	assert_int_equal(r32->base_runs, 0);
	assert_int_equal(comparison_overall(&c), VERDICT_LOCKUP);
	comparison_release(&c);
	result_release(&b);
	result_release(&p);
}

/*
 * Splat keys are counted per document: a key new in patched is the verdict
 * splat (above regression, below lockup); a key in both is shown, not
 * blamed; a document with a key twice counts once.
 */
static void test_splats(void **state)
{
	struct lb_result b[2], p[2];
	struct comparison c;
	char err[256];
	const double x[] = {100, 101, 99, 100, 100};
	const char *circ = "WARNING:possible_circular_locking_dependency_detected";
	const char *rcu = "WARNING:suspicious_RCU_usage";

	for (int i = 0; i < 2; i++) {
		doc_init(&b[i], "base", i);
		doc_init(&p[i], "patched", i);
		add_point(&b[i], "hot", "kmutex", 4, "ops_per_sec", "ops/s", true, x, 5);
		add_point(&p[i], "hot", "kmutex", 4, "ops_per_sec", "ops/s", true, x, 5);
		result_add_splat(&b[i], rcu, "WARNING: suspicious RCU usage", NULL, "lockbench");
		result_add_splat(&p[i], rcu, "WARNING: suspicious RCU usage", NULL, "lockbench");
	}
	comparison_init(&c);
	assert_int_equal(compare_results(b, 2, p, 2, NULL, &c, err, sizeof(err)), 0);
	assert_int_equal(c.nsplats, 1);
	assert_false(c.splats[0].new_in_patched);
	assert_int_equal(c.splats[0].base_fail, 2);
	assert_int_equal(c.splats[0].patched_fail, 2);
	assert_int_not_equal(comparison_overall(&c), VERDICT_SPLAT); /* in both: not blamed */

	result_add_splat(&p[1], circ, "WARNING: possible circular locking dependency detected",
	                 "lockbench/62 is trying to acquire lock:\n",
	                 "locktorture mutex_lock writers=2");
	result_add_splat(&p[1], circ, "WARNING: possible circular locking dependency detected",
	                 NULL, "lockbench");
	assert_int_equal(compare_results(b, 2, p, 2, NULL, &c, err, sizeof(err)), 0);
	assert_int_equal(c.nsplats, 2);
	assert_string_equal(c.splats[0].key, circ); /* new in patched sorts first */
	assert_true(c.splats[0].new_in_patched);
	assert_int_equal(c.splats[0].patched_fail, 1);
	assert_int_equal(c.splats[0].base_fail, 0);
	assert_string_equal(c.splats[0].boot, "locktorture mutex_lock writers=2");
	assert_int_equal(comparison_overall(&c), VERDICT_SPLAT);
	assert_string_equal(verdict_name(VERDICT_SPLAT), "splat");

	/* a lockup outranks it */
	struct lb_run *run = result_add_run(&p[0], "hot", "kmutex");
	run_set_param_num(run, "threads", 8);
	run_set_lockup(run, "hung-task", "INFO: task lockbench:5 blocked for more than 3 seconds.",
	               NULL);
	assert_int_equal(compare_results(b, 2, p, 2, NULL, &c, err, sizeof(err)), 0);
	assert_int_equal(comparison_overall(&c), VERDICT_LOCKUP);

	/* the key on the base side only is no finding */
	assert_int_equal(compare_results(p, 2, b, 2, NULL, &c, err, sizeof(err)), 0);
	assert_false(c.splats[0].new_in_patched || c.splats[1].new_in_patched);
	comparison_release(&c);
	for (int i = 0; i < 2; i++) {
		result_release(&b[i]);
		result_release(&p[i]);
	}
}

/*
 * A control (a lock the change did not touch, named by every document) keeps
 * its own row verdict but decides nothing; a lock named on one side only is
 * no control; a control that locks up still decides.
 */
static void test_controls(void **state)
{
	struct lb_result b[8], p[8];
	struct comparison c;
	char err[256];
	const double same[] = {100, 101, 99, 100, 100, 101, 99, 100};
	const double slow[] = {90, 91.5, 89, 90, 90.5, 91, 89, 90.2};

	docs_init(b, 8, "base");
	docs_init(p, 8, "patched");
	/* the untouched pthread moved 10% (the machine), kmutex did not move */
	spread_point(b, 8, "hot", "pthread", 2, "ops_per_sec", "ops/s", true, same, 8);
	spread_point(p, 8, "hot", "pthread", 2, "ops_per_sec", "ops/s", true, slow, 8);
	spread_point(b, 8, "hot", "kmutex", 2, "ops_per_sec", "ops/s", true, same, 8);
	spread_point(p, 8, "hot", "kmutex", 2, "ops_per_sec", "ops/s", true, same, 8);
	for (int d = 0; d < 8; d++) {
		result_add_control(&b[d], "pthread");
		result_add_control(&p[d], "pthread");
	}
	result_add_control(&p[0], "pthread"); /* once only */
	assert_int_equal(p[0].ncontrols, 1);
	assert_true(result_is_control(&p[0], "pthread"));
	assert_false(result_is_control(&p[0], "kmutex"));

	comparison_init(&c);
	assert_int_equal(compare_results(b, 8, p, 8, NULL, &c, err, sizeof(err)), 0);
	assert_int_equal(c.nrows, 2);
	assert_true(comparison_has_controls(&c));
	for (size_t i = 0; i < c.nrows; i++) {
		const struct compare_row *r = &c.rows[i];
		bool is_pthread = strcmp(r->lock, "pthread") == 0;
		assert_int_equal(r->control, is_pthread);
		assert_int_equal(compare_row_decides(r), !is_pthread);
		if (is_pthread)
			assert_int_equal(r->verdict, VERDICT_REGRESSION); /* said, not counted */
	}
	assert_int_equal(comparison_overall(&c), VERDICT_NO_CHANGE);

	/* named by the patched side only: not a control, the regression counts */
	free(b[3].controls[0]);
	free(b[3].controls);
	b[3].controls = NULL;
	b[3].ncontrols = 0;
	assert_int_equal(compare_results(b, 8, p, 8, NULL, &c, err, sizeof(err)), 0);
	assert_false(comparison_has_controls(&c));
	assert_int_equal(comparison_overall(&c), VERDICT_REGRESSION);

	/* a control that locks up decides: the machine or the harness is broken */
	result_add_control(&b[3], "pthread");
	struct lb_run *run = result_add_run(&p[0], "hot", "pthread");
	run_set_param_num(run, "threads", 4);
	run_set_lockup(run, "stall", "no progress for 2.0 s", NULL);
	assert_int_equal(compare_results(b, 8, p, 8, NULL, &c, err, sizeof(err)), 0);
	assert_int_equal(comparison_overall(&c), VERDICT_LOCKUP);
	comparison_release(&c);
	docs_release(b, 8);
	docs_release(p, 8);
}

static void test_overall_and_names(void **state)
{
	struct comparison c;
	struct compare_row rows[3];

	comparison_init(&c);
	/* no row decided: nothing was shown, so never no-change */
	assert_int_equal(comparison_overall(&c), VERDICT_INCONCLUSIVE);
	c.identical_code = true; /* one image both sides: no code changed */
	assert_int_equal(comparison_overall(&c), VERDICT_NO_CHANGE);
	c.identical_code = false;
	memset(rows, 0, sizeof(rows));
	for (int i = 0; i < 3; i++)
		rows[i].metric = "ops_per_sec";
	c.rows = rows;
	c.nrows = 3;
	rows[0].verdict = VERDICT_REGRESSION;
	rows[1].verdict = VERDICT_NO_CHANGE;
	rows[2].verdict = VERDICT_INCONCLUSIVE;
	/* descriptive rows only (fairness, CoV): reported, none decides, not even a regression */
	assert_int_equal(comparison_overall(&c), VERDICT_INCONCLUSIVE);
	rows[0].headline = rows[1].headline = true;
	rows[0].verdict = VERDICT_IMPROVEMENT;
	/* an inconclusive descriptive metric does not decide */
	assert_int_equal(comparison_overall(&c), VERDICT_IMPROVEMENT);
	rows[2].headline = true;
	assert_int_equal(comparison_overall(&c), VERDICT_INCONCLUSIVE);
	rows[1].verdict = VERDICT_REGRESSION;
	assert_int_equal(comparison_overall(&c), VERDICT_REGRESSION);
	rows[0].verdict = VERDICT_LOCKUP;
	assert_int_equal(comparison_overall(&c), VERDICT_LOCKUP);
	rows[0].verdict = rows[1].verdict = rows[2].verdict = VERDICT_IMPROVEMENT;
	assert_int_equal(comparison_overall(&c), VERDICT_IMPROVEMENT);

	assert_true(compare_metric_is_headline("ops_per_sec"));
	assert_true(compare_metric_is_headline("ns_per_pair"));
	assert_false(compare_metric_is_headline("fairness"));
	assert_false(compare_metric_is_headline("cov"));
	/*
	 * the worst waits under a long hold decide; Jain's index describes, and
	 * that workload's throughput is its hold's
	 */
	assert_true(compare_row_is_headline("long-hold", "wait_worst_us"));
	assert_true(compare_row_is_headline("long-hold", "wait_p999_worst_us"));
	assert_false(compare_row_is_headline("long-hold", "jain"));
	assert_false(compare_row_is_headline("long-hold", "wait_max_us"));
	assert_false(compare_row_is_headline("long-hold", "wait_p99_us"));
	/* too wide an A/A spread to decide (compare_row_is_headline): shown, not headline */
	assert_false(compare_row_is_headline("oversub", "ops_per_sec"));
	assert_false(compare_row_is_headline("wake-latency", "wakeup_p50_us"));
	assert_false(compare_row_is_headline("wake-latency", "wakeup_p99_us"));
	assert_false(compare_row_is_headline("long-hold", "ops_per_sec"));
	assert_true(compare_row_is_headline("hot", "ops_per_sec"));
	assert_true(compare_row_margin("jain", 2, NULL) == COMPARE_MARGIN_THROUGHPUT);
	assert_true(compare_row_margin("wait_worst_us", 2, NULL) == COMPARE_MARGIN_WORST_WAIT);
	assert_true(compare_row_margin("wait_p999_worst_us", 4, NULL) == COMPARE_MARGIN_WORST_WAIT);
	assert_string_equal(verdict_name(VERDICT_NO_CHANGE), "no-change");
	assert_string_equal(verdict_name(VERDICT_IMPROVEMENT), "improvement");
	assert_string_equal(verdict_name(VERDICT_REGRESSION), "regression");
	assert_string_equal(verdict_name(VERDICT_INCONCLUSIVE), "inconclusive");
	assert_string_equal(verdict_name(VERDICT_LOCKUP), "lockup");
}

/*
 * One point, n rounds: base[d] and patched[d] are the single samples of
 * uncontended/pthread ns_per_pair in round d; the row, copied out.
 */
static struct compare_row metric_row(const char *metric, const char *unit, const double *base,
                                     const double *patched, int n, const struct compare_opts *opts)
{
	struct lb_result b[16], p[16];
	struct comparison c;
	struct compare_row r;
	char err[256];

	assert_true(n <= 16);
	docs_init(b, (size_t)n, "base");
	docs_init(p, (size_t)n, "patched");
	for (int d = 0; d < n; d++) {
		add_point(&b[d], "uncontended", "pthread", 1, metric, unit, false, &base[d], 1);
		add_point(&p[d], "uncontended", "pthread", 1, metric, unit, false, &patched[d], 1);
	}
	comparison_init(&c);
	assert_int_equal(compare_results(b, (size_t)n, p, (size_t)n, opts, &c, err, sizeof(err)),
	                 0);
	assert_int_equal(c.nrows, 1);
	r = c.rows[0];
	memset(&c.rows[0], 0, sizeof(c.rows[0])); /* r's strings leak: a test */
	comparison_release(&c);
	docs_release(b, (size_t)n);
	docs_release(p, (size_t)n);
	return r;
}

static struct compare_row one_row(const double *base, const double *patched, int n,
                                  const struct compare_opts *opts)
{
	return metric_row("ns_per_pair", "ns", base, patched, n, opts);
}

/*
 * Fewer than 3 rounds pair: no test at all, whatever the samples say.  (The
 * old fallback, Welch's test over the pooled samples of one run a side,
 * called this 40% "regression" of 8 samples a side significant.)  A caller
 * that asks for fewer rounds (min_samples 1, a server with
 * LOCKLAB_MIN_ROUNDS=1) reaches the same answer.
 */
static void test_too_few_rounds(void **state)
{
	struct lb_result b[2], p[2];
	struct comparison c;
	struct compare_opts o = COMPARE_OPTS_DEFAULT;
	const double x[] = {100, 101, 99, 100, 102, 98, 100, 101};
	const double y[] = {140, 141, 139, 140, 142, 138, 140, 141};
	char err[256];

	for (size_t nd = 1; nd <= 2; nd++) {
		for (o.min_samples = 1; o.min_samples <= 5; o.min_samples += 4) {
			docs_init(b, nd, "base");
			docs_init(p, nd, "patched");
			spread_point(b, nd, "uncontended", "pthread", 1, "ns_per_pair", "ns", false,
			             x, 8);
			spread_point(p, nd, "uncontended", "pthread", 1, "ns_per_pair", "ns", false,
			             y, 8);
			comparison_init(&c);
			assert_int_equal(compare_results(b, nd, p, nd, &o, &c, err, sizeof(err)),
			                 0);
			assert_int_equal(c.nrows, 1);
			assert_int_equal(c.rows[0].pairs, nd);
			assert_false(c.rows[0].tested);
			assert_false(c.rows[0].significant);
			assert_int_equal(c.rows[0].verdict, VERDICT_INCONCLUSIVE);
			assert_int_equal(comparison_overall(&c), VERDICT_INCONCLUSIVE);
			comparison_release(&c);
			docs_release(b, nd);
			docs_release(p, nd);
		}
	}
}

/*
 * When confirming, p and q are the figures of the stage that decided: q is
 * never below p (once p came from every round pooled and q from the
 * stages: p = 0.78 beside q = 0.19).
 */
static void test_confirmation_prints_its_figures(void **state)
{
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);

	gsl_rng_set(rng, 13);
	for (int i = 0; i < 200; i++) {
		double found = (i % 3) * -0.02, again = (i % 2) * 0.02;
		struct confirm_seen s = confirm_trial(rng, found, again, 5, 5, 0.03, 5);

		assert_true(s.p <= s.q);
	}
	gsl_rng_free(rng);
}

/*
 * A change that is significant but below min_effect is no-change only when
 * its interval is inside the margin too.  d = 0.2, 0.5, 1.5, 2.5, 2.8% of
 * 100 ns: mean 1.5%, se 0.52%, t(4) = 2.9, p = 0.044, significant; 1.5% <
 * min_effect 2%.  Margin 1%: the interval reaches past it, inconclusive.
 * Margin 3% (the default for ns_per_pair): the 90% interval [0.39%, 2.61%]
 * is inside, no-change.  Ten looks (alpha / 10 each): TOST p =
 * Q(2.88; 4) = 0.022 > 0.005, inconclusive again.
 */
static void test_no_change_is_equivalence(void **state)
{
	const double b[] = {100, 100, 100, 100, 100};
	const double p[] = {100.2, 100.5, 101.5, 102.5, 102.8};
	struct compare_opts o = COMPARE_OPTS_DEFAULT;
	struct compare_row r;

	o.equiv_margin = 0.01;
	r = one_row(b, p, 5, &o);
	assert_true(r.p < 0.05 && r.p > 0.04);
	assert_int_equal(r.verdict, VERDICT_INCONCLUSIVE);
	assert_false(r.equivalent);

	o.equiv_margin = 0;
	r = one_row(b, p, 5, &o);
	assert_true(r.margin == COMPARE_MARGIN_LATENCY);
	assert_true(r.equivalent);
	assert_true(r.p_eq < 0.05 && r.q_eq == r.p_eq); /* one row: BH leaves it */
	assert_int_equal(r.verdict, VERDICT_NO_CHANGE);

	o.looks = 10;
	r = one_row(b, p, 5, &o);
	assert_true(r.p_eq > 0.02 && r.p_eq < 0.025);
	assert_false(r.equivalent);
	assert_int_equal(r.verdict, VERDICT_INCONCLUSIVE);
	o.looks = 0;
	assert_int_equal(
	    compare_results(NULL, 0, NULL, 0, &o, &(struct comparison){0}, (char[64]){0}, 64), -1);
}

/*
 * The rows a Tested-by stands on are their own family for no-change: the
 * headline row of test_no_change_is_equivalence (TOST p 0.022 at its 3%
 * margin, a row alone) beside nine descriptive rows whose change is all
 * over the place (wait_p99_us of long-hold at 1..9 threads: base 100,
 * patched 100, 160, 60, 150, 40: TOST p near 1).  BH over all ten made the
 * headline row's q 0.22 (p * 10 / 1) and the comparison inconclusive; over
 * its own family q = p, no-change, and the comparison is no-change (an
 * inconclusive descriptive row decides nothing).  The descriptive rows keep
 * a BH of their own.
 */
static void test_no_change_family(void **state)
{
	const double b[] = {100, 100, 100, 100, 100};
	const double p[] = {100.2, 100.5, 101.5, 102.5, 102.8};
	const double wild[] = {100, 160, 60, 150, 40};
	struct lb_result bd[5], pd[5];
	struct comparison c;
	const struct compare_opts o = COMPARE_OPTS_DEFAULT;
	const struct compare_row *head = NULL;
	char err[256];
	(void)state;

	docs_init(bd, 5, "base");
	docs_init(pd, 5, "patched");
	spread_point(bd, 5, "uncontended", "kmutex", 1, "ns_per_pair", "ns", false, b, 5);
	spread_point(pd, 5, "uncontended", "kmutex", 1, "ns_per_pair", "ns", false, p, 5);
	for (long long t = 1; t <= 9; t++) {
		spread_point(bd, 5, "long-hold", "kmutex", t, "wait_p99_us", "us", false, b, 5);
		spread_point(pd, 5, "long-hold", "kmutex", t, "wait_p99_us", "us", false, wild, 5);
	}
	comparison_init(&c);
	assert_int_equal(compare_results(bd, 5, pd, 5, &o, &c, err, sizeof(err)), 0);
	assert_int_equal(c.nrows, 10);
	for (size_t i = 0; i < c.nrows; i++) {
		const struct compare_row *r = &c.rows[i];

		if (r->headline) {
			head = r;
			continue;
		}
		assert_true(r->tested);
		assert_true(r->p_eq > 0.5 && r->q_eq >= r->p_eq);
		assert_int_equal(r->verdict, VERDICT_INCONCLUSIVE);
	}
	assert_non_null(head);
	assert_true(head->p_eq > 0.02 && head->p_eq < 0.025);
	assert_true(head->q_eq == head->p_eq);
	assert_int_equal(head->verdict, VERDICT_NO_CHANGE);
	assert_int_equal(comparison_overall(&c), VERDICT_NO_CHANGE);
	comparison_release(&c);
	docs_release(bd, 5);
	docs_release(pd, 5);
}

/*
 * An instruction count is exact: the same code gives the same count in
 * every round, so a 1% move (74 -> 74.74 instructions per pair in all five
 * rounds) is the row's regression (a code-path note: it decides nothing
 * alone, test_instructions_are_a_note), though it is below min_effect (2%), which would
 * leave the same figures in ns no-change.  A move inside the 0.5% margin
 * (74 -> 74.1) and equal counts are no-change.
 */
static void test_instructions_decide_by_their_margin(void **state)
{
	const double b[] = {74, 74, 74, 74, 74};
	const double up1[] = {74.74, 74.74, 74.74, 74.74, 74.74};
	const double tiny[] = {74.1, 74.1, 74.1, 74.1, 74.1};
	struct compare_row r;

	r = metric_row("instructions_per_pair", "instructions", b, up1, 5, NULL);
	assert_true(r.margin == COMPARE_MARGIN_INSTRUCTIONS);
	assert_false(r.headline); /* beside time, never instead of it */
	assert_int_equal(r.verdict, VERDICT_REGRESSION);
	assert_true(r.significant);

	r = metric_row("ns_per_pair", "ns", b, up1, 5, NULL);
	assert_int_equal(r.verdict, VERDICT_NO_CHANGE);

	r = metric_row("instructions_per_pair", "instructions", b, tiny, 5, NULL);
	assert_int_equal(r.verdict, VERDICT_NO_CHANGE);
	assert_false(r.significant);

	r = metric_row("instructions_per_pair", "instructions", b, b, 5, NULL);
	assert_int_equal(r.verdict, VERDICT_NO_CHANGE);

	/* and fewer instructions are an improvement */
	r = metric_row("instructions_per_pair", "instructions", up1, b, 5, NULL);
	assert_int_equal(r.verdict, VERDICT_IMPROVEMENT);
}

/*
 * A multiplicative, bimodal change (tests/343-track-bisect's futex3: 250 or
 * 800 ns a pair against 20): the paired test of the log ratios gives t =
 * 10.877, p = 0.00040547 (mpmath; lib/tests/test_stats.c), where raw
 * differences give p = 0.028695, which Benjamini-Hochberg over a handful
 * of rows or a confirmation stage leaves above alpha.  The interval is
 * printed back from logs, in %: exp(ci) - 1 around the geometric mean's
 * +1891.5%.
 */
static void test_log_ratio_multiplicative(void **state)
{
	const double b[] = {20, 21, 19, 20, 20}, p[] = {250, 800, 250, 800, 250};
	struct compare_opts o = COMPARE_OPTS_DEFAULT;
	struct compare_row r;

	r = one_row(b, p, 5, &o);
	assert_true(r.log_ratio);
	assert_true(fabs(r.p - 0.00040546697960433487) < 1e-11);
	assert_true(fabs(r.change - 18.915326163382319) < 1e-9);
	/* 2.9915 +- t(0.975; 4) 0.27502 = 2.9915 +- 0.76358: +828.1% .. +4173.7% */
	assert_true(fabs(r.change_lo - 8.280549078256119) < 1e-6);
	assert_true(fabs(r.change_hi - 41.73671879211999) < 1e-6);
	assert_int_equal(r.verdict, VERDICT_REGRESSION);

	o.test = COMPARE_TEST_RAW;
	r = one_row(b, p, 5, &o);
	assert_false(r.log_ratio);
	assert_true(fabs(r.p - 0.028694563670181656) < 1e-9);
	assert_true(fabs(r.change - 450.0 / 20) < 1e-9); /* of the means: 470 against 20 */
}

/*
 * A figure that can be 0 or negative has no log ratio: the row falls back
 * to raw differences, d = 1, 1.5, 1, 1.5, 1 (mean 1.2, sd 0.27386, t(4) =
 * 9.798, p = 0.00060), and says so (log_ratio false).
 */
static void test_log_ratio_falls_back(void **state)
{
	const double b[] = {0, 1, 2, 0, 1}, p[] = {1, 2.5, 3, 1.5, 2};
	const double nb[] = {-5, -4, -6, -5, -5}, np[] = {-4, -2.5, -5, -3.5, -4};
	struct stats_welch w;
	struct compare_row r;

	assert_int_equal(stats_paired(b, p, 5, 0.05, &w), 0);
	r = metric_row("spread", "", b, p, 5, NULL);
	assert_false(r.log_ratio);
	assert_true(r.tested);
	assert_true(fabs(r.p - w.p) < 1e-15 && r.p > 0.0005 && r.p < 0.0007);
	r = metric_row("spread", "", nb, np, 5, NULL);
	assert_false(r.log_ratio);
	assert_true(fabs(r.p - w.p) < 1e-12);
}

static void test_bad_options(void **state)
{
	struct comparison c;
	struct compare_opts o = COMPARE_OPTS_DEFAULT;
	char err[256] = "";

	comparison_init(&c);
	o.alpha = 0;
	assert_int_equal(compare_results(NULL, 0, NULL, 0, &o, &c, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "alpha"));
	o.alpha = 0.05;
	o.confirm_from = -1;
	assert_int_equal(compare_results(NULL, 0, NULL, 0, &o, &c, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "confirm_from"));
	/* nothing on either side: an empty comparison; no row decided, so inconclusive */
	assert_int_equal(compare_results(NULL, 0, NULL, 0, NULL, &c, err, sizeof(err)), 0);
	assert_int_equal(c.nrows, 0);
	assert_int_equal(comparison_overall(&c), VERDICT_INCONCLUSIVE);
	comparison_release(&c);
}

/*
 * One image on both sides (compare.h, identical_code): a 30% "change" of a
 * headline row is this machine's A/A, the rows are controls and the
 * verdict is no-change; a lockup still decides.  A differing or missing
 * image, or ignore_image, leaves the statistics to judge.
 */
static enum verdict image_trial(const char *bimg, const char *pimg, bool ignore, bool lockup,
                                bool *identical)
{
	struct lb_result base[6], patched[6];
	struct compare_opts opts = COMPARE_OPTS_DEFAULT;
	struct comparison c;
	char err[256];
	enum verdict v;

	opts.ignore_image = ignore;
	docs_init(base, 6, "base");
	docs_init(patched, 6, "patched");
	for (int d = 0; d < 6; d++) {
		double b[3] = {100 + d, 101 + d, 99 + d}, p[3] = {130 + d, 131 + d, 129 + d};

		add_point(&base[d], "uncontended", "kmutex", 1, "ns_per_pair", "ns", false, b, 3);
		struct lb_run *r = add_point(&patched[d], "uncontended", "kmutex", 1, "ns_per_pair",
		                             "ns", false, p, 3);
		if (lockup && d == 2)
			run_set_lockup(r, "stall", "no progress for 2 s", NULL);
		base[d].image = bimg ? strdup(bimg) : NULL;
		patched[d].image = pimg ? strdup(pimg) : NULL;
	}
	comparison_init(&c);
	assert_int_equal(compare_results(base, 6, patched, 6, &opts, &c, err, sizeof(err)), 0);
	v = comparison_overall(&c);
	*identical = c.identical_code;
	for (size_t i = 0; i < c.nrows; i++)
		assert_int_equal(c.rows[i].control, c.identical_code);
	if (c.identical_code)
		assert_string_equal(c.image, bimg);
	else
		assert_null(c.image);
	comparison_release(&c);
	docs_release(base, 6);
	docs_release(patched, 6);
	return v;
}

static void test_identical_image(void **state)
{
	static const char a[] =
	    "sha256:00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
	static const char b[] =
	    "sha256:ff112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
	/* base image, patched image, ignore_image, a lockup: verdict, judged as one image */
	static const struct {
		const char *base, *patched;
		bool ignore, lockup;
		enum verdict want;
		bool same;
	} cases[] = {
	    {a, a, false, false, VERDICT_NO_CHANGE, true},
	    {a, a, false, true, VERDICT_LOCKUP, true},
	    {a, b, false, false, VERDICT_REGRESSION, false},
	    {a, NULL, false, false, VERDICT_REGRESSION, false},
	    {NULL, NULL, false, false, VERDICT_REGRESSION, false},
	    {a, a, true, false, VERDICT_REGRESSION, false},
	};
	bool same;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(image_trial(cases[i].base, cases[i].patched, cases[i].ignore,
		                             cases[i].lockup, &same),
		                 cases[i].want);
		assert_int_equal(same, cases[i].same);
	}
}

/* n rounds of one point: base[d] and patched[d] are round d's single samples. */
static void rounds_point(struct lb_result *bd, struct lb_result *pd, int n, const char *workload,
                         const char *lock, long long threads, const char *metric, bool hb,
                         const double *base, const double *patched)
{
	for (int d = 0; d < n; d++) {
		add_point(&bd[d], workload, lock, threads, metric, "", hb, &base[d], 1);
		add_point(&pd[d], workload, lock, threads, metric, "", hb, &patched[d], 1);
	}
}

static const struct compare_row *find_row(const struct comparison *c, const char *metric)
{
	for (size_t i = 0; i < c->nrows; i++)
		if (!strcmp(c->rows[i].metric, metric))
			return &c->rows[i];
	return NULL;
}

/*
 * A nop on the fast path: +1 instruction a pair (30 -> 31, exact, in every
 * round) and no time anything measures.  The count is a code-path note: its
 * row says regression (it is a fact: more instructions), outside every BH
 * family (q = p), and decides nothing: the comparison is no-change by its
 * timed row.  Beside a timed row that is not shown unchanged, a count that
 * moved by COMPARE_NOTE_ESCALATE or more escalates and decides; +3.3% does
 * not.
 */
static void test_instructions_are_a_note(void **state)
{
	const double ns_b[] = {5.50, 5.48, 5.52, 5.49, 5.51, 5.50},
	             ns_p[] = {5.51, 5.49, 5.50, 5.50, 5.52, 5.49};
	const double noisy_b[] = {5.5, 7.0, 5.5, 8.0, 5.6, 6.5},
	             noisy_p[] = {7.9, 5.5, 7.1, 5.5, 8.1, 5.6};
	const double i30[] = {30, 30, 30, 30, 30, 30}, i31[] = {31, 31, 31, 31, 31, 31},
	             i36[] = {36, 36, 36, 36, 36, 36};
	const struct {
		const double *nb, *np, *ip;
		enum verdict note, overall;
		bool escalated;
	} cases[] = {
	    {ns_b, ns_p, i31, VERDICT_REGRESSION, VERDICT_NO_CHANGE, false},
	    {noisy_b, noisy_p, i31, VERDICT_REGRESSION, VERDICT_INCONCLUSIVE, false},
	    {noisy_b, noisy_p, i36, VERDICT_REGRESSION, VERDICT_REGRESSION, true},
	    /* timed row shown unchanged: +20% instructions stay a note */
	    {ns_b, ns_p, i36, VERDICT_REGRESSION, VERDICT_NO_CHANGE, false},
	};
	(void)state;

	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		struct lb_result bd[6], pd[6];
		struct comparison c;
		char err[256];
		const struct compare_row *ins, *ns;

		docs_init(bd, 6, "base");
		docs_init(pd, 6, "patched");
		rounds_point(bd, pd, 6, "uncontended", "kmutex", 1, "ns_per_pair", false,
		             cases[k].nb, cases[k].np);
		rounds_point(bd, pd, 6, "uncontended", "kmutex", 1, "instructions_per_pair", false,
		             i30, cases[k].ip);
		comparison_init(&c);
		assert_int_equal(compare_results(bd, 6, pd, 6, NULL, &c, err, sizeof(err)), 0);
		ins = find_row(&c, "instructions_per_pair");
		ns = find_row(&c, "ns_per_pair");
		assert_non_null(ins);
		assert_non_null(ns);
		assert_true(compare_row_is_note(ins));
		assert_false(compare_row_is_note(ns));
		assert_int_equal(ins->verdict, cases[k].note);
		assert_true(ins->q == ins->p); /* in no BH family */
		assert_int_equal(ins->escalated, cases[k].escalated);
		assert_int_equal(compare_row_decides(ins), cases[k].escalated);
		assert_int_equal(comparison_overall(&c), cases[k].overall);
		comparison_release(&c);
		docs_release(bd, 6);
		docs_release(pd, 6);
	}
}

/*
 * The family that finds changes is the deciding rows alone.  A 4.5% loss of
 * hot kmutex at 2 threads (paired p about 0.002) beside 30 descriptive rows
 * of A/A noise: in one family of 31 its q was p * 31, past alpha, and the
 * comparison not a regression; in its own family q = p.  And a descriptive
 * row that doubled (wait_p99_us) is reported as a regression of its own
 * but decides nothing: the headline row, shown unchanged, does.
 */
static void test_deciding_family(void **state)
{
	const double b[] = {100, 100, 100, 100, 100, 100};
	const double lost[] = {95, 97, 93, 98, 94, 96};
	const double same[] = {100.5, 99.6, 100.2, 99.8, 100.4, 99.7};
	const double wild[] = {100, 160, 60, 150, 40, 110};
	const double twice[] = {200, 205, 198, 202, 199, 201};
	struct lb_result bd[6], pd[6];
	struct comparison c;
	char err[256];
	const struct compare_row *head, *desc;
	(void)state;

	docs_init(bd, 6, "base");
	docs_init(pd, 6, "patched");
	rounds_point(bd, pd, 6, "hot", "kmutex", 2, "ops_per_sec", true, b, lost);
	for (long long t = 1; t <= 30; t++)
		rounds_point(bd, pd, 6, "long-hold", "kmutex", t, "wait_p50_us", false, b, wild);
	comparison_init(&c);
	assert_int_equal(compare_results(bd, 6, pd, 6, NULL, &c, err, sizeof(err)), 0);
	head = find_row(&c, "ops_per_sec");
	assert_non_null(head);
	assert_true(head->p > 0.05 / 31 && head->p < 0.05);
	assert_true(head->q == head->p);
	assert_int_equal(head->verdict, VERDICT_REGRESSION);
	assert_int_equal(comparison_overall(&c), VERDICT_REGRESSION);
	comparison_release(&c);
	docs_release(bd, 6);
	docs_release(pd, 6);

	docs_init(bd, 6, "base");
	docs_init(pd, 6, "patched");
	rounds_point(bd, pd, 6, "hot", "kmutex", 2, "ops_per_sec", true, b, same);
	rounds_point(bd, pd, 6, "long-hold", "kmutex", 2, "wait_p99_us", false, b, twice);
	comparison_init(&c);
	assert_int_equal(compare_results(bd, 6, pd, 6, NULL, &c, err, sizeof(err)), 0);
	head = find_row(&c, "ops_per_sec");
	desc = find_row(&c, "wait_p99_us");
	assert_int_equal(head->verdict, VERDICT_NO_CHANGE);
	assert_int_equal(desc->verdict, VERDICT_REGRESSION); /* reported */
	assert_false(compare_row_decides(desc));
	assert_int_equal(comparison_overall(&c), VERDICT_NO_CHANGE);
	comparison_release(&c);
	docs_release(bd, 6);
	docs_release(pd, 6);
}

/*
 * A sleeping lock that lets spinners steal from its woken waiter: Jain's
 * index of long-hold at 2 threads barely moves (0.999 -> 0.976, inside any
 * margin, and descriptive), the worst wait of a waiter doubles.  The
 * worst-wait row decides: a regression.  The same row within its noise
 * (+-30% a round, as the machine's tails move) is shown unchanged within its
 * margin, and the comparison is no-change.
 */
static void test_worst_wait_decides(void **state)
{
	const double jb[] = {0.999, 0.998, 0.999, 0.999, 0.997, 0.999},
	             jp[] = {0.976, 0.981, 0.970, 0.979, 0.975, 0.977};
	const double wb[] = {30e3, 25e3, 41e3, 33e3, 28e3, 36e3},
	             wp[] = {61e3, 66e3, 70e3, 58e3, 65e3, 73e3},
	             wn[] = {36e3, 21e3, 45e3, 30e3, 34e3, 29e3};
	struct lb_result bd[6], pd[6];
	struct comparison c;
	char err[256];
	const struct compare_row *w, *j;
	(void)state;

	for (int k = 0; k < 2; k++) {
		docs_init(bd, 6, "base");
		docs_init(pd, 6, "patched");
		rounds_point(bd, pd, 6, "long-hold", "kmutex", 2, "jain", true, jb, k ? jb : jp);
		rounds_point(bd, pd, 6, "long-hold", "kmutex", 2, "wait_worst_us", false, wb,
		             k ? wn : wp);
		comparison_init(&c);
		assert_int_equal(compare_results(bd, 6, pd, 6, NULL, &c, err, sizeof(err)), 0);
		w = find_row(&c, "wait_worst_us");
		j = find_row(&c, "jain");
		assert_non_null(w);
		assert_non_null(j);
		assert_true(w->headline);
		assert_false(j->headline);
		assert_false(compare_row_decides(j));
		assert_true(w->margin == COMPARE_MARGIN_WORST_WAIT);
		assert_int_equal(w->verdict, k ? VERDICT_NO_CHANGE : VERDICT_REGRESSION);
		assert_int_equal(comparison_overall(&c),
		                 k ? VERDICT_NO_CHANGE : VERDICT_REGRESSION);
		comparison_release(&c);
		docs_release(bd, 6);
		docs_release(pd, 6);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_aa_rarely_regresses),
	    cmocka_unit_test(test_five_percent_caught),
	    cmocka_unit_test(test_rounds_pair_against_drift),
	    cmocka_unit_test(test_confirmation),
	    cmocka_unit_test(test_confirmation_rates),
	    cmocka_unit_test(test_min_samples_inconclusive),
	    cmocka_unit_test(test_direction),
	    cmocka_unit_test(test_rows_and_fields),
	    cmocka_unit_test(test_lockups),
	    cmocka_unit_test(test_splats),
	    cmocka_unit_test(test_controls),
	    cmocka_unit_test(test_overall_and_names),
	    cmocka_unit_test(test_bad_options),
	    cmocka_unit_test(test_too_few_rounds),
	    cmocka_unit_test(test_confirmation_prints_its_figures),
	    cmocka_unit_test(test_no_change_is_equivalence),
	    cmocka_unit_test(test_no_change_family),
	    cmocka_unit_test(test_instructions_decide_by_their_margin),
	    cmocka_unit_test(test_log_ratio_multiplicative),
	    cmocka_unit_test(test_log_ratio_falls_back),
	    cmocka_unit_test(test_identical_image),
	    cmocka_unit_test(test_instructions_are_a_note),
	    cmocka_unit_test(test_deciding_family),
	    cmocka_unit_test(test_worst_wait_decides),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
