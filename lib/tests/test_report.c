/*
 * test_report.c - the mailing-list layouts rendered from a comparison built
 * through the public API out of small hand-made documents.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

static void doc_init(struct lb_result *r, const char *variant, int round)
{
	result_init(r);
	r->suite = strdup("smoke");
	r->variant = strdup(variant);
	r->round = round;
	r->started = strdup("2026-11-29T19:40:00Z");
	r->machine.hostname = strdup("lab1");
	r->machine.cpus = 8;
	r->machine.model = strdup("test cpu");
	r->machine.kernel = strdup("6.1");
}

enum { ROUNDS = 5 };

/*
 * One run a round of ROUNDS documents, one sample each, mean*(1 + k) for k
 * in -1%, 0.5%, 0, -0.5%, 1%: mean exact over the rounds, small spread.
 */
static void add(struct lb_result *r, const char *workload, const char *lock, const char *pname,
                long long pval, const char *metric, const char *unit, bool hb, double mean)
{
	static const double k[] = {-0.01, 0.005, 0, -0.005, 0.01};
	for (int d = 0; d < ROUNDS; d++) {
		struct lb_run *run = result_add_run(&r[d], workload, lock);
		run_set_param_num(run, pname, pval);
		struct lb_metric *m = run_add_metric(run, metric, unit, hb, mean);
		metric_add_sample(m, mean * (1 + k[d]));
	}
}

static struct comparison comp;

static int setup(void **state)
{
	struct lb_result b[ROUNDS], p[ROUNDS];
	char err[256];

	for (int d = 0; d < ROUNDS; d++) {
		doc_init(&b[d], "base", d);
		doc_init(&p[d], "patched", d);
	}
	/* AIM7's bands: 10-100 users, 200-1000 users, 1100-2000 users */
	for (int u = 10; u <= 100; u += 45) {
		add(b, "aim7-mix", "kmutex", "users", u, "jpm", "JPM", true, 13943);
		add(p, "aim7-mix", "kmutex", "users", u, "jpm", "JPM", true, 14432);
	}
	for (int u = 200; u <= 1000; u += 400) {
		add(b, "aim7-mix", "kmutex", "users", u, "jpm", "JPM", true, 75475);
		add(p, "aim7-mix", "kmutex", "users", u, "jpm", "JPM", true, 75500);
	}
	add(b, "aim7-mix", "kmutex", "users", 1100, "jpm", "JPM", true, 77299);
	add(p, "aim7-mix", "kmutex", "users", 1100, "jpm", "JPM", true, 115271);
	/* perf bench futex's wake grid (lower is better) */
	add(b, "futex-wake", "futex3", "threads", 32, "wake_ms", "ms", false, 0.362);
	add(p, "futex-wake", "futex3", "threads", 32, "wake_ms", "ms", false, 1.13);
	add(b, "futex-wake", "futex3", "threads", 512, "wake_ms", "ms", false, 4.241);
	add(p, "futex-wake", "futex3", "threads", 512, "wake_ms", "ms", false, 12.366);
	/* sorts before aim7-mix, yet the AIM7 table still leads */
	add(b, "a-warmup", "tas", "threads", 1, "ops_per_sec", "ops/s", true, 5000);
	add(p, "a-warmup", "tas", "threads", 1, "ops_per_sec", "ops/s", true, 5000);
	/* test-mutex's vfs figures on hot */
	add(b, "hot", "pthread", "threads", 4, "ops_per_sec", "ops/s", true, 291038);
	add(p, "hot", "pthread", "threads", 4, "ops_per_sec", "ops/s", true, 392865);
	/* a lockup: every patched run of hot/kmutex at 8 threads */
	add(b, "hot", "kmutex", "threads", 8, "ops_per_sec", "ops/s", true, 100000);
	for (int i = 0; i < ROUNDS; i++) {
		struct lb_run *run = result_add_run(&p[i], "hot", "kmutex");
		run_set_param_num(run, "threads", 8);
		run_set_lockup(run, "stall", "no progress for 2.0 s", "thread 1: futex_wait");
	}
	/* base-only lockup at 2000 users (the mutex rewrite's AIM7 report had one patched) */
	struct lb_run *run = result_add_run(&b[0], "aim7-mix", "kmutex");
	run_set_param_num(run, "users", 2000);
	run_set_lockup(run, "hung-task", "INFO: task reaim blocked for more than 120 seconds",
	               NULL);
	add(p, "aim7-mix", "kmutex", "users", 2000, "jpm", "JPM", true, 77000);

	comparison_init(&comp);
	assert_int_equal(compare_results(b, ROUNDS, p, ROUNDS, NULL, &comp, err, sizeof(err)), 0);
	for (int d = 0; d < ROUNDS; d++) {
		result_release(&b[d]);
		result_release(&p[d]);
	}
	return 0;
}

