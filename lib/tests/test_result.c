/*
 * test_result.c - the lockbench-result/1 model: round trips, strict
 * validation with messages that name the field, atomic writes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elfimage.h"
#include "result.h"

static void build_sample(struct lb_result *r)
{
	struct lb_run *run;
	struct lb_metric *m;
	double per[] = {1000.5, 999.25};

	result_init(r);
	result_fill_machine(r);
	r->suite = strdup("smoke");
	r->variant = strdup("patch-2");
	r->round = 3;

	run = result_add_run(r, "hot", "pthread");
	run_set_param_num(run, "threads", 4);
	run_set_param_str(run, "mode", "fair");
	m = run_add_metric(run, "ops_per_sec", "ops/s", true, 2000.0);
	metric_add_sample(m, 1999.5);
	metric_add_sample(m, 2000.5);
	metric_set_per_thread(m, per, 2);
	run_add_metric(run, "cov", "", false, 0.125);

	run = result_add_run(r, "hot", "kmutex");
	run_set_param_num(run, "threads", 8);
	run_set_lockup(run, "stall", "no progress for 2.0 s", "thread 1: futex_wait");
}

/* A valid document as text; tests break one thing at a time. */
static const char *valid_doc =
    "{\"schema\": \"lockbench-result/1\", \"suite\": \"smoke\", \"variant\": \"base\",\n"
    " \"round\": 0, \"started\": \"2026-11-29T19:40:00Z\",\n"
    " \"machine\": {\"hostname\": \"h\", \"cpus\": 2, \"model\": \"m\", \"kernel\": "
    "\"6.1\"},\n"
    " \"runs\": [{\"workload\": \"hot\", \"lock\": \"tas\", \"params\": {\"threads\": 2},\n"
    "   \"metrics\": {\"ops_per_sec\": 10.5}, \"units\": {\"ops_per_sec\": \"ops/s\"},\n"
    "   \"better\": {\"ops_per_sec\": \"higher\"}, \"samples\": {\"ops_per_sec\": [10, 11]},\n"
    "   \"per_thread\": {}, \"lockup\": null}]}";

static char *replace(const char *s, const char *from, const char *to)
{
	const char *at = strstr(s, from);
	assert_non_null(at);
	size_t n = strlen(s) - strlen(from) + strlen(to);
	char *out = malloc(n + 1);
	memcpy(out, s, (size_t)(at - s));
	strcpy(out + (at - s), to);
	strcat(out, at + strlen(from));
	return out;
}

/* Loading text must fail with a message containing want. */
static void expect_reject(const char *text, const char *want)
{
	struct lb_result r;
	char err[512] = "";

	result_init(&r);
	assert_int_equal(result_load_buffer(text, strlen(text), &r, err, sizeof(err)), -1);
	if (!strstr(err, want))
		fail_msg("error \"%s\" does not contain \"%s\"", err, want);
	assert_null(strchr(err, '\n'));
	assert_int_equal(r.nruns, 0);
	assert_null(r.suite);
	result_release(&r);
}

static void expect_reject_edit(const char *from, const char *to, const char *want)
{
	char *text = replace(valid_doc, from, to);
	expect_reject(text, want);
	free(text);
}

static void test_valid_doc_loads(void **state)
{
	struct lb_result r;
	char err[256] = "";
	const struct lb_metric *m;

	result_init(&r);
	assert_int_equal(result_load_buffer(valid_doc, strlen(valid_doc), &r, err, sizeof(err)), 0);
	assert_string_equal(r.variant, "base");
	assert_int_equal(r.machine.cpus, 2);
	assert_int_equal(r.nruns, 1);
	m = run_metric(&r.runs[0], "ops_per_sec");
	assert_non_null(m);
	assert_string_equal(m->unit, "ops/s");
	assert_true(m->higher_better);
	assert_int_equal(m->nsamples, 2);
	assert_true(m->samples[1] == 11.0);
	assert_true(m->value == 10.5);
	assert_int_equal(run_param(&r.runs[0], "threads")->num, 2);
	assert_null(r.runs[0].lockup);
	result_release(&r);
}

