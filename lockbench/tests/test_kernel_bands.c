/*
 * test_kernel_bands.c - the users suite's composition (its bands, a boot
 * each, and the points the guest runs; a quick boot that names its
 * kernel-mutex workloads runs them at its first band) and the rows of its
 * table by bands read back from a run's document (kernel_band_rows); a
 * band's boot that locked up after some points finished, recovered from its
 * real console (kernel_recover_boot); the guest's lockup thresholds under
 * TCG.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "../src/console.h"
#include "../src/kernel_guest.h"
#include "../src/suite.h"

/* The users suite's three bands (AIM7's), each at its top count, each boot within 1500 s. */
static void test_users_bands(void **state)
{
	const struct suite_band *b;
	assert_int_equal(suite_bands("users", &b), 3);
	const int want[3][3] = {{10, 100, 100}, {200, 1000, 1000}, {1100, 2000, 2000}};
	for (int i = 0; i < 3; i++) {
		assert_int_equal(b[i].umin, want[i][0]);
		assert_int_equal(b[i].umax, want[i][1]);
		assert_int_equal(b[i].users, want[i][2]);
		assert_true(b[i].limit_s > 0 && b[i].limit_s <= 1500);
		assert_true(i == 0 || b[i].limit_s >= b[i - 1].limit_s);
	}
	/* the old name is the same suite */
	assert_string_equal(suite_canonical("seeds"), "users");
	assert_int_equal(suite_bands("seeds", &b), 3);
	assert_true(suite_exists("seeds"));
	/* the quick suite is one boot, as before */
	assert_int_equal(suite_bands("quick", &b), 0);
	assert_null(b);
	assert_int_equal(suite_bands("smoke", &b), 0);
}

/* The guest's users plan: the four workloads at the bands' counts. */
static void test_users_plan(void **state)
{
	struct suite_overrides ov = {0};
	struct plan plan = {0};
	char err[256];
	assert_int_equal(suite_plan("users", &ov, &plan, err, sizeof(err)), 0);
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
	assert_int_equal(suite_plan("users", &ov, &plan, err, sizeof(err)), 0);
	assert_int_equal(plan.n, 4);
	for (size_t i = 0; i < plan.n; i++)
		assert_int_equal(plan.points[i].p.threads, 1000);
	plan_release(&plan);
}

/*
 * A kernel job's quick or smoke boot names the kernel-mutex workloads only
 * the users suite has: each runs at its first band's users, timed as hot.
 */
