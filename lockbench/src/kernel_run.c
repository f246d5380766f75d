/*
 * kernel_run.c - `lockbench kernel run` (kernel_run.h).
 *
 * run: one qemu boot (boot.c) per locktorture type and writer count
 * (locktorture is built in and runs once per boot from its command line
 * parameters, then powers off after shutdown_secs), and one boot running
 * the static lockbench on the guest workloads.  The serial console is read
 * by console.c: locktorture's figures, the guest's JSON, lockups (hung
 * task, soft lockup, RCU stall, panic, Oops, locktorture failure, or no end
 * by the deadline) and splats (the kernel checkers' reports).
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "boot.h"
#include "console.h"
#include "kernel_cli.h"
#include "kernel_guest.h"
#include "kernel_run.h"
#include "lock.h"
#include "report.h"
#include "result.h"
#include "strutil.h"
#include "suite.h"
#include "util.h"
#include "workload.h"

#define EXIT_USAGE  2
#define EXIT_LOCKUP 3
/* the users suite's lockbench boots: see kernel_run_main (and suite.c's bands) */
#define USERS_HUNG_S   120
#define USERS_STALL_MS 5000
#define USERS_MEM_MB   1536

static const char *prog = "lockbench kernel";

struct run_args {
	const char *kernel, *suite, *json, *variant, *accel_name, *guest_dir, *console_dir,
	    *build_json, *workloads, *locks, *users, *extra;
	int *writers, nwriters;
	char **types;
	int ntypes;
	int round, timeout_s, torture_s, hung_s, cpus, stall_ms;
	int users_max; /* the largest of --users, 0 without it */
	int cap_x;     /* a lockbench boot's hard cap, in deadlines */
	int budget_s;  /* the whole run's time (the agent's limit), 0: none */
	bool no_torture, no_lockbench, hung_given;
	bool debug; /* a debug kernel: lockups and splats only, no figures */
};

static bool valid_torture_type(const char *t)
{
	static const char *const known[] = {
	    "spin_lock",     "spin_lock_irq", "rw_lock",    "rw_lock_irq",       "mutex_lock",
	    "ww_mutex_lock", "rtmutex_lock",  "rwsem_lock", "percpu_rwsem_lock", NULL};
	for (int i = 0; known[i]; i++)
		if (!strcmp(known[i], t))
			return true;
	return false;
}

static int save_console(const char *dir, const char *name, const struct strutil_buf *c)
{
	char path[PATH_MAX];
	lb_pathf(path, sizeof(path), "%s/%s.log", dir, name);
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	if (c->buf)
		fwrite(c->buf, 1, c->len, f);
	return fclose(f);
}

/*
 * Record the boot's splats (console.c) in res, one per key, and say each in
 * the table with the kernel's first line.  Returns how many.
 */
static size_t note_splats(struct lb_result *res, char **lines, size_t n, const char *boot,
                          FILE *tbl)
{
	struct console_splats s = {0};
	size_t found = console_find_splats(lines, n, &s);
	for (size_t i = 0; i < s.n; i++) {
		result_add_splat(res, s.v[i].key, s.v[i].message, s.v[i].lines, boot);
		fprintf(tbl, "  SPLAT %s: %s\n", s.v[i].key, s.v[i].message);
	}
	console_splats_release(&s);
	return found;
}

static void print_run_line(FILE *tbl, const struct lb_run *run)
{
	char *key = run_params_key(run);
	fprintf(tbl, "%-17s %-12s %-12s", run->workload, run->lock, key ? key : "");
	free(key);
	if (run->lockup) {
		fprintf(tbl, " LOCKUP (%s): %s\n", run->lockup->kind, run->lockup->message);
		return;
	}
	for (size_t i = 0; i < run->nmetrics && i < 3; i++)
		fprintf(tbl, " %s %.4g", run->metrics[i].name, run->metrics[i].value);
	fprintf(tbl, "\n");
}

/*
 * After a users suite's band boots: each workload's figures by AIM7's
 * bands of users, one table a workload (aim7-mix first, as AIM7 reports print it).
 */
static void print_bands(FILE *tbl, const struct lb_result *res, const char *workloads,
                        const char *variant, const struct suite_band *bands, size_t nbands,
                        const bool *booted)
{
	char err[256];
	int n = 0;
	char **names = lb_split_list(workloads, "--workloads", &n, err, sizeof(err));
	struct report_band_row *rows = strutil_xcalloc(nbands, sizeof(*rows));
	for (int pass = 0; pass < 2; pass++) {
		for (int i = 0; names && i < n; i++) {
			bool aim7 = !strcmp(names[i], "aim7-mix");
			if (aim7 != (pass == 0))
				continue;
			const char *unit;
			kernel_band_rows(res, names[i], bands, nbands, booted, rows, &unit);
			char title[192];
			lb_pathf(title, sizeof(title),
			         "%s (%s kernel): by AIM7's bands of users, a boot each", names[i],
			         variant);
			fputc('\n', tbl);
			report_run_bands(tbl, title, unit, rows, nbands);
		}
	}
	free(rows);
	lb_free_list(names);
}