/* valid_doc with from replaced by fmt's text holding n repeats of c (%s in fmt) */
static char *with_repeat(const char *from, const char *fmt, char c, size_t n)
{
	char *run = malloc(n + 1), *to, *text;

	memset(run, c, n);
	run[n] = '\0';
	to = malloc(strlen(fmt) + n + 1);
	sprintf(to, fmt, run);
	text = replace(valid_doc, from, to);
	free(run);
	free(to);
	return text;
}

/* The bounds (result.h): strings, names and the reals jsonb reads back. */
static void test_bounds(void **state)
{
	struct lb_result r;
	char err[512] = "", *text;

	(void)state;
	/* kept: 2^53, -0.0, the subnormals, 1e18, just under 2^63; strings at their caps */
	text = replace(valid_doc, "[10, 11]",
	               "[9007199254740992, -0.0, 5e-324, 1e18, 9.2233720368547748e18]");
	result_init(&r);
	assert_int_equal(result_load_buffer(text, strlen(text), &r, err, sizeof(err)), 0);
	result_release(&r);
	free(text);
	text = with_repeat("\"h\"", "\"%s\"", 'h', LB_MAX_MACHINE);
	assert_int_equal(result_load_buffer(text, strlen(text), &r, err, sizeof(err)), 0);
	result_release(&r);
	free(text);
	/* a splat's lines are the kernel's words, up to 80 console lines: more than 4096 bytes */
	text = with_repeat("\"runs\": [",
	                   "\"splats\": [{\"key\": \"k\", \"message\": \"m\", "
	                   "\"lines\": \"%s\"}], \"runs\": [",
	                   'l', 80 * 100);
	assert_int_equal(result_load_buffer(text, strlen(text), &r, err, sizeof(err)), 0);
	assert_int_equal(r.nsplats, 1);
	result_release(&r);
	free(text);

	expect_reject_edit(
	    "[10, 11]", "[10, 9223372036854775808.0]",
	    "runs[0].samples.ops_per_sec[1]: 9.2233720368547758e+18 is out of range");
	expect_reject_edit("10.5}", "-1e19}",
	                   "runs[0].metrics.ops_per_sec: -1e+19 is out of range");
	text = with_repeat("\"h\"", "\"%s\"", 'h', LB_MAX_MACHINE + 1);
	expect_reject(text, "machine.hostname: a string of 257 bytes, over the 256 allowed");
	free(text);
	text = with_repeat("\"ops/s\"", "\"%s\"", 'u', LB_MAX_STRING + 1);
	expect_reject(text, "runs[0].units.ops_per_sec: a string of 4097 bytes");
	free(text);
	text = with_repeat("{\"threads\": 2}", "{\"threads\": 2, \"%s\": 1}", 'n', LB_MAX_KEY + 1);
	expect_reject(text, "runs[0].params: a name of 257 bytes, over the 256 allowed");
	free(text);
	text = with_repeat("\"lockup\": null",
	                   "\"lockup\": {\"kind\": \"stall\", \"message\": "
	                   "\"m\", \"stacks\": \"%s\"}",
	                   's', LB_MAX_STACKS + 1);
	expect_reject(text, "runs[0].lockup.stacks: a string of 1048577 bytes");
	free(text);
}

static void test_round_trip(void **state)
{
	struct lb_result a, b;
	json_t *ja, *jb;
	char err[256] = "";

	build_sample(&a);
	ja = result_to_json(&a);
	assert_non_null(ja);
	result_init(&b);
	assert_int_equal(result_from_json(ja, &b, err, sizeof(err)), 0);
	jb = result_to_json(&b);
	assert_true(json_equal(ja, jb));

	/* and through text */
	char *text = json_dumps(ja, JSON_INDENT(1) | JSON_SORT_KEYS | JSON_REAL_PRECISION(10));
	assert_int_equal(result_load_buffer(text, strlen(text), &b, err, sizeof(err)), 0);
	assert_string_equal(b.variant, "patch-2");
	assert_int_equal(b.round, 3);
	assert_int_equal(b.nruns, 2);
	assert_non_null(b.runs[1].lockup);
	assert_string_equal(b.runs[1].lockup->message, "no progress for 2.0 s");
	assert_string_equal(b.runs[1].lockup->stacks, "thread 1: futex_wait");
	const struct lb_metric *m = run_metric(&b.runs[0], "ops_per_sec");
	assert_int_equal(m->nper_thread, 2);
	assert_true(m->per_thread[1] == 999.25);
	assert_false(run_metric(&b.runs[0], "cov")->higher_better);
	assert_string_equal(run_param(&b.runs[0], "mode")->str, "fair");
	free(text);
	json_decref(ja);
	json_decref(jb);
	result_release(&a);
	result_release(&b);
}