static void test_mutex_workloads_in_quick(void **state)
{
	const struct workload *ws[] = {workload_find("hot"), workload_find("pipe-mutex"),
	                               workload_find("seq-read"), NULL};
	struct suite_overrides ov = {.workloads = ws};
	struct plan plan = {0};
	char err[256];
	int pipe = 0, seq = 0;
	assert_int_equal(suite_plan("quick", &ov, &plan, err, sizeof(err)), 0);
	for (size_t i = 0; i < plan.n; i++) {
		const struct plan_point *pt = &plan.points[i];
		if (strcmp(pt->w->name, "pipe-mutex") && strcmp(pt->w->name, "seq-read"))
			continue;
		pipe += !strcmp(pt->w->name, "pipe-mutex");
		seq += !strcmp(pt->w->name, "seq-read");
		assert_int_equal(pt->p.threads, 100);
		assert_int_equal(pt->p.duration_ms, 100); /* quick's hot */
		assert_int_equal(pt->p.repeat, 3);
	}
	assert_int_equal(pipe, 1);
	assert_int_equal(seq, 1);
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

/*
 * A real console (lockbench/tests/data, trimmed of the kernel's boot lines):
 * the 2000-user band's boot of 2026-12-01 at host load 10-23, where the three
 * mutex workloads finished and the kernel's RCU stall detector fired during
 * aim7-mix.
 */
#define STALL_CONSOLE "lockbench/tests/data/console-users-2000-rcu-stall.log"

/*
 * Another: the same band's boot with only the RCU and soft lockup
 * thresholds raised, at host load 7-12, where an aim7 job was reported
 * blocked for 179 s (the hung-task timeout was 120 s).
 */
#define HUNG_CONSOLE "lockbench/tests/data/console-users-2000-hung-task.log"

static char **read_console_file(const char *path, struct strutil_buf *text, size_t *n)
{
	if (strutil_read_file(path, text))
		fail_msg("cannot read %s (run from the top of the tree)", path);
	return console_lines(text->buf, n);
}

static char **read_console(struct strutil_buf *text, size_t *n)
{
	return read_console_file(STALL_CONSOLE, text, n);
}

static const struct lb_run *find_run(const struct lb_result *r, const char *w)
{
	for (size_t i = 0; i < r->nruns; i++)
		if (!strcmp(r->runs[i].workload, w))
			return &r->runs[i];
	return NULL;
}

/* The guest's table lines give each finished point its params and figure. */
static void test_table_runs_from_console(void **state)
{
	struct strutil_buf text = STRUTIL_BUF_INIT;
	struct lb_result r;
	size_t n;
	char **lines = read_console(&text, &n), *last = NULL;

	result_init(&r);
	assert_int_equal(console_guest_table_runs(lines, n, &r, &last), 3);
	assert_string_equal(last, "seq-read kernel duration_ms=200,users=2000");
	const char *const names[] = {"pipe-mutex", "epoll-ctl", "seq-read"};
	const double want[] = {27637, 18916, 48504};
	for (int i = 0; i < 3; i++) {
		const struct lb_run *run = &r.runs[i];
		assert_string_equal(run->workload, names[i]);
		assert_string_equal(run->lock, "kernel");
		assert_null(run->lockup);
		char *key = run_params_key(run);
		assert_string_equal(key, "duration_ms=200,users=2000");
		free(key);
		assert_int_equal(run->nmetrics, 1);
		assert_string_equal(run->metrics[0].name, "ops_per_sec");
		assert_string_equal(run->metrics[0].unit, "ops/s");
		assert_true(run->metrics[0].higher_better);
		assert_true(run->metrics[0].value == want[i]);
		assert_int_equal(run->metrics[0].nsamples, 0); /* the mean as printed, no samples */
	}
	result_release(&r);
	free(last);
	free(lines);
	strutil_buf_release(&text);
}

/*
 * The band's boot that stalled: the finished points' figures in its rows,
 * the lockup on aim7-mix at 2000 users (the point that was running), with
 * the params the guest gives it.
 */
static void test_recover_stalled_band(void **state)
{
	struct strutil_buf text = STRUTIL_BUF_INIT, stacks = STRUTIL_BUF_INIT;
	struct lb_result r;
	size_t n;
	char **lines = read_console(&text, &n), msg[512];
	const char *kind;
	struct console_end end = {.ended = false, .timed_out = false, .secs = 331.3};
	const struct lb_run *running = NULL;

	assert_true(console_detect_lockup(lines, n, &end, &kind, msg, sizeof(msg), &stacks));
	assert_string_equal(kind, "rcu-stall");
	result_init(&r);
	struct kernel_guest_plan g = {.suite = "users",
	                              .workloads = "pipe-mutex,epoll-ctl,seq-read,aim7-mix",
	                              .locks = "pthread,kmutex",
	                              .users = "2000",
	                              .band_users = 2000};
	assert_int_equal(kernel_recover_boot(&r, lines, n, &g, kind, msg, stacks.buf, &running), 3);
	assert_int_equal(r.nruns, 4);
	assert_non_null(running);
	assert_string_equal(running->workload, "aim7-mix");
	assert_null(find_run(&r, "lockbench-guest"));
	const struct lb_run *aim7 = find_run(&r, "aim7-mix");
	assert_ptr_equal(aim7, running);
	char *key = run_params_key(aim7);
	assert_string_equal(key, "duration_ms=1000,users=2000");
	free(key);
	assert_non_null(aim7->lockup);
	assert_string_equal(aim7->lockup->kind, "rcu-stall");
	assert_string_equal(aim7->lockup->message,
	                    "rcu: INFO: rcu_preempt self-detected stall on CPU");
	assert_non_null(strstr(aim7->lockup->stacks, "slob_alloc"));

	const struct suite_band bands[] = {
	    {10, 100, 100, 600}, {200, 1000, 1000, 900}, {1100, 2000, 2000, 1500}};
	bool booted[3] = {false, false, true};
	struct report_band_row rows[3];
	const char *unit;
	assert_int_equal(kernel_band_rows(&r, "pipe-mutex", bands, 3, booted, rows, &unit), 1);
	assert_true(rows[2].mean == 27637);
	assert_int_equal(rows[2].n, 1);
	assert_null(rows[2].note);
	assert_string_equal(unit, "ops/s");
	assert_int_equal(kernel_band_rows(&r, "aim7-mix", bands, 3, booted, rows, &unit), 1);
	assert_string_equal(rows[2].note, "lockup");
	assert_string_equal(rows[2].kind, "rcu-stall");
	result_release(&r);

	/* the guest lockbench never started: the lockup is the boot's */
	result_init(&r);
	size_t upto = 0;
	while (upto < n && strncmp(lines[upto], "lockbench: suite", 16))
		upto++;
	assert_true(upto < n);
	assert_int_equal(kernel_recover_boot(&r, lines, upto, &g, kind, msg, NULL, &running), 0);
	assert_int_equal(r.nruns, 1);
	assert_string_equal(running->workload, "lockbench-guest");
	assert_true(run_param(running, "users")->num == 2000);
	result_release(&r);

	/* every point finished, then the kernel stalled: the boot's too */
	result_init(&r);
	g.workloads = "pipe-mutex,epoll-ctl,seq-read";
	assert_int_equal(kernel_recover_boot(&r, lines, n, &g, kind, msg, NULL, &running), 3);
	assert_string_equal(running->workload, "lockbench-guest");
	result_release(&r);

	free(lines);
	strutil_buf_release(&text);
	strutil_buf_release(&stacks);
}

/* The hung task's console: the same recovery, the lockup a hung-task. */
static void test_recover_hung_band(void **state)
{
	struct strutil_buf text = STRUTIL_BUF_INIT, stacks = STRUTIL_BUF_INIT;
	struct lb_result r;
	size_t n;
	char **lines = read_console_file(HUNG_CONSOLE, &text, &n), msg[512];
	const char *kind;
	struct console_end end = {.ended = false, .timed_out = false, .secs = 959.5};
	const struct lb_run *running = NULL;
	struct kernel_guest_plan g = {.suite = "users",
	                              .workloads = "pipe-mutex,epoll-ctl,seq-read,aim7-mix",
	                              .locks = "pthread,kmutex",
	                              .users = "2000"};

	assert_true(console_detect_lockup(lines, n, &end, &kind, msg, sizeof(msg), &stacks));
	assert_string_equal(kind, "hung-task");
	result_init(&r);
	assert_int_equal(kernel_recover_boot(&r, lines, n, &g, kind, msg, stacks.buf, &running), 3);
	assert_true(find_run(&r, "pipe-mutex")->metrics[0].value == 54465);
	assert_true(find_run(&r, "epoll-ctl")->metrics[0].value == 6524);
	assert_true(find_run(&r, "seq-read")->metrics[0].value == 33003);
	assert_string_equal(running->workload, "aim7-mix");
	assert_string_equal(running->lockup->kind, "hung-task");
	assert_string_equal(running->lockup->message,
	                    "INFO: task exe:19639 blocked for more than 179 seconds.");
	assert_non_null(strstr(running->lockup->stacks, "rwsem_down_write_slowpath"));
	result_release(&r);
	free(lines);
	strutil_buf_release(&text);
	strutil_buf_release(&stacks);
}

/* Lines a kernel message broke, and lines that are not the guest's table. */
static void test_table_runs_rejects(void **state)
{
	char text[] =
	    "pipe-mutex kernel duration_ms=200,users=10 ops_per_sec 1,000 ops/s \xc2\xb1"
	    "1.0% n=2\n"
	    "LOCKLAB-JSON-BEGIN ttyS1\n"
	    "lockbench: suite users, 2 points, 2 CPUs (QEMU), kernel 6.1\n"
	    "lockbench: pipe-mutex kernel 10 users: 5123 operations so far (60.0 s)\n"
	    "pipe-mutex        kernel            duration_ms=200,users=10   ops_per_sec 2,5rcu: "
	    "INFO: x\n"
	    "epoll-ctl         kernel            duration_ms=200,users=10   ops_per_sec 12.5 "
	    "ops/s \xc2\xb1"
	    "3.0% n=3\n"
	    "futex-wake        pthread           threads=4                  wake_ms 0.250 ms "
	    "\xc2\xb1"
	    "0.0% n=1\n"
	    "hot               broken-lostwake   threads=2,duration_ms=200  LOCKUP (stall): no "
	    "progress for 5.0 s\n"
	    "random: crng init done\n"
	    "LOCKLAB-JSON-END rc=3\n"
	    "seq-read kernel duration_ms=200,users=10 ops_per_sec 9 ops/s \xc2\xb1"
	    "1.0% n=2\n";
	size_t n;
	char **lines = console_lines(text, &n);
	struct lb_result r;
	result_init(&r);
	assert_int_equal(console_guest_table_runs(lines, n, &r, NULL), 3);
	assert_string_equal(r.runs[0].workload, "epoll-ctl");
	assert_true(r.runs[0].metrics[0].value == 12.5);
	assert_string_equal(r.runs[1].workload, "futex-wake");
	assert_false(r.runs[1].metrics[0].higher_better); /* ms: lower is better */
	assert_string_equal(r.runs[2].lock, "broken-lostwake");
	assert_string_equal(r.runs[2].lockup->kind, "stall");
	assert_string_equal(r.runs[2].lockup->message, "no progress for 5.0 s");
	result_release(&r);
	free(lines);
}

/* locklab.progress_s: a fifth of the boot's limit, 1 to 60 s. */
static void test_progress_period(void **state)
{
	assert_int_equal(kernel_progress_s(1500), KERNEL_PROGRESS_MAX_S);
	assert_int_equal(kernel_progress_s(300), 60);
	assert_int_equal(kernel_progress_s(200), 40);
	assert_int_equal(kernel_progress_s(12), 2);
	assert_int_equal(kernel_progress_s(3), 1);
	assert_int_equal(kernel_progress_s(0), 1);
}

/* The users suite's allowances follow the user count, in any suite. */
static void test_many_users(void **state)
{
	assert_true(kernel_many_users("users", 0));
	assert_true(kernel_many_users("users", 10));
	assert_true(kernel_many_users("seeds", 0)); /* the old name */
	assert_false(kernel_many_users("quick", 0));
	assert_false(kernel_many_users("smoke", KERNEL_MANY_USERS));
	assert_true(kernel_many_users("smoke", KERNEL_MANY_USERS + 1));
	assert_true(kernel_many_users("quick", 2000));
}

/* TCG: the longest thresholds 6.1 takes, within a third of the deadline. */
static void test_guest_thresholds(void **state)
{
	struct kernel_thresholds t;
	char line[256];

	kernel_guest_thresholds(false, 1500, 120, true, &t);
	assert_false(t.scaled);
	assert_int_equal(t.rcu_stall_s, 21);
	kernel_thresholds_cmdline(&t, line, sizeof(line));
	assert_string_equal(line, "");

	kernel_guest_thresholds(true, 1500, 120, true, &t);
	assert_true(t.scaled);
	assert_int_equal(t.rcu_stall_s, 300);
	assert_int_equal(t.watchdog_thresh, 60);
	assert_int_equal(t.hung_task_s, 500);
	kernel_thresholds_cmdline(&t, line, sizeof(line));
	assert_string_equal(line, "rcupdate.rcu_cpu_stall_timeout=300 watchdog_thresh=60 "
	                          "sysctl.kernel.hung_task_timeout_secs=500");
	kernel_thresholds_say(&t, line, sizeof(line));
	assert_string_equal(line, "RCU stall 300 s, soft lockup 120 s, hung task 500 s");
	/* a hung-task timeout given by hand is kept */
	kernel_guest_thresholds(true, 1500, 120, false, &t);
	assert_int_equal(t.hung_task_s, 120);
	kernel_thresholds_cmdline(&t, line, sizeof(line));
	assert_string_equal(line, "rcupdate.rcu_cpu_stall_timeout=300 watchdog_thresh=60 "
	                          "sysctl.kernel.hung_task_timeout_secs=120");

	/* the 100-user band's 600 s: a stall is still reported by 200 s */
	kernel_guest_thresholds(true, 600, 120, true, &t);
	assert_int_equal(t.rcu_stall_s, 200);
	assert_int_equal(t.watchdog_thresh, 60);
	assert_int_equal(t.hung_task_s, 200);
	/* smoke and quick's 300 s lockbench boot: a stuck task by 100 s */
	kernel_guest_thresholds(true, 300, 3, true, &t);
	assert_int_equal(t.rcu_stall_s, 100);
	assert_int_equal(t.watchdog_thresh, 50);
	assert_int_equal(t.hung_task_s, 100);
	/* and 3 s when --hung-task-s 3 is given */
	kernel_guest_thresholds(true, 300, 3, false, &t);
	assert_int_equal(t.hung_task_s, 3);
	/* a short deadline keeps the kernel's own */
	kernel_guest_thresholds(true, 60, 3, false, &t);
	assert_false(t.scaled);
	assert_int_equal(t.rcu_stall_s, 21);
	assert_int_equal(t.watchdog_thresh, 10);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_users_bands),
	    cmocka_unit_test(test_users_plan),
	    cmocka_unit_test(test_mutex_workloads_in_quick),
	    cmocka_unit_test(test_band_rows),
	    cmocka_unit_test(test_table_runs_from_console),
	    cmocka_unit_test(test_recover_stalled_band),
	    cmocka_unit_test(test_recover_hung_band),
	    cmocka_unit_test(test_table_runs_rejects),
	    cmocka_unit_test(test_guest_thresholds),
	    cmocka_unit_test(test_progress_period),
	    cmocka_unit_test(test_many_users),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