enum run_opt {
	O_KERNEL = 256,
	O_SUITE,
	O_WRITERS,
	O_TYPES,
	O_TORTURE_S,
	O_WORKLOADS,
	O_LOCKS,
	O_USERS,
	O_STALL,
	O_NO_TORTURE,
	O_NO_LB,
	O_DEBUG,
	O_TIMEOUT,
	O_HUNG,
	O_ACCEL,
	O_GUEST,
	O_CONSOLE,
	O_BUILD_JSON,
	O_VARIANT,
	O_ROUND,
	O_JSON,
	O_EXTRA,
	O_CPUS,
	O_CAP_X,
	O_BUDGET,
	O_HELP
};

static const struct option run_opts[] = {
    {"kernel", required_argument, NULL, O_KERNEL},
    {"suite", required_argument, NULL, O_SUITE},
    {"writers", required_argument, NULL, O_WRITERS},
    {"types", required_argument, NULL, O_TYPES},
    {"torture-s", required_argument, NULL, O_TORTURE_S},
    {"workloads", required_argument, NULL, O_WORKLOADS},
    {"locks", required_argument, NULL, O_LOCKS},
    {"users", required_argument, NULL, O_USERS},
    {"stall-ms", required_argument, NULL, O_STALL},
    {"no-torture", no_argument, NULL, O_NO_TORTURE},
    {"no-lockbench", no_argument, NULL, O_NO_LB},
    {"debug", no_argument, NULL, O_DEBUG},
    {"timeout-s", required_argument, NULL, O_TIMEOUT},
    {"hung-task-s", required_argument, NULL, O_HUNG},
    {"accel", required_argument, NULL, O_ACCEL},
    {"guest-dir", required_argument, NULL, O_GUEST},
    {"console-dir", required_argument, NULL, O_CONSOLE},
    {"build-json", required_argument, NULL, O_BUILD_JSON},
    {"variant", required_argument, NULL, O_VARIANT},
    {"round", required_argument, NULL, O_ROUND},
    {"json", required_argument, NULL, O_JSON},
    {"cmdline", required_argument, NULL, O_EXTRA},
    {"cpus", required_argument, NULL, O_CPUS},
    {"cap-x", required_argument, NULL, O_CAP_X},
    {"budget-s", required_argument, NULL, O_BUDGET},
    {"help", no_argument, NULL, O_HELP},
    {NULL, 0, NULL, 0},
};

/*
 * The list-valued options (--writers, --types, --users) into a.  Returns
 * false when c is not one of them; else true, with *rc the exit status when
 * the value is bad (usage printed), untouched otherwise.
 */
static bool run_parse_list(int c, const char *arg, struct run_args *a, int *rc)
{
	char err[1024];
	switch (c) {
	case O_WRITERS:
		free(a->writers);
		a->nwriters = lb_parse_int_list(arg, 1, LB_THREADS_MAX, &a->writers, "--writers",
		                                err, sizeof(err));
		if (a->nwriters < 0)
			*rc = kernel_usage("%s", err);
		return true;
	case O_TYPES:
		lb_free_list(a->types);
		a->types = lb_split_list(arg, "--types", &a->ntypes, err, sizeof(err));
		if (!a->types) {
			*rc = kernel_usage("%s", err);
			return true;
		}
		for (int i = 0; i < a->ntypes; i++)
			if (!valid_torture_type(a->types[i])) {
				*rc =
				    kernel_usage("unknown locktorture type '%s' (e.g. mutex_lock, "
				                 "rwsem_lock, spin_lock)",
				                 a->types[i]);
				return true;
			}
		return true;
	case O_USERS: {
		int *u = NULL;
		int nu = lb_parse_int_list(arg, 1, WL_MAX_THREADS, &u, "--users", err, sizeof(err));
		if (nu < 0) {
			*rc = kernel_usage("%s", err);
			return true;
		}
		a->users_max = 0; /* the last --users given is the one run */
		for (int i = 0; i < nu; i++)
			if (u[i] > a->users_max)
				a->users_max = u[i];
		free(u);
		a->users = arg;
		return true;
	}
	}
	return false;
}

/*
 * The number-valued options into a.  Returns false when c is not one of
 * them; else true, with *rc set as run_parse_list does.
 */