static int teardown(void **state)
{
	comparison_release(&comp);
	return 0;
}

static char *render(enum report_format fmt)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	assert_non_null(f);
	assert_int_equal(report_render(&comp, fmt, f), 0);
	fclose(f);
	if (getenv("SHOW_REPORTS"))
		printf("%s\n", text);
	return text;
}

#define assert_contains(hay, needle)                                                               \
	do {                                                                                       \
		if (!strstr((hay), (needle)))                                                      \
			fail_msg("missing \"%s\" in:\n%s", (needle), (hay));                       \
	} while (0)

static void test_show_all(void **state)
{
	/* SHOW_REPORTS=1 prints every layout, for eyeballing */
	for (int f = REPORT_AIM7; f <= REPORT_JSON; f++)
		free(render((enum report_format)f));
}

static void test_aim7(void **state)
{
	char *t = render(REPORT_AIM7);

	/* the AIM7 jobs-per-minute table comes first */
	assert_int_equal(strncmp(t, "aim7-mix kmutex: jpm (JPM)\n", 27), 0);
	assert_contains(t, "\n-------------------------------------------------");
	assert_contains(
	    t, "\n|  users      | avg throughput | avg throughput | n   | change          |\n");
	assert_contains(
	    t, "\n              | without patch  | with patch     |     |                 |\n");
	/* the change with the band's equivalence margin beside it */
	assert_contains(t, "\n| 10 - 100    |   13,943 JPM   |   14,432 JPM   | 5/5 | +3.5% * "
	                   "(\xc2\xb1"
	                   "10%)  |\n");
	assert_contains(t, "\n| 200 - 1000  |   75,475 JPM   |   75,500 JPM   | 5/5 | +0.0% "
	                   "(\xc2\xb1"
	                   "10%)    |\n");
	/* 2000 users locked up in the base: the band has the figures of 1100 */
	assert_contains(t, "\n| 1100        |   77,299 JPM   |  115,271 JPM   | 5/5 | +49.1% * "
	                   "(\xc2\xb1"
	                   "10%) |\n");
	assert_contains(t,
	                "\nn = samples per side; * = significant after Benjamini-Hochberg at q < "
	                "0.05 and |change| >= 2%\n");
	/* ops/s tables use the same layout with thousands separators */
	assert_contains(t, "hot pthread: ops_per_sec (ops/s)\n");
	assert_contains(t, "|  291,038 ops/s   |  392,865 ops/s   | 5/5 | +35.0% * (\xc2\xb1"
	                   "10%) |");
	/* how rows were tested and measured */
	assert_contains(t, "p, q: paired t-test of ln(patched/base) of the round means, over the 5 "
	                   "rounds both sides ran\n");
	assert_contains(t, "change: the geometric mean of the round ratios; its interval exp(ci) - "
	                   "1\n");
	assert_contains(t, "no-change = equivalence (two one-sided paired t-tests)");
	assert_contains(t, "instrument: every row is timed (wall clock)\n");
	/* a latency figure is not called throughput */
	assert_contains(t, "| avg wake_ms    | avg wake_ms    |");
	/* the lockups, in words, below the tables */
	assert_contains(t,
	                "\nat 2000 users, the base build locked up on aim7-mix with kmutex: INFO: "
	                "task reaim blocked for more than 120 seconds.\n");
	assert_contains(t, "\nat 8 threads, the patched build locked up on hot with kmutex: no "
	                   "progress for 2.0 s.\n");
	free(t);
}