static void test_params_key_and_lookup(void **state)
{
	struct lb_result r;
	result_init(&r);
	struct lb_run *run = result_add_run(&r, "cs-sweep", "mcs");
	run_set_param_num(run, "threads", 4);
	run_set_param_num(run, "cs_ns", 100);
	run_set_param_num(run, "threads", 8); /* replaces */
	char *key = run_params_key(run);
	assert_string_equal(key, "cs_ns=100,threads=8");
	free(key);
	assert_null(run_param(run, "nope"));
	assert_null(run_metric(run, "nope"));
	result_release(&r);
	assert_null(r.runs);
	assert_int_equal(r.nruns, 0);
}

static void test_fill_machine(void **state)
{
	struct lb_result r;
	result_init(&r);
	result_fill_machine(&r);
	assert_non_null(r.machine.hostname);
	assert_true(r.machine.cpus >= 1);
	assert_non_null(r.machine.model);
	assert_true(strlen(r.machine.model) > 0);
	assert_non_null(r.machine.kernel);
	assert_int_equal(strlen(r.started), 20);
	assert_int_equal(r.started[19], 'Z');
	assert_int_equal(r.started[10], 'T');
	result_release(&r);
}

static void test_reject_missing_schema(void **state)
{
	expect_reject_edit("\"schema\": \"lockbench-result/1\", ", "", "schema: missing");
}

static void test_reject_foreign_schema(void **state)
{
	expect_reject_edit("lockbench-result/1", "lockbench-result/2",
	                   "schema: expected \"lockbench-result/1\"");
	expect_reject("{\"schema\": 1}", "schema: expected \"lockbench-result/1\"");
	expect_reject("[1, 2]", "");
}

static void test_reject_unknown_keys(void **state)
{
	expect_reject_edit("\"round\": 0,", "\"round\": 0, \"extra\": 1,", "extra: unknown key");
	expect_reject_edit("\"cpus\": 2,", "\"cpus\": 2, \"ram\": 8,", "machine.ram: unknown key");
	expect_reject_edit("\"per_thread\": {},", "\"per_thread\": {}, \"notes\": \"x\",",
	                   "runs[0].notes: unknown key");
}

static void test_reject_wrong_types(void **state)
{
	expect_reject_edit("\"ops_per_sec\": 10.5", "\"ops_per_sec\": \"fast\"",
	                   "runs[0].metrics.ops_per_sec: expected a number");
	expect_reject_edit("\"round\": 0", "\"round\": -1", "round: expected an integer >= 0");
	expect_reject_edit("\"round\": 0", "\"round\": 1.5", "round: expected an integer");
	expect_reject_edit("\"cpus\": 2", "\"cpus\": 0", "machine.cpus: expected an integer >= 1");
	expect_reject_edit("\"threads\": 2", "\"threads\": 2.5",
	                   "runs[0].params.threads: expected an integer or a string");
	expect_reject_edit("[10, 11]", "[10, \"x\"]",
	                   "runs[0].samples.ops_per_sec[1]: expected a number");
	expect_reject_edit("\"higher\"", "\"up\"",
	                   "runs[0].better.ops_per_sec: expected \"higher\" or \"lower\"");
	expect_reject_edit("\"lockup\": null", "\"lockup\": \"yes\"",
	                   "runs[0].lockup: expected an object or null");
	expect_reject_edit("\"lockup\": null", "\"lockup\": {\"kind\": \"stall\"}",
	                   "runs[0].lockup.message: missing");
	expect_reject_edit("\"workload\": \"hot\"", "\"workload\": \"\"",
	                   "runs[0].workload: expected a non-empty string");
	expect_reject_edit("\"variant\": \"base\"", "\"variant\": \"patch-0\"",
	                   "variant: expected");
	expect_reject_edit("\"variant\": \"base\"", "\"variant\": \"other\"", "variant: expected");
	expect_reject_edit("2026-11-29T19:40:00Z", "yesterday", "started: expected");
	expect_reject_edit("\"runs\": [", "\"runs\": 5, \"x\": [", "x: unknown key");
	expect_reject_edit("\"round\": 0,", "\"round\": 0, \"controls\": \"pthread\",",
	                   "controls: expected an array of lock names");
	expect_reject_edit("\"round\": 0,", "\"round\": 0, \"controls\": [\"pthread\", \"\"],",
	                   "controls[1]: expected a lock name");
	expect_reject_edit("\"round\": 0,", "\"round\": 0, \"commit\": \"abc\",",
	                   "commit: expected an object");
	expect_reject_edit("\"round\": 0,",
	                   "\"round\": 0, \"commit\": {\"label\": \"abc x\", \"range\": 0},",
	                   "commit.range: expected an integer >= 1");
	expect_reject_edit("\"round\": 0,", "\"round\": 0, \"commit\": {\"label\": \"abc x\"},",
	                   "commit.range: missing");
}