static bool run_parse_number(int c, const char *arg, struct run_args *a, int *rc)
{
	char err[1024];
	long long v;
	const char *what;
	int *dst, lo = 1, hi = 1000000;

	switch (c) {
	case O_CPUS:
		what = "--cpus", dst = &a->cpus, hi = 64;
		break;
	case O_CAP_X:
		what = "--cap-x", dst = &a->cap_x, hi = 100;
		break;
	case O_STALL:
		what = "--stall-ms", dst = &a->stall_ms, lo = 10, hi = 3600000;
		break;
	case O_TORTURE_S:
		what = "--torture-s", dst = &a->torture_s;
		break;
	case O_TIMEOUT:
		what = "--timeout-s", dst = &a->timeout_s;
		break;
	case O_HUNG:
		what = "--hung-task-s", dst = &a->hung_s;
		a->hung_given = true;
		break;
	case O_BUDGET:
		what = "--budget-s", dst = &a->budget_s;
		break;
	case O_ROUND:
		what = "--round", dst = &a->round, lo = 0;
		break;
	default:
		return false;
	}
	if (lb_parse_int(arg, lo, hi, &v, what, err, sizeof(err)))
		*rc = kernel_usage("%s", err);
	else
		*dst = (int)v;
	return true;
}

/*
 * The suite's defaults for what the options left unset; -1 to run, else
 * the exit status.
 */
static int run_defaults(struct run_args *a, bool workloads_given)
{
	char err[1024];
	bool quick = !strcmp(a->suite, "quick");
	/* users: the kernel mutexes from userspace, at AIM7's bands' user counts */
	if (!strcmp(a->suite, "users") && !workloads_given)
		a->workloads = "pipe-mutex,epoll-ctl,seq-read,aim7-mix";
	/*
	 * the debug kernel checks correctness, not figures: lockdep, the mutex
	 * debugging and might_sleep see a patch's lock paths at 4 writers (2 per
	 * CPU: fast path, slow path and handoff) as well as at 1, 2 and 4, and
	 * two boots fewer per type keep patch -> verdict within its 15 minutes
	 */
	if (!a->nwriters) {
		static const int smoke_w[] = {2}, quick_w[] = {1, 2, 4}, debug_w[] = {4};
		const int *w = !quick ? smoke_w : a->debug ? debug_w : quick_w;
		a->nwriters = !quick ? 1 : a->debug ? 1 : 3;
		a->writers = strutil_xreallocarray(NULL, (size_t)a->nwriters, sizeof(int));
		memcpy(a->writers, w, sizeof(int) * (size_t)a->nwriters);
	}
	if (!a->ntypes) {
		a->types = lb_split_list("mutex_lock,rwsem_lock,spin_lock", "--types", &a->ntypes,
		                         err, sizeof(err));
		if (!a->types) {
			fprintf(stderr, "%s: %s\n", prog, err);
			return 1;
		}
	}
	/*
	 * locktorture's end wakes every writer (kthread_stop), which hides a lost
	 * wakeup: the test must outlast the hung-task timeout plus a check
	 */
	if (!a->torture_s)
		a->torture_s = quick ? 8 : 6;
	if (a->torture_s < a->hung_s + 3)
		fprintf(stderr,
		        "%s: warning: --torture-s %d is less than --hung-task-s + 3: a writer that "
		        "is never woken can go unseen\n",
		        prog, a->torture_s);
	return -1;
}

/*
 * The options of `lockbench kernel run` into a, with the defaults of its
 * suite; -1 to run, else the exit status (usage printed).
 */
static int run_parse(int argc, char **argv, struct run_args *a)
{
	int c, rc = -1;
	bool workloads_given = false;

	optind = 1;
	while (rc < 0 && (c = getopt_long(argc, argv, "", run_opts, NULL)) != -1) {
		if (run_parse_list(c, optarg, a, &rc) || run_parse_number(c, optarg, a, &rc))
			continue;
		switch (c) {
		case O_KERNEL:
			a->kernel = optarg;
			break;
		case O_SUITE:
			if (strcmp(optarg, "smoke") && strcmp(optarg, "quick") &&
			    strcmp(suite_canonical(optarg), "users"))
				rc = kernel_usage("unknown suite '%s' (valid: smoke, quick, users)",
				                  optarg);
			a->suite = suite_canonical(optarg);
			break;
		case O_WORKLOADS:
			a->workloads = optarg;
			workloads_given = true;
			break;
		case O_LOCKS:
			a->locks = optarg;
			break;
		case O_NO_TORTURE:
			a->no_torture = true;
			break;
		case O_NO_LB:
			a->no_lockbench = true;
			break;
		case O_DEBUG:
			a->debug = true;
			break;
		case O_ACCEL:
			if (strcmp(optarg, "auto") && strcmp(optarg, "kvm") &&
			    strcmp(optarg, "tcg"))
				rc = kernel_usage("--accel: '%s' is not auto, kvm or tcg", optarg);
			a->accel_name = optarg;
			break;
		case O_GUEST:
			a->guest_dir = optarg;
			break;
		case O_CONSOLE:
			a->console_dir = optarg;
			break;
		case O_BUILD_JSON:
			a->build_json = optarg;
			break;
		case O_VARIANT:
			kernel_opt_variant(optarg, &a->variant, &rc);
			break;
		case O_JSON:
			if (!*optarg)
				rc = kernel_usage("--json: empty path%s", "");
			a->json = optarg;
			break;
		case O_EXTRA:
			a->extra = optarg;
			break;
		default: /* --help too */
			rc = kernel_opt_other(c, O_HELP);
		}
	}
	if (rc >= 0 || kernel_opt_rest(argc, argv, &rc))
		return rc;
	if (!a->kernel)
		return kernel_usage("run needs --kernel bzImage%s", "");
	if (!lb_is_file(a->kernel)) {
		fprintf(stderr, "%s: no kernel image at %s\n", prog, a->kernel);
		return 1;
	}
	return run_defaults(a, workloads_given);
}