/* AIM7's bands end on powers of ten: 10-100, 200-1000, 1100-2000. */
static void test_aim7_bands(void **state)
{
	assert_int_equal(report_aim7_band(0), -1);
	assert_int_equal(report_aim7_band(1), 0);
	assert_int_equal(report_aim7_band(9), 0);
	assert_int_equal(report_aim7_band(10), 1);
	assert_int_equal(report_aim7_band(100), 1);
	assert_int_equal(report_aim7_band(101), 2);
	assert_int_equal(report_aim7_band(200), 2);
	assert_int_equal(report_aim7_band(1000), 2);
	assert_int_equal(report_aim7_band(1001), 3);
	assert_int_equal(report_aim7_band(1100), 3);
	assert_int_equal(report_aim7_band(2000), 3);

	/* the users suite's points, two per band, rendered as three rows */
	static const int users[] = {10, 100, 200, 1000, 1100, 2000};
	struct lb_result b[ROUNDS], p[ROUNDS];
	struct comparison c;
	char err[256], *text = NULL;
	size_t len = 0;
	for (int d = 0; d < ROUNDS; d++) {
		doc_init(&b[d], "base", d);
		doc_init(&p[d], "patched", d);
	}
	for (size_t i = 0; i < sizeof(users) / sizeof(users[0]); i++) {
		double jpm = i < 2 ? 1000 : i < 4 ? 2000 : 3000;
		add(b, "aim7-mix", "kernel", "users", users[i], "jpm", "JPM", true, jpm);
		add(p, "aim7-mix", "kernel", "users", users[i], "jpm", "JPM", true, jpm);
	}
	comparison_init(&c);
	assert_int_equal(compare_results(b, ROUNDS, p, ROUNDS, NULL, &c, err, sizeof(err)), 0);
	FILE *f = open_memstream(&text, &len);
	assert_non_null(f);
	assert_int_equal(report_render(&c, REPORT_AIM7, f), 0);
	fclose(f);
	assert_contains(text, "\n| 10 - 100    |    1,000 JPM   |    1,000 JPM   | 5/5 | +0.0% ");
	assert_contains(text, "\n| 200 - 1000  |    2,000 JPM   |    2,000 JPM   | 5/5 | +0.0% ");
	assert_contains(text, "\n| 1100 - 2000 |    3,000 JPM   |    3,000 JPM   | 5/5 | +0.0% ");
	free(text);
	comparison_release(&c);
	for (int d = 0; d < ROUNDS; d++) {
		result_release(&b[d]);
		result_release(&p[d]);
	}
}

static void test_perf(void **state)
{
	char *t = render(REPORT_PERF);

	assert_contains(t, "futex-wake futex3: wake_ms (ms)\n"
	                   "+---------+--------------------+--------+-------------------+--------+"
	                   "----------------+-----+-----+\n"
	                   "| threads | baseline time (ms) | stddev | patched time (ms) | stddev | "
	                   "overhead       | n   | sig |\n");
	/* threads descending, 4 decimals, overhead with two and the margin */
	const char *r512 = strstr(t, "|     512 | 4.2410             | 0.0335 | 12.3660           "
	                             "| 0.0978 | +191.58% (\xc2\xb1"
	                             "3%) | 5/5 | *   |\n");
	const char *r32 = strstr(t, "|      32 | 0.3620             | 0.0029 | 1.1300            "
	                            "| 0.0089 | +212.15% (\xc2\xb1"
	                            "3%) | 5/5 | *   |\n");
	assert_non_null(r512);
	assert_non_null(r32);
	assert_true(r512 < r32);
	assert_contains(t, "| threads | baseline ops_per_sec (ops/s) | stddev    |");
	assert_contains(t, "|       1 | 5000.0000                    |");
	assert_contains(t, "n = samples per side; * = significant");
	assert_contains(t, "at 8 threads, the patched build locked up on hot with kmutex");
	free(t);
}