/* The commit of a pulled range a document measured is taken (kept in its text only). */
static void test_commit(void **state)
{
	struct lb_result r;
	char err[512] = "";
	char *text = replace(valid_doc, "\"round\": 0,",
	                     "\"round\": 0, \"commit\": {\"label\": \"0123456789ab locking: x\", "
	                     "\"range\": 3},");

	(void)state;
	result_init(&r);
	assert_int_equal(result_load_buffer(text, strlen(text), &r, err, sizeof(err)), 0);
	result_release(&r);
	free(text);
}

/* A disturbance record and an instrument for the valid document's metric. */
#define DISTURB_OK                                                                                 \
	"\"disturbance\": {\"ops_per_sec\": {\"repeated\": 2, \"limit_pct\": 5, "                  \
	"\"steal_pct\": [0, 1.5], \"delay_pct\": [0.5, 2], \"lost_pct\": [0.6, 4], "               \
	"\"nivcsw\": [0, 3], \"migrations\": [0, 1]}}, \"instrument\": {\"ops_per_sec\": "         \
	"\"duet\"}, \"lockup\": null"

static void test_disturbance_and_instrument(void **state)
{
	struct lb_result r, b;
	char err[512] = "";
	char *text = replace(valid_doc, "\"lockup\": null", DISTURB_OK);
	const struct lb_metric *m;

	result_init(&r);
	assert_int_equal(result_load_buffer(text, strlen(text), &r, err, sizeof(err)), 0);
	m = run_metric(&r.runs[0], "ops_per_sec");
	assert_int_equal(m->repeated, 2);
	assert_true(m->disturb_limit_pct == 5);
	assert_int_equal(m->ndisturb, 2);
	assert_true(m->disturb[1].steal_pct == 1.5);
	assert_true(m->disturb[1].lost_pct == 4);
	assert_true(m->disturb[1].migrations == 1);
	assert_string_equal(metric_instrument(m), "duet");
	/* written back the same */
	json_t *ja = result_to_json(&r);
	result_init(&b);
	assert_int_equal(result_from_json(ja, &b, err, sizeof(err)), 0);
	json_t *jb = result_to_json(&b);
	assert_true(json_equal(ja, jb));
	assert_non_null(
	    json_object_get(json_array_get(json_object_get(ja, "runs"), 0), "disturbance"));
	json_decref(ja);
	json_decref(jb);
	result_release(&b);
	result_release(&r);
	free(text);

	/* an older document, with neither, is still valid and says timed */
	result_init(&r);
	assert_int_equal(result_load_buffer(valid_doc, strlen(valid_doc), &r, err, sizeof(err)), 0);
	m = run_metric(&r.runs[0], "ops_per_sec");
	assert_string_equal(metric_instrument(m), "timed");
	assert_int_equal(m->ndisturb, 0);
	ja = result_to_json(&r);
	assert_null(json_object_get(json_array_get(json_object_get(ja, "runs"), 0), "disturbance"));
	assert_null(json_object_get(json_array_get(json_object_get(ja, "runs"), 0), "instrument"));
	json_decref(ja);
	result_release(&r);
}