/* What the boots of one `lockbench kernel run` share (cmd_run). */
struct run_state {
	const struct run_args *a;
	struct lb_result res, guest;
	struct boot b;
	enum accel accel;
	FILE *tbl;
	char initrd[PATH_MAX], common[512];
	/* under TCG, the thresholds of the guest kernel's lockup detectors, per boot */
	struct strutil_buf emulated;
	int lockups, failures, nboots, nplanned;
	size_t splats;
	bool qemu_down;
	bool torture_said; /* the locktorture boots' thresholds are in emulated */
	double t_all;
};

/* One locktorture boot of type at writers writers. */
static void run_torture_boot(struct run_state *s, const char *type, int writers)
{
	const struct run_args *a = s->a;
	char label[128], name[128];
	lb_pathf(label, sizeof(label), "locktorture %s writers=%d", type, writers);
	lb_pathf(name, sizeof(name), "locktorture-%s-w%d", type, writers);
	s->b.label = label;
	s->b.end_tag = "End of test:";
	s->b.tcg_cmdline[0] = 0; /* seconds of torture: the kernel's own thresholds */
	s->b.deadline_s = a->timeout_s ? a->timeout_s : a->torture_s + 60;
	/* seconds of torture: the deadline from the start (docs/kernel.md) */
	s->b.progress = NULL;
	lb_pathf(s->b.cmdline, sizeof(s->b.cmdline),
	         "%s sysctl.kernel.hung_task_timeout_secs=%d "
	         "sysctl.kernel.hung_task_check_interval_secs=1 locklab.mode=torture "
	         "locktorture.torture_type=%s locktorture.nwriters_stress=%d "
	         "locktorture.stat_interval=1 locktorture.shutdown_secs=%d "
	         "locktorture.stutter=0 locktorture.verbose=0",
	         s->common, a->hung_s, type, writers, a->torture_s);
	if (boot_with_accel(&s->b, a->kernel, s->initrd, &s->accel, s->tbl)) {
		s->failures++;
		s->qemu_down = true; /* twice in a row: the rest would fail alike */
		return;
	}
	s->nboots++;
	if (s->accel == ACCEL_TCG && !s->torture_said) {
		struct kernel_thresholds th;
		char said[128];
		kernel_guest_thresholds(false, s->b.deadline_s, a->hung_s, false, &th);
		kernel_thresholds_say(&th, said, sizeof(said));
		strutil_buf_addf(&s->emulated, "%slocktorture boots: %s",
		                 s->emulated.len ? "; " : "", said);
		s->torture_said = true;
	}
	if (a->console_dir)
		save_console(a->console_dir, name, &s->b.console);
	size_t n;
	char **lines = console_lines(s->b.console.buf, &n);
	struct lb_run *run = result_add_run(&s->res, "locktorture", type);
	run_set_param_num(run, "writers", writers);
	console_note_guest(&s->res, lines, n, s->accel == ACCEL_KVM ? "KVM" : "TCG");
	const char *kind;
	char msg[512];
	struct strutil_buf stacks = STRUTIL_BUF_INIT;
	struct console_end end = {
	    .ended = s->b.ended, .timed_out = s->b.timed_out, .secs = s->b.secs};
	if (console_detect_lockup(lines, n, &end, &kind, msg, sizeof(msg), &stacks)) {
		run_set_lockup(run, kind, msg, stacks.buf);
		s->lockups++;
	} else {
		console_add_torture_metrics(run, lines, n, "Writes:", "writes_per_sec", "writes/s",
		                            1, a->torture_s);
		console_add_torture_metrics(run, lines, n, "Reads :", "reads_per_sec", "reads/s", 1,
		                            a->torture_s);
		if (!run->nmetrics) {
			fprintf(stderr, "%s: %s: no locktorture statistics on the console\n", prog,
			        label);
			s->failures++;
		}
	}
	fprintf(s->tbl, "boot %d/%d %s: %.1f s (%s)\n", s->nboots, s->nplanned, label, s->b.secs,
	        s->accel == ACCEL_KVM ? "kvm" : "tcg");
	print_run_line(s->tbl, run);
	s->splats += note_splats(&s->res, lines, n, label, s->tbl);
	fflush(s->tbl);
	strutil_buf_release(&stacks);
	free(lines);
}