static void test_lkp(void **state)
{
	char *t = render(REPORT_LKP);

	assert_contains(t, "samples per side: base n=5, patched n=5; rounds: base 5, patched 5\n");
	assert_contains(t, "\n         base             %stddev     %change         %stddev\n"
	                   "             \\          |                \\          |\n");
	assert_contains(t,
	                "\n    291038            \xc2\xb1  1%     +35.0%*    392865 \xc2\xb1  1%  "
	                "hot.pthread.ops_per_sec.threads=4 (margin \xc2\xb1"
	                "10%)\n");
	assert_contains(t,
	                "\n      5000            \xc2\xb1  1%      +0.0%       5000 \xc2\xb1  1%  "
	                "a-warmup.tas.ops_per_sec.threads=1 (margin \xc2\xb1"
	                "3%)\n");
	assert_contains(t, "\n     fail:runs  %reproduction    fail:runs\n"
	                   "         |             |             |\n");
	assert_contains(t, "\n          :5           100%          5:5   hot.kmutex.threads=8: no "
	                   "progress for 2.0 s\n");
	assert_contains(t, "\n         1:1          -100%           :5   "
	                   "aim7-mix.kmutex.users=2000: INFO: task reaim");
	assert_contains(t, "n = samples per side; * = significant");
	free(t);
}

static void test_text(void **state)
{
	char *t = render(REPORT_TEXT);

	assert_contains(t, "overall: lockup\n");
	assert_contains(t, "\nworkload    lock     params       metric       base");
	assert_contains(t, "change         p         q         verdict\n");
	assert_contains(t, "291038 \xc2\xb1 2301 (5)");
	assert_contains(t, "+35.0% * \xc2\xb1"
	                   "10%");
	assert_contains(t, "improvement\n");
	assert_contains(t, "regression\n");
	assert_contains(t, "no-change\n");
	assert_contains(t, "hot         kmutex   threads=8    lockup");
	assert_contains(t, "at 8 threads, the patched build locked up on hot with kmutex: no "
	                   "progress for 2.0 s.\n");
	free(t);
}

static void test_json(void **state)
{
	char *t = render(REPORT_JSON);
	json_error_t je;
	json_t *doc = json_loads(t, JSON_REJECT_DUPLICATES, &je);
	json_t *rows, *row;
	size_t i;
	bool seen_lockup = false, seen_hot = false;

	assert_non_null(doc);
	assert_string_equal(json_string_value(json_object_get(doc, "overall")), "lockup");
	assert_string_equal(json_string_value(json_object_get(doc, "suite")), "smoke");
	assert_int_equal(json_integer_value(json_object_get(doc, "base_rounds")), 5);
	assert_int_equal(
	    json_integer_value(json_object_get(json_object_get(doc, "machine"), "cpus")), 8);
	rows = json_object_get(doc, "rows");
	assert_int_equal(json_array_size(rows), comp.nrows);
	json_array_foreach(rows, i, row)
	{
		const char *w = json_string_value(json_object_get(row, "workload"));
		const char *l = json_string_value(json_object_get(row, "lock"));
		json_t *lk = json_object_get(row, "lockup");
		if (strcmp(w, "hot") == 0 && strcmp(l, "kmutex") == 0) {
			seen_lockup = true;
			assert_string_equal(json_string_value(json_object_get(row, "verdict")),
			                    "lockup");
			assert_int_equal(json_integer_value(json_object_get(lk, "patched_lockups")),
			                 5);
			assert_string_equal(json_string_value(json_object_get(lk, "message")),
			                    "no progress for 2.0 s");
			assert_string_equal(json_string_value(json_object_get(lk, "stacks")),
			                    "thread 1: futex_wait");
		} else if (strcmp(w, "hot") == 0) {
			seen_hot = true;
			assert_true(json_is_null(lk));
			assert_int_equal(
			    json_integer_value(json_object_get(json_object_get(row, "base"), "n")),
			    5);
			assert_string_equal(json_string_value(json_object_get(row, "better")),
			                    "higher");
			assert_int_equal(json_integer_value(json_object_get(row, "users")), 4);
			assert_true(json_real_value(json_object_get(row, "change")) > 0.34);
			assert_true(json_is_real(json_object_get(row, "q")));
		}
	}
	assert_true(seen_lockup && seen_hot);
	json_decref(doc);
	free(t);
}