/* Break the disturbance record of DISTURB_OK one way; the load names the field. */
static void expect_reject_disturb(const char *from, const char *to, const char *want)
{
	char *ok = replace(valid_doc, "\"lockup\": null", DISTURB_OK);
	char *bad = replace(ok, from, to);
	expect_reject(bad, want);
	free(bad);
	free(ok);
}

static void test_reject_bad_disturbance(void **state)
{
	const char *p = "runs[0].disturbance.ops_per_sec";
	char want[256];

	expect_reject_disturb("\"repeated\": 2", "\"repeated\": -1",
	                      "repeated: expected an integer >= 0");
	expect_reject_disturb("\"repeated\": 2", "\"repeated\": 100001",
	                      "repeated: more than 100000");
	expect_reject_disturb("\"limit_pct\": 5", "\"limit_pct\": 101",
	                      "limit_pct: expected a number from 0 to 100");
	snprintf(want, sizeof(want), "%s.lost_pct: expected an array of 2 numbers", p);
	expect_reject_disturb("\"lost_pct\": [0.6, 4]", "\"lost_pct\": [0.6]", want);
	snprintf(want, sizeof(want), "%s.steal_pct[1]: expected a number from 0 to 100", p);
	expect_reject_disturb("\"steal_pct\": [0, 1.5]", "\"steal_pct\": [0, 150]", want);
	snprintf(want, sizeof(want), "%s.nivcsw[0]: expected a number from 0 to 1e+09", p);
	expect_reject_disturb("\"nivcsw\": [0, 3]", "\"nivcsw\": [-1, 3]", want);
	expect_reject_disturb("\"migrations\": [0, 1]}", "\"migrations\": [0, 1], \"x\": 1}",
	                      "x: unknown key");
	expect_reject_disturb("\"migrations\": [0, 1]}", "\"migrations\": [0, 1, 2]}",
	                      "migrations: expected an array of 2 numbers (one per sample)");
	/* one entry per sample: three entries for two samples */
	expect_reject_disturb(
	    "\"steal_pct\": [0, 1.5], \"delay_pct\": [0.5, 2], \"lost_pct\": "
	    "[0.6, 4], \"nivcsw\": [0, 3], \"migrations\": [0, 1]",
	    "\"steal_pct\": [0, 1, 2], \"delay_pct\": [0, 1, 2], \"lost_pct\": [0, "
	    "1, 2], \"nivcsw\": [0, 1, 2], \"migrations\": [0, 1, 2]",
	    "3 entries for 2 samples");
	expect_reject_disturb("\"disturbance\": {\"ops_per_sec\"", "\"disturbance\": {\"cov\"",
	                      "runs[0].disturbance.cov: not a metric of this run");
	expect_reject_disturb("\"instrument\": {\"ops_per_sec\": \"duet\"}",
	                      "\"instrument\": {\"ops_per_sec\": \"guess\"}",
	                      "runs[0].instrument.ops_per_sec: expected \"timed\", \"duet\"");
	/* lockstep (lockstep.h) is an instrument of its own, kept as written */
	{
		char *ok = replace(valid_doc, "\"lockup\": null", DISTURB_OK);
		char *ls = replace(ok, "\"duet\"}", "\"lockstep\"}");
		struct lb_result l;
		char err[512] = "";
		result_init(&l);
		assert_int_equal(result_load_buffer(ls, strlen(ls), &l, err, sizeof(err)), 0);
		assert_string_equal(metric_instrument(run_metric(&l.runs[0], "ops_per_sec")),
		                    LB_INSTRUMENT_LOCKSTEP);
		result_release(&l);
		free(ls);
		free(ok);
	}
	expect_reject_disturb("\"instrument\": {\"ops_per_sec\": \"duet\"}", "\"instrument\": 1",
	                      "runs[0].instrument: expected an object");
}