/*
 * A lockbench boot's deadline, limits and command line in s->b, for band's
 * users or u (--users, NULL: the suite's); *th gets the guest kernel's
 * lockup thresholds under TCG.  Returns the hung-task timeout it uses.
 */
static int lb_boot_setup(struct run_state *s, const struct suite_band *band, const char *u,
                         const char *label, struct kernel_thresholds *th)
{
	const struct run_args *a = s->a;
	s->b.label = label;
	s->b.end_tag = "LOCKLAB-END";
	/* many users, in any suite: the users suite's allowances (kernel_guest.h) */
	bool many = kernel_many_users(a->suite, band ? band->users : a->users_max);
	s->b.deadline_s = a->timeout_s ? a->timeout_s : band ? band->limit_s : many ? 1500 : 300;
	/* the deadline counts from the guest's last finished point, up to a cap */
	s->b.progress = console_guest_progress;
	s->b.cap_s = s->b.deadline_s * a->cap_x;
	/*
	 * --budget-s: the cap ends the boot by the run's own end (the
	 * agent kills the run there and posts a lockup), but never before
	 * the deadline counted from the start, the rule without progress
	 */
	if (a->budget_s) {
		double left = s->t_all + a->budget_s - boot_now_s();
		if (left < s->b.cap_s)
			s->b.cap_s = left > s->b.deadline_s ? left : s->b.deadline_s;
	}
	/*
	 * users: 2000 users queue on one kernel mutex, and on an emulated
	 * CPU the last of them waits seconds in D state: the hung-task
	 * timeout and the guest watchdog allow for that (a waiter never
	 * woken still blocks its point's end, which the watchdog reports)
	 */
	int hung_s = a->hung_given || !many ? a->hung_s : USERS_HUNG_S;
	/*
	 * 2000 aim7 users, each its own process with a child in flight,
	 * hold about 0.1 MB each of page tables, kernel stack and anon
	 * memory: 512 MB ran out (the OOM killer) at 2000 users
	 */
	s->b.mem_mb = many ? USERS_MEM_MB : 0;
	int stall_ms = a->stall_ms ? a->stall_ms : many ? USERS_STALL_MS : 0;
	char watch[96] = "";
	if (stall_ms)
		lb_pathf(watch, sizeof(watch), " locklab.stall_ms=%d", stall_ms);
	/*
	 * a point can run longer than the limit without a table line (2000
	 * aim7 users under TCG: 800 s and more): the guest says every
	 * fifth of the limit how far its point got, which is progress
	 */
	size_t wl = strlen(watch);
	lb_pathf(watch + wl, sizeof(watch) - wl, " locklab.progress_s=%d",
	         kernel_progress_s(s->b.deadline_s));
	/*
	 * pid_max: tinyconfig's BASE_SMALL makes it 4096, and 2000 aim7
	 * users each with a child in flight come close to that; threads-max
	 * is an eighth of the memory's worth of kernel stacks, 4096 in 512 MB,
	 * and 2000 users with their children and the kernel's threads pass
	 * it (fork fails with EAGAIN even for root); with thousands of
	 * runnable users on two emulated CPUs, CFS leaves RCU's grace-period
	 * kthread unscheduled past the 21 s stall warning ("kthread starved"):
	 * rcutree.kthread_prio=1 runs it SCHED_FIFO, as on loaded servers (a
	 * CPU stuck with interrupts off is still reported)
	 */
	lb_pathf(s->b.cmdline, sizeof(s->b.cmdline),
	         "%s sysctl.kernel.hung_task_timeout_secs=%d "
	         "sysctl.kernel.hung_task_check_interval_secs=1 sysctl.kernel.pid_max=32768 "
	         "sysctl.kernel.threads-max=32768 rcutree.kthread_prio=1 "
	         "locklab.mode=lockbench locktorture.nwriters_stress=0 locklab.suite=%s "
	         "locklab.workloads=%s locklab.locks=%s%s%s%s",
	         s->common, hung_s, a->suite, a->workloads, a->locks, u ? " locklab.users=" : "",
	         u ? u : "", watch);
	/*
	 * under TCG the kernel's stall, soft lockup and (the users suite's
	 * default) hung-task thresholds allow for an emulated CPU
	 */
	bool scale_hung = many && !a->hung_given;
	kernel_guest_thresholds(true, s->b.deadline_s, hung_s, scale_hung, th);
	kernel_thresholds_cmdline(th, s->b.tcg_cmdline, sizeof(s->b.tcg_cmdline));
	return hung_s;
}