static void test_sentences(void **state)
{
	char *s = report_lockup_sentences(&comp);
	assert_string_equal(s, "at 2000 users, the base build locked up on aim7-mix with kmutex: "
	                       "INFO: task reaim blocked for more than 120 seconds.\n"
	                       "at 8 threads, the patched build locked up on hot with kmutex: no "
	                       "progress for 2.0 s.\n");
	free(s);

	struct comparison empty;
	comparison_init(&empty);
	s = report_lockup_sentences(&empty);
	assert_non_null(s);
	assert_string_equal(s, "");
	free(s);
	/* every layout copes with nothing to show */
	for (int f = REPORT_AIM7; f <= REPORT_JSON; f++) {
		FILE *null = fopen("/dev/null", "w");
		assert_int_equal(report_render(&empty, (enum report_format)f, null), 0);
		fclose(null);
	}
	comparison_release(&empty);
}

/* A kernel run under TCG: every layout says so; splats get their fail:runs block. */
static void test_splats_and_emulated(void **state)
{
	struct lb_result b, p;
	struct comparison c;
	char err[256], *text = NULL;
	size_t len = 0;

	doc_init(&b, "base", 0);
	doc_init(&p, "patched", 0);
	free(p.machine.model);
	p.machine.model = strdup("QEMU TCG guest on test cpu");
	p.machine.guest_thresholds =
	    strdup("lockbench users=2000: RCU stall 300 s, soft lockup 120 s, hung task 120 s");
	/* one document a side: the splats are this test's subject, not the figures */
	for (struct lb_result *r = &b; r; r = r == &b ? &p : NULL) {
		struct lb_run *run = result_add_run(r, "locktorture", "mutex_lock");
		run_set_param_num(run, "writers", 2);
		struct lb_metric *m = run_add_metric(run, "writes_per_sec", "writes/s", true, 48);
		metric_add_sample(m, 48);
	}
	result_add_splat(&b, "WARNING:suspicious_RCU_usage", "WARNING: suspicious RCU usage", NULL,
	                 "lockbench");
	result_add_splat(&p, "WARNING:suspicious_RCU_usage", "WARNING: suspicious RCU usage", NULL,
	                 "lockbench");
	result_add_splat(&p, "WARNING:possible_circular_locking_dependency_detected",
	                 "WARNING: possible circular locking dependency detected",
	                 "6.1.0 #1 Not tainted\nlocktorture_wr/45 is trying to acquire lock:\n"
	                 "Call Trace:\n <TASK>\n torture_mutex_lock+0x3a/0x60\n </TASK>\n",
	                 "locktorture mutex_lock writers=2");
	comparison_init(&c);
	assert_int_equal(compare_results(&b, 1, &p, 1, NULL, &c, err, sizeof(err)), 0);
	for (int f = REPORT_AIM7; f <= REPORT_TEXT; f++) {
		FILE *out = open_memstream(&text, &len);
		assert_int_equal(report_render(&c, (enum report_format)f, out), 0);
		fclose(out);
		assert_contains(text,
		                "emulated: timing from an emulated CPU (QEMU TCG): lockups, "
		                "splats and locktorture failures are real; compare figures only "
		                "within this run\n");
		assert_contains(text,
		                "emulated: guest kernel lockup thresholds: lockbench users=2000: "
		                "RCU stall 300 s, soft lockup 120 s, hung task 120 s\n");
		if (f != REPORT_LKP) /* the lkp block names it instead */
			assert_contains(
			    text, "the patched kernel reported "
			          "WARNING:possible_circular_locking_dependency_detected in 1 of 1 "
			          "runs at locktorture mutex_lock writers=2, the base in none: "
			          "WARNING: possible circular locking dependency detected\n");
		if (f == REPORT_LKP || f == REPORT_TEXT) {
			assert_contains(
			    text, "\n          :1           100%          1:1   "
			          "dmesg.WARNING:possible_circular_locking_dependency_detected  "
			          "(splat: new in patched)\n");
			assert_contains(text, "\n         1:1             0%          1:1   "
			                      "dmesg.WARNING:suspicious_RCU_usage  (in both: not "
			                      "blamed)\n");
			assert_contains(text, "\nWARNING: possible circular locking dependency "
			                      "detected\n  6.1.0 #1 Not tainted\n");
			assert_contains(text, "  torture_mutex_lock+0x3a/0x60\n");
		}
		if (f == REPORT_TEXT)
			assert_contains(text, "overall: splat\n");
		free(text);
		text = NULL;
	}
	FILE *out = open_memstream(&text, &len);
	assert_int_equal(report_render(&c, REPORT_JSON, out), 0);
	fclose(out);
	assert_contains(text, "\"emulated\": true");
	assert_contains(text, "\"guest_thresholds\": \"lockbench users=2000: RCU stall 300 s");
	assert_contains(text, "\"overall\": \"splat\"");
	assert_contains(text, "\"new_in_patched\": true");
	free(text);

	/* on a real machine the mark goes */
	free(c.machine.model);
	c.machine.model = strdup("test cpu");
	text = NULL;
	out = open_memstream(&text, &len);
	assert_int_equal(report_render(&c, REPORT_LKP, out), 0);
	fclose(out);
	assert_null(strstr(text, "emulated"));
	free(text);
	comparison_release(&c);
	result_release(&b);
	result_release(&p);
}