static void test_controls_round_trip(void **state)
{
	struct lb_result r;
	char err[256] = "";
	char *text =
	    replace(valid_doc, "\"round\": 0,", "\"round\": 0, \"controls\": [\"pthread\"],");

	result_init(&r);
	assert_int_equal(result_load_buffer(text, strlen(text), &r, err, sizeof(err)), 0);
	assert_int_equal(r.ncontrols, 1);
	assert_true(result_is_control(&r, "pthread"));
	json_t *j = result_to_json(&r);
	assert_non_null(j);
	assert_string_equal(json_string_value(json_array_get(json_object_get(j, "controls"), 0)),
	                    "pthread");
	json_decref(j);
	/* a document without controls writes none */
	assert_int_equal(result_load_buffer(valid_doc, strlen(valid_doc), &r, err, sizeof(err)), 0);
	j = result_to_json(&r);
	assert_null(json_object_get(j, "controls"));
	json_decref(j);
	result_release(&r);
	free(text);
}

/* A kernel run's optional machine.guest_thresholds: kept, written back, never empty. */
static void test_guest_thresholds_round_trip(void **state)
{
	struct lb_result r;
	char err[256] = "";
	char *text = replace(valid_doc, "\"kernel\": \"6.1\"}",
	                     "\"kernel\": \"6.1\", \"guest_thresholds\": \"lockbench: RCU stall "
	                     "100 s\"}");
	char *empty = replace(valid_doc, "\"kernel\": \"6.1\"}",
	                      "\"kernel\": \"6.1\", \"guest_thresholds\": \"\"}");

	result_init(&r);
	assert_int_equal(result_load_buffer(text, strlen(text), &r, err, sizeof(err)), 0);
	assert_string_equal(r.machine.guest_thresholds, "lockbench: RCU stall 100 s");
	json_t *j = result_to_json(&r);
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(j, "machine"), "guest_thresholds")),
	    "lockbench: RCU stall 100 s");
	json_decref(j);
	assert_int_equal(result_load_buffer(valid_doc, strlen(valid_doc), &r, err, sizeof(err)), 0);
	assert_null(r.machine.guest_thresholds);
	j = result_to_json(&r);
	assert_null(json_object_get(json_object_get(j, "machine"), "guest_thresholds"));
	json_decref(j);
	assert_int_equal(result_load_buffer(empty, strlen(empty), &r, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "machine.guest_thresholds"));
	result_release(&r);
	free(text);
	free(empty);
}

static void test_accept_variants(void **state)
{
	const char *ok[] = {"\"patched\"", "\"patch-1\"", "\"patch-12\""};
	for (size_t i = 0; i < 3; i++) {
		char *text = replace(valid_doc, "\"base\"", ok[i]);
		struct lb_result r;
		char err[256] = "";
		result_init(&r);
		if (result_load_buffer(text, strlen(text), &r, err, sizeof(err)) != 0)
			fail_msg("%s rejected: %s", ok[i], err);
		result_release(&r);
		free(text);
	}
}

static void test_reject_mismatched_units(void **state)
{
	expect_reject_edit("\"units\": {\"ops_per_sec\": \"ops/s\"}", "\"units\": {}",
	                   "runs[0].units.ops_per_sec: missing");
	expect_reject_edit("\"units\": {\"ops_per_sec\": \"ops/s\"}",
	                   "\"units\": {\"ops_per_sec\": \"ops/s\", \"jpm\": \"JPM\"}",
	                   "runs[0].units.jpm: not a metric");
	expect_reject_edit("\"better\": {\"ops_per_sec\": \"higher\"}", "\"better\": {}",
	                   "runs[0].better.ops_per_sec: missing");
	expect_reject_edit("\"samples\": {\"ops_per_sec\": [10, 11]}",
	                   "\"samples\": {\"wake_ms\": [10, 11]}",
	                   "runs[0].samples.wake_ms: not a metric");
	expect_reject_edit("\"per_thread\": {}", "\"per_thread\": {\"x\": [1]}",
	                   "runs[0].per_thread.x: not a metric");
}

static void test_reject_duplicate_keys(void **state)
{
	expect_reject_edit("\"round\": 0,", "\"round\": 0, \"round\": 1,", "line 2 column");
	expect_reject_edit("\"round\": 0,", "\"round\": 0, \"round\": 1,", "duplicate");
}