/*
 * What a lockbench boot gave, into s->res: the guest's document's runs, or,
 * when the kernel locked up before it came, the points its console shows
 * finished and the lockup on the point that was running.  Returns how many
 * points were recovered from the console; *running as kernel_recover_boot.
 */
static size_t lb_boot_collect(struct run_state *s, char **lines, size_t n,
                              const struct suite_band *band, const char *u, size_t before,
                              const struct lb_run **running)
{
	const struct run_args *a = s->a;
	char err[1024];
	int lb_rc;
	char *doc = console_guest_json(lines, n, &lb_rc);
	struct strutil_buf ttys1 = STRUTIL_BUF_INIT;
	if (doc && strutil_read_file(s->b.guest_out, &ttys1) == 0 && ttys1.len) {
		free(doc);
		doc = strutil_buf_detach(&ttys1); /* the document came over ttyS1 */
	} else {
		strutil_buf_release(&ttys1);
	}
	if (doc && *doc && result_load_buffer(doc, strlen(doc), &s->guest, err, sizeof(err))) {
		fprintf(stderr, "%s: guest lockbench document unreadable: %s\n", prog, err);
		s->failures++;
	} else if (doc && *doc) {
		kernel_copy_runs(&s->res, &s->guest);
		for (size_t r = before; r < s->res.nruns; r++)
			if (s->res.runs[r].lockup)
				s->lockups++;
	}
	const char *kind;
	char msg[512];
	struct strutil_buf stacks = STRUTIL_BUF_INIT;
	struct console_end end = {.ended = s->b.ended,
	                          .timed_out = s->b.timed_out,
	                          .secs = s->b.secs,
	                          .progress_rule = s->b.cap_s > s->b.deadline_s,
	                          .capped = s->b.ended_by == BOOT_DEADLINE_CAP,
	                          .since_progress_s = s->b.secs - s->b.last_progress_s};
	size_t recovered = 0;
	*running = NULL;
	if (console_detect_lockup(lines, n, &end, &kind, msg, sizeof(msg), &stacks) &&
	    (!doc || !*doc)) {
		/*
		 * the kernel hung or died under the guest workloads before their
		 * document came: the points that finished are on the console, the
		 * lockup is the running point's
		 */
		struct kernel_guest_plan g = {.suite = a->suite,
		                              .workloads = a->workloads,
		                              .locks = a->locks,
		                              .users = u,
		                              .band_users = band ? band->users : 0};
		recovered =
		    kernel_recover_boot(&s->res, lines, n, &g, kind, msg, stacks.buf, running);
		for (size_t r = before; r < s->res.nruns; r++)
			if (s->res.runs[r].lockup)
				s->lockups++; /* the running point's, and any the guest reported */
	} else if (kind) {
		/* the guest's document came, then the kernel hung or died */
		struct lb_run *run = result_add_run(&s->res, "lockbench-guest", "kernel");
		run_set_param_str(run, "workloads", a->workloads);
		if (band)
			run_set_param_num(run, "users", band->users);
		run_set_lockup(run, kind, msg, stacks.buf);
		s->lockups++;
	} else if (!doc || !*doc) {
		fprintf(stderr, "%s: the guest lockbench printed no result (rc %d)\n", prog, lb_rc);
		s->failures++;
	} else if (lb_rc != 0 && lb_rc != EXIT_LOCKUP) {
		fprintf(stderr, "%s: the guest lockbench exited %d\n", prog, lb_rc);
		s->failures++;
	}
	strutil_buf_release(&stacks);
	free(doc);
	return recovered;
}

/* A lockbench boot's lines in the table, from its runs from before on. */
static void lb_boot_print(struct run_state *s, char **lines, size_t n, const char *label,
                          const char *said, size_t before, size_t recovered,
                          const struct lb_run *running)
{
	char limit[256];
	boot_deadline_say(&s->b, limit, sizeof(limit));
	fprintf(s->tbl, "boot %d/%d %s: %.1f s (%s, %s; %s)\n", s->nboots, s->nplanned, label,
	        s->b.secs, s->accel == ACCEL_KVM ? "kvm" : "tcg", limit, said);
	for (size_t r = before; r < s->res.nruns; r++)
		print_run_line(s->tbl, &s->res.runs[r]);
	long avail_kb = 0, total_kb = 0;
	size_t nmem = console_guest_memory(lines, n, &avail_kb, &total_kb);
	if (nmem)
		fprintf(s->tbl,
		        "  guest memory: at least %ld of %ld MB available (MemAvailable, %zu "
		        "look(s) 20 s apart; qemu -m %d)\n",
		        avail_kb / 1024, total_kb / 1024, nmem,
		        s->b.mem_mb ? s->b.mem_mb : BOOT_MEM_MB);
	if (running && strcmp(running->workload, "lockbench-guest"))
		fprintf(s->tbl,
		        "  the boot locked up during %s; %zu finished point(s) recovered from "
		        "the guest's table on the console (the mean as printed, no samples)\n",
		        running->workload, recovered);
	else if (recovered)
		fprintf(s->tbl,
		        "  the boot locked up after the guest's points; %zu finished point(s) "
		        "recovered from its table on the console (the mean as printed, no "
		        "samples)\n",
		        recovered);
}