static void test_format_parse(void **state)
{
	enum report_format f;
	assert_int_equal(report_format_parse("aim7", &f), 0);
	assert_int_equal(f, REPORT_AIM7);
	assert_int_equal(report_format_parse("perf", &f), 0);
	assert_int_equal(f, REPORT_PERF);
	assert_int_equal(report_format_parse("lkp", &f), 0);
	assert_int_equal(f, REPORT_LKP);
	assert_int_equal(report_format_parse("text", &f), 0);
	assert_int_equal(f, REPORT_TEXT);
	assert_int_equal(report_format_parse("json", &f), 0);
	assert_int_equal(f, REPORT_JSON);
	assert_int_equal(report_format_parse("html", &f), -1);
	assert_int_equal(report_format_parse("", &f), -1);
}

/*
 * The test's legend: log ratios when any row took them, with the rows that
 * fell back to raw differences (a round mean <= 0) counted; differences
 * when none did (compare --test raw).
 */
static void test_legend_test(void **state)
{
	struct compare_row rows[3];
	struct comparison c;
	char *t = NULL;
	size_t len = 0;
	FILE *f;

	comparison_init(&c);
	memset(rows, 0, sizeof(rows));
	for (int i = 0; i < 3; i++) {
		rows[i].metric = (char *)"ns_per_pair";
		rows[i].pairs = 5;
		rows[i].base.n = rows[i].patched.n = 5;
		rows[i].log_ratio = i > 0;
	}
	c.rows = rows;
	c.nrows = 3;
	f = open_memstream(&t, &len);
	report_legend_test(f, &c, "p", 5, 10);
	fclose(f);
	assert_string_equal(t, "p: paired t-test of ln(patched/base) of the round means, over the "
	                       "5-10 rounds both sides ran\n"
	                       "change: the geometric mean of the round ratios; its interval "
	                       "exp(ci) - 1\n"
	                       "raw differences where a round mean is <= 0: 1 row\n");
	free(t);
	rows[1].log_ratio = rows[2].log_ratio = false;
	f = open_memstream(&t, &len);
	report_legend_test(f, &c, "p, q", 5, 5);
	fclose(f);
	assert_string_equal(
	    t, "p, q: paired t-test of the differences of the round means, over the 5 rounds "
	       "both sides ran\n");
	free(t);
}

static void test_write_error(void **state)
{
	for (int f = REPORT_AIM7; f <= REPORT_JSON; f++) {
		FILE *full = fopen("/dev/full", "w");
		assert_non_null(full);
		assert_int_equal(report_render(&comp, (enum report_format)f, full), -1);
		fclose(full);
	}
}