static void test_splats(void **state)
{
	struct lb_result a, b;
	json_t *ja, *jb;
	char err[256] = "";

	build_sample(&a);
	result_add_splat(&a, "WARNING:possible_circular_locking_dependency_detected",
	                 "WARNING: possible circular locking dependency detected",
	                 "lockbench/62 is trying to acquire lock:\n", "lockbench");
	result_add_splat(&a, "Oops", "Oops: 0000 [#1] PREEMPT SMP", NULL, NULL);
	ja = result_to_json(&a);
	assert_non_null(ja);
	result_init(&b);
	assert_int_equal(result_from_json(ja, &b, err, sizeof(err)), 0);
	assert_int_equal(b.nsplats, 2);
	assert_string_equal(b.splats[0].boot, "lockbench");
	assert_null(b.splats[1].lines);
	assert_true(result_has_splat(&b, "Oops"));
	assert_false(result_has_splat(&b, "WARNING:suspicious_RCU_usage"));
	jb = result_to_json(&b);
	assert_true(json_equal(ja, jb));
	json_decref(ja);
	json_decref(jb);
	result_release(&a);
	result_release(&b);

	/* optional, but strict when there */
	expect_reject_edit("\"round\": 0,", "\"round\": 0, \"splats\": {},",
	                   "splats: expected an array");
	expect_reject_edit("\"round\": 0,", "\"round\": 0, \"splats\": [{\"message\": \"x\"}],",
	                   "splats[0].key: missing");
	expect_reject_edit("\"round\": 0,",
	                   "\"round\": 0, \"splats\": [{\"key\": \"\", \"message\": \"x\"}],",
	                   "splats[0].key: expected a non-empty string");
	expect_reject_edit(
	    "\"round\": 0,",
	    "\"round\": 0, \"splats\": [{\"key\": \"Oops\", \"message\": \"x\", \"n\": 1}],",
	    "splats[0].n: unknown key");
}

static void test_reject_truncated(void **state)
{
	char *text = strndup(valid_doc, strlen(valid_doc) / 2);
	expect_reject(text, "truncated");
	free(text);
	expect_reject("", "truncated");
	expect_reject("{\"schema\": ", "line 1 column");
}

static void test_reject_nonfinite_on_write(void **state)
{
	struct lb_result r;
	char err[256] = "";
	char dir[] = "/tmp/lbtest.XXXXXX";
	char path[PATH_MAX];

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/r.json", dir);
	build_sample(&r);
	r.runs[0].metrics[1].value = 0.0 / 0.0;
	assert_null(result_to_json(&r));
	assert_int_equal(result_write_file(&r, path, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "runs[0].metrics.cov: not a finite number"));
	assert_int_equal(access(path, F_OK), -1);
	/* a result that was never filled in is refused with the field named */
	result_release(&r);
	assert_int_equal(result_write_file(&r, path, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "suite: not set"));
	assert_int_equal(rmdir(dir), 0); /* no temporary file left behind either */
}

static void test_write_unwritable_path(void **state)
{
	struct lb_result r;
	char err[256] = "";
	char dir[] = "/tmp/lbtest.XXXXXX";
	char path[PATH_MAX];

	build_sample(&r);
	assert_int_equal(result_write_file(&r, "/nonexistent-dir/x/r.json", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "/nonexistent-dir/x/r.json: No such file or directory"));
	assert_int_equal(access("/nonexistent-dir/x/r.json", F_OK), -1);

	/* the target is a directory: rename fails, the temporary file goes */
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/sub", dir);
	assert_int_equal(mkdir(path, 0755), 0);
	assert_int_equal(result_write_file(&r, path, err, sizeof(err)), -1);
	assert_non_null(strstr(err, path));
	DIR *d = opendir(dir);
	struct dirent *e;
	int entries = 0;
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.' || strlen(e->d_name) > 2)
			entries++;
	closedir(d);
	assert_int_equal(entries, 1); /* only "sub" */
	rmdir(path);
	rmdir(dir);
	result_release(&r);
}