/*
 * One boot of the static lockbench on the guest workloads: band's users, or
 * --users without a band; false when qemu did not start.
 */
static bool run_lockbench_boot(struct run_state *s, const struct suite_band *band)
{
	const struct run_args *a = s->a;
	char label[64] = "lockbench", name[64] = "lockbench", users[16];
	const char *u = a->users;
	if (band) {
		lb_pathf(users, sizeof(users), "%d", band->users);
		u = users;
		lb_pathf(label, sizeof(label), "lockbench users=%d", band->users);
		lb_pathf(name, sizeof(name), "lockbench-users-%d", band->users);
	}
	struct kernel_thresholds th;
	int hung_s = lb_boot_setup(s, band, u, label, &th);
	if (boot_with_accel(&s->b, a->kernel, s->initrd, &s->accel, s->tbl)) {
		s->failures++;
		s->qemu_down = true;
		return false;
	}
	if (s->accel == ACCEL_KVM)
		kernel_guest_thresholds(false, s->b.deadline_s, hung_s, false, &th);
	char said[128];
	kernel_thresholds_say(&th, said, sizeof(said));
	if (s->accel == ACCEL_TCG)
		strutil_buf_addf(&s->emulated, "%s%s: %s", s->emulated.len ? "; " : "", label,
		                 said);
	s->nboots++;
	if (a->console_dir)
		save_console(a->console_dir, name, &s->b.console);
	size_t n;
	char **lines = console_lines(s->b.console.buf, &n);
	console_note_guest(&s->res, lines, n, s->accel == ACCEL_KVM ? "KVM" : "TCG");
	size_t before = s->res.nruns;
	const struct lb_run *running;
	size_t recovered = lb_boot_collect(s, lines, n, band, u, before, &running);
	lb_boot_print(s, lines, n, label, said, before, recovered, running);
	s->splats += note_splats(&s->res, lines, n, label, s->tbl);
	fflush(s->tbl);
	free(lines);
	return true;
}

/*
 * Before the boots: the guest's initramfs in tmpdir (PATH_MAX, "" until
 * made), the console folder, the build document's runs and the boots'
 * common command line.  0, or -1 with the reason said.
 */
static int run_prepare(struct run_state *s, struct lb_result *build, char *tmpdir)
{
	const struct run_args *a = s->a;
	char err[1024], guest_dir[PATH_MAX];

	s->accel = !strcmp(a->accel_name, "kvm")   ? ACCEL_KVM
	           : !strcmp(a->accel_name, "tcg") ? ACCEL_TCG
	                                           : ACCEL_AUTO;
	if (a->guest_dir)
		lb_pathf(guest_dir, sizeof(guest_dir), "%s", a->guest_dir);
	else
		lb_exe_dir(guest_dir, sizeof(guest_dir));
	if (a->console_dir && mkdir(a->console_dir, 0755) && errno != EEXIST) {
		fprintf(stderr, "%s: cannot create %s: %s\n", prog, a->console_dir,
		        strerror(errno));
		return -1;
	}
	if (a->build_json && result_load_file(a->build_json, build, err, sizeof(err))) {
		fprintf(stderr, "%s: %s: %s\n", prog, a->build_json, err);
		return -1;
	}
	lb_pathf(tmpdir, PATH_MAX, "%s/lockbench-kernel.XXXXXX",
	         getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(tmpdir)) {
		fprintf(stderr, "%s: cannot create a temporary folder: %s\n", prog,
		        strerror(errno));
		tmpdir[0] = 0;
		return -1;
	}
	lb_pathf(s->initrd, sizeof(s->initrd), "%s/initramfs.cpio", tmpdir);
	if (boot_make_initramfs(guest_dir, s->initrd))
		return -1;

	s->b.cpus = a->cpus;
	lb_pathf(s->b.guest_out, sizeof(s->b.guest_out), "%s/ttyS1.out", tmpdir);
	lb_pathf(s->b.qemu_log, sizeof(s->b.qemu_log), "%s/qemu.err", tmpdir);
	result_fill_machine(&s->res);
	char suite_name[64];
	lb_pathf(suite_name, sizeof(suite_name), "kernel-%s%s", a->debug ? "debug-" : "", a->suite);
	s->res.suite = strutil_xstrdup(suite_name);
	s->res.variant = strutil_xstrdup(a->variant);
	s->res.round = a->round;
	kernel_copy_runs(&s->res, build);
	s->tbl = a->json && !strcmp(a->json, "-") ? stderr : stdout;
	char tsc[64] = "";
	long khz = boot_host_tsc_khz();
	if (khz > 0)
		lb_pathf(tsc, sizeof(tsc), " tsc_early_khz=%ld", khz);
	lb_pathf(s->common, sizeof(s->common),
	         "console=ttyS0 loglevel=7 panic=-1 nokaslr tsc=reliable%s%s%s", tsc,
	         a->extra ? " " : "", a->extra ? a->extra : "");
	return 0;
}