/* A single run's table by AIM7's bands of users: AIM7's layout, one column. */
static void test_run_bands(void **state)
{
	const struct report_band_row rows[] = {
	    {10, 100, 100, 1492.4, 2, NULL, NULL},
	    {200, 1000, 1000, 2099, 2, NULL, NULL},
	    {1100, 2000, 2000, 0, 0, "lockup", "rcu-stall"},
	};
	char *t = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&t, &len);
	assert_int_equal(report_run_bands(f, "aim7-mix (base kernel)", "JPM", rows, 3), 0);
	fclose(f);
	assert_string_equal(
	    t, "aim7-mix (base kernel)\n"
	       "--------------------------------------------------\n"
	       "|  users      | avg throughput | measured at | n |\n"
	       "--------------------------------------------------\n"
	       "| 10 - 100    |    1,492 JPM   | 100         | 2 |\n"
	       "--------------------------------------------------\n"
	       "| 200 - 1000  |    2,099 JPM   | 1000        | 2 |\n"
	       "--------------------------------------------------\n"
	       "| 1100 - 2000 |            -   | 2000        | 0 | lockup (rcu-stall)\n"
	       "--------------------------------------------------\n");
	free(t);
	FILE *full = fopen("/dev/full", "w");
	assert_non_null(full);
	assert_int_equal(report_run_bands(full, "x", "JPM", rows, 3), -1);
	fclose(full);
}

/*
 * An instruction count is a code-path note: its figure for people, in the
 * text table's verdict column and the JSON, and never a verdict of its
 * own there ("note", not "regression").
 */
static void test_note(void **state)
{
	struct compare_row r;
	struct comparison c;
	char buf[128], *text = NULL;
	size_t len = 0;
	FILE *f;
	(void)state;

	memset(&r, 0, sizeof(r));
	r.metric = "instructions_per_pair";
	r.base.n = r.patched.n = 5;
	r.base.mean = 30;
	r.patched.mean = 31;
	assert_true(report_note_text(&r, buf, sizeof(buf)));
	assert_string_equal(buf, "+1 instruction a pair, 30 -> 31");
	r.patched.mean = 33;
	report_note_text(&r, buf, sizeof(buf));
	assert_string_equal(buf, "+3 instructions a pair, 30 -> 33");
	r.patched.mean = 30;
	report_note_text(&r, buf, sizeof(buf));
	assert_string_equal(buf, "unchanged, 30");
	r.metric = "ns_per_pair"; /* a timing: no note */
	r.headline = true;
	assert_false(report_note_text(&r, buf, sizeof(buf)));

	comparison_init(&c);
	memset(&r, 0, sizeof(r));
	r.workload = "uncontended";
	r.lock = "kmutex";
	r.metric = "instructions_per_pair";
	r.unit = "instructions";
	r.params_key = "threads=1";
	r.base.n = r.patched.n = 5;
	r.base.mean = 30;
	r.patched.mean = 31;
	r.change = 1.0 / 30;
	r.verdict = VERDICT_REGRESSION;
	c.rows = &r;
	c.nrows = 1;
	f = open_memstream(&text, &len);
	assert_int_equal(report_render(&c, REPORT_TEXT, f), 0);
	fclose(f);
	assert_non_null(strstr(text, "note (code path: +1 instruction a pair, 30 -> 31)"));
	/* the row decided nothing, so neither did the comparison */
	assert_non_null(strstr(text, "overall: inconclusive"));
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_show_all),     cmocka_unit_test(test_aim7),
	    cmocka_unit_test(test_aim7_bands),   cmocka_unit_test(test_perf),
	    cmocka_unit_test(test_lkp),          cmocka_unit_test(test_text),
	    cmocka_unit_test(test_json),         cmocka_unit_test(test_sentences),
	    cmocka_unit_test(test_format_parse), cmocka_unit_test(test_legend_test),
	    cmocka_unit_test(test_write_error),  cmocka_unit_test(test_splats_and_emulated),
	    cmocka_unit_test(test_run_bands),    cmocka_unit_test(test_note),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