static void test_write_and_load(void **state)
{
	struct lb_result r, back;
	char err[256] = "";
	char dir[] = "/tmp/lbtest.XXXXXX";
	char path[PATH_MAX];

	build_sample(&r);
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/r.json", dir);
	assert_int_equal(result_write_file(&r, path, err, sizeof(err)), 0);
	result_init(&back);
	assert_int_equal(result_load_file(path, &back, err, sizeof(err)), 0);
	assert_int_equal(back.nruns, 2);
	assert_string_equal(back.suite, "smoke");
	/* an overwrite replaces the file whole */
	r.round = 7;
	assert_int_equal(result_write_file(&r, path, err, sizeof(err)), 0);
	assert_int_equal(result_load_file(path, &back, err, sizeof(err)), 0);
	assert_int_equal(back.round, 7);
	unlink(path);
	assert_int_equal(rmdir(dir), 0);
	assert_int_equal(result_load_file(path, &back, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "No such file"));
	result_release(&back);
	result_release(&r);
}

/*
 * The image (elfimage.h): round trip, refused unless "sha256:" and 64
 * lower-case hex digits, and this test binary's own hashes to that form.
 */
static void test_image(void **state)
{
	static const char img[] =
	    "sha256:00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
	static const char *const bad[] = {
	    "\"sha256:0011\"", "\"md5:00112233445566778899aabbccddeeff\"", "42",
	    "\"sha256:00112233445566778899AABBCCDDEEFF00112233445566778899aabbccddeeff\"", "null"};
	char own[ELFIMAGE_LEN], again[ELFIMAGE_LEN], err[256] = "";
	struct lb_result r;
	char field[128];

	(void)state;
	result_init(&r);
	snprintf(field, sizeof(field), "\"round\": 0, \"image\": \"%s\",", img);
	char *text = replace(valid_doc, "\"round\": 0,", field);
	assert_int_equal(result_load_buffer(text, strlen(text), &r, err, sizeof(err)), 0);
	assert_string_equal(r.image, img);
	json_t *j = result_to_json(&r);
	assert_string_equal(json_string_value(json_object_get(j, "image")), img);
	json_decref(j);
	free(text);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(field, sizeof(field), "\"round\": 0, \"image\": %s,", bad[i]);
		text = replace(valid_doc, "\"round\": 0,", field);
		assert_int_equal(result_load_buffer(text, strlen(text), &r, err, sizeof(err)), -1);
		assert_non_null(strstr(err, "image"));
		free(text);
	}
	assert_int_equal(elfimage_sha256("/proc/self/exe", own, err, sizeof(err)), 0);
	assert_true(elfimage_valid(own));
	assert_int_equal(elfimage_sha256("/proc/self/exe", again, err, sizeof(err)), 0);
	assert_string_equal(own, again);
	assert_int_equal(elfimage_sha256("/proc/self/status", own, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "not a 64-bit ELF"));
	assert_int_equal(elfimage_sha256("/nonexistent/x", own, err, sizeof(err)), -1);
	result_release(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_valid_doc_loads),
	    cmocka_unit_test(test_bounds),
	    cmocka_unit_test(test_round_trip),
	    cmocka_unit_test(test_params_key_and_lookup),
	    cmocka_unit_test(test_fill_machine),
	    cmocka_unit_test(test_reject_missing_schema),
	    cmocka_unit_test(test_reject_foreign_schema),
	    cmocka_unit_test(test_reject_unknown_keys),
	    cmocka_unit_test(test_commit),
	    cmocka_unit_test(test_reject_wrong_types),
	    cmocka_unit_test(test_controls_round_trip),
	    cmocka_unit_test(test_guest_thresholds_round_trip),
	    cmocka_unit_test(test_image),
	    cmocka_unit_test(test_disturbance_and_instrument),
	    cmocka_unit_test(test_reject_bad_disturbance),
	    cmocka_unit_test(test_accept_variants),
	    cmocka_unit_test(test_reject_mismatched_units),
	    cmocka_unit_test(test_reject_duplicate_keys),
	    cmocka_unit_test(test_reject_truncated),
	    cmocka_unit_test(test_splats),
	    cmocka_unit_test(test_reject_nonfinite_on_write),
	    cmocka_unit_test(test_write_unwritable_path),
	    cmocka_unit_test(test_write_and_load),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