/*
 * After the boots: the notes under the table, the document, the summary
 * line; the exit status.
 */
static int run_finish(struct run_state *s)
{
	const struct run_args *a = s->a;
	char err[1024];

	/*
	 * a debug kernel (lockdep, DEBUG_MUTEXES, might_sleep) runs for
	 * correctness only: its figures were checked above, not recorded
	 */
	for (size_t r = 0; a->debug && r < s->res.nruns; r++)
		run_clear_metrics(&s->res.runs[r]);
	if (s->accel == ACCEL_TCG) {
		fprintf(s->tbl, "%s\n", report_emulated_note);
		if (s->emulated.len) {
			s->res.machine.guest_thresholds = strutil_xstrdup(s->emulated.buf);
			fprintf(s->tbl, "%s%s\n", report_thresholds_lead, s->emulated.buf);
		}
	}
	if (a->debug)
		fputs("debug kernel: figures above are for correctness only and are not recorded\n",
		      s->tbl);
	if (s->qemu_down && s->nplanned - s->nboots - s->failures > 0)
		fprintf(s->tbl, "qemu failed twice: %d planned boots not run\n",
		        s->nplanned - s->nboots - s->failures);
	if (a->json && result_write_file(&s->res, a->json, err, sizeof(err))) {
		fprintf(stderr, "%s: %s\n", prog, err);
		return 1;
	}
	fprintf(s->tbl, "%d boots, %zu runs, %d locked up, %zu splats, %d failed, %.1f s\n",
	        s->nboots, s->res.nruns, s->lockups, s->splats, s->failures,
	        boot_now_s() - s->t_all);
	return s->failures ? 1 : s->lockups ? EXIT_LOCKUP : 0;
}

int kernel_run_main(int argc, char **argv)
{
	struct run_args a = {.suite = "smoke",
	                     .variant = "base",
	                     .accel_name = "auto",
	                     .workloads = "futex-wake,futex-hash,vfs-creat-unlink,hot",
	                     .locks = "pthread,kmutex",
	                     .hung_s = 3,
	                     .cap_x = BOOT_CAP_X,
	                     .cpus = 2};
	struct run_state st = {.a = &a, .accel = ACCEL_AUTO, .emulated = STRUTIL_BUF_INIT};
	struct run_state *s = &st;
	struct lb_result build;
	char tmpdir[PATH_MAX] = "";
	int rc;
	bool *booted = NULL; /* per band: its boot ran */

	s->t_all = boot_now_s();
	result_init(&s->res);
	result_init(&s->guest);
	result_init(&build);
	rc = run_parse(argc, argv, &a);
	if (rc >= 0)
		goto out;
	rc = 1;
	if (run_prepare(s, &build, tmpdir))
		goto out;
	/* users without --users: a boot per band, each at its one user count */
	const struct suite_band *bands = NULL;
	size_t nbands = a.users ? 0 : suite_bands(a.suite, &bands);
	int nlb = a.no_lockbench ? 0 : nbands ? (int)nbands : 1;
	s->nplanned = (a.no_torture ? 0 : a.ntypes * a.nwriters) + nlb;
	booted = strutil_xcalloc(nbands ? nbands : 1, sizeof(bool));

	for (int i = 0; !a.no_torture && !s->qemu_down && i < a.ntypes; i++)
		for (int k = 0; k < a.nwriters && !s->qemu_down; k++)
			run_torture_boot(s, a.types[i], a.writers[k]);
	for (int bi = 0; bi < nlb && !s->qemu_down; bi++)
		booted[bi] = run_lockbench_boot(s, nbands ? &bands[bi] : NULL);
	if (nbands)
		print_bands(s->tbl, &s->res, a.workloads, a.variant, bands, nbands, booted);
	rc = run_finish(s);
out:
	if (tmpdir[0]) {
		unlink(s->initrd);
		unlink(s->b.guest_out);
		unlink(s->b.qemu_log);
		rmdir(tmpdir);
	}
	free(booted);
	strutil_buf_release(&s->emulated);
	strutil_buf_release(&s->b.console);
	lb_free_list(a.types);
	free(a.writers);
	result_release(&build);
	result_release(&s->guest);
	result_release(&s->res);
	return rc;
}
