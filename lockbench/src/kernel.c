/*
 * kernel.c - the `lockbench kernel` command line (kernel.h): `build` is
 * kbuild.c; `run` is here.
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
#include "kbuild.h"
#include "kernel.h"
#include "lock.h"
#include "report.h"
#include "result.h"
#include "strutil.h"
#include "suite.h"
#include "util.h"
#include "workload.h"

#define EXIT_USAGE  2
#define EXIT_LOCKUP 3
/* the users suite's lockbench boots: see cmd_run (and suite.c's bands) */
#define USERS_HUNG_S   120
#define USERS_STALL_MS 5000
#define USERS_MEM_MB   1536

static const char *prog = "lockbench kernel";

void kernel_guest_thresholds(bool emulated, double deadline_s, int hung_s, bool scale_hung,
                             struct kernel_thresholds *t)
{
	*t = (struct kernel_thresholds){.rcu_stall_s = KERNEL_RCU_STALL_S,
	                                .watchdog_thresh = KERNEL_WATCHDOG_THRESH,
	                                .hung_task_s = hung_s};
	if (!emulated)
		return;
	int third = deadline_s > 0 ? (int)(deadline_s / 3) : 0;
	int rcu = third < KERNEL_RCU_STALL_MAX_S ? third : KERNEL_RCU_STALL_MAX_S;
	int thresh = third / 2 < KERNEL_WATCHDOG_MAX ? third / 2 : KERNEL_WATCHDOG_MAX;
	if (rcu > t->rcu_stall_s) {
		t->rcu_stall_s = rcu;
		t->scaled = true;
	}
	if (thresh > t->watchdog_thresh) {
		t->watchdog_thresh = thresh;
		t->scaled = true;
	}
	if (scale_hung && third > t->hung_task_s) {
		t->hung_task_s = third;
		t->scaled = true;
	}
}

bool kernel_many_users(const char *suite, int users_max)
{
	return !strcmp(suite_canonical(suite), "users") || users_max > KERNEL_MANY_USERS;
}

int kernel_progress_s(double deadline_s)
{
	double p = deadline_s / 5;
	return p >= KERNEL_PROGRESS_MAX_S ? KERNEL_PROGRESS_MAX_S : p >= 1 ? (int)p : 1;
}

void kernel_thresholds_cmdline(const struct kernel_thresholds *t, char *out, size_t len)
{
	if (!t->scaled) {
		if (len)
			out[0] = 0;
		return;
	}
	/* after the boot's own sysctl.kernel.hung_task_timeout_secs: the later one is set last */
	lb_pathf(out, len,
	         "rcupdate.rcu_cpu_stall_timeout=%d watchdog_thresh=%d "
	         "sysctl.kernel.hung_task_timeout_secs=%d",
	         t->rcu_stall_s, t->watchdog_thresh, t->hung_task_s);
}

void kernel_thresholds_say(const struct kernel_thresholds *t, char *out, size_t len)
{
	lb_pathf(out, len, "RCU stall %d s, soft lockup %d s, hung task %d s", t->rcu_stall_s,
	         2 * t->watchdog_thresh, t->hung_task_s);
}

/* Copy every run of src (a loaded document) into dst. */
static void copy_runs(struct lb_result *dst, const struct lb_result *src)
{
	for (size_t i = 0; i < src->nruns; i++) {
		const struct lb_run *s = &src->runs[i];
		struct lb_run *d = result_add_run(dst, s->workload, s->lock);
		for (size_t k = 0; k < s->nparams; k++) {
			if (s->params[k].is_num)
				run_set_param_num(d, s->params[k].name, s->params[k].num);
			else
				run_set_param_str(d, s->params[k].name, s->params[k].str);
		}
		for (size_t k = 0; k < s->nmetrics; k++) {
			const struct lb_metric *sm = &s->metrics[k];
			struct lb_metric *m =
			    run_add_metric(d, sm->name, sm->unit, sm->higher_better, sm->value);
			for (size_t j = 0; j < sm->nsamples; j++)
				metric_add_sample(m, sm->samples[j]);
			if (sm->nper_thread)
				metric_set_per_thread(m, sm->per_thread, sm->nper_thread);
		}
		if (s->lockup)
			run_set_lockup(d, s->lockup->kind, s->lockup->message, s->lockup->stacks);
	}
}

/*
 * The plan point the guest lockbench ran after the one whose table key
 * ("workload lock key") is last, NULL: its first point.  Added to res as a
 * run with that point's workload, lock and params; NULL when the plan cannot
 * be made or last was its final point.
 */
static struct lb_run *guest_next_point(struct lb_result *res, const struct kernel_guest_plan *g,
                                       const char *last)
{
	char err[256];
	int nw = 0, nl = 0, nu = 0;
	char **wn = lb_split_list(g->workloads, "--workloads", &nw, err, sizeof(err));
	char **ln = lb_split_list(g->locks, "--locks", &nl, err, sizeof(err));
	const struct workload **ws = strutil_xcalloc((size_t)nw + 1, sizeof(*ws));
	const struct lock_ops **ls = strutil_xcalloc((size_t)nl + 1, sizeof(*ls));
	int *users = NULL;
	struct plan plan = {0};
	struct lb_run *found = NULL;
	bool next = !last, ok = wn && ln;

	for (int i = 0; ok && i < nw; i++)
		ok = (ws[i] = workload_find(wn[i])) != NULL;
	for (int i = 0; ok && i < nl; i++)
		ok = (ls[i] = lock_find(ln[i])) != NULL;
	if (ok && g->users)
		ok = (nu = lb_parse_int_list(g->users, 1, WL_MAX_THREADS, &users, "--users", err,
		                             sizeof(err))) > 0;
	struct suite_overrides ov = {
	    .workloads = ws, .locks = ls, .threads = users, .nthreads = nu};
	if (!ok || suite_plan(g->suite, &ov, &plan, err, sizeof(err)))
		goto out;
	for (size_t i = 0; i < plan.n && !found; i++) {
		const struct plan_point *pt = &plan.points[i];
		const char *lock = pt->ops ? pt->ops->name : "kernel";
		struct lb_result tmp;
		result_init(&tmp);
		struct lb_run *run = result_add_run(&tmp, pt->w->name, lock);
		workload_record_params(pt->w, &pt->p, run);
		if (next) {
			found = result_add_run(res, pt->w->name, lock);
			workload_record_params(pt->w, &pt->p, found);
		} else {
			char *key = run_params_key(run);
			char line[768];
			lb_pathf(line, sizeof(line), "%s %s %s", pt->w->name, lock, key ? key : "");
			next = !strcmp(line, last);
			free(key);
		}
		result_release(&tmp);
	}
out:
	plan_release(&plan);
	free(users);
	free(ws);
	free(ls);
	lb_free_list(wn);
	lb_free_list(ln);
	return found;
}

size_t kernel_recover_boot(struct lb_result *res, char **lines, size_t n,
                           const struct kernel_guest_plan *g, const char *kind, const char *msg,
                           const char *stacks, const struct lb_run **running)
{
	char *last = NULL;
	bool started = false;
	size_t got = console_guest_table_runs(lines, n, res, &last);
	for (size_t i = 0; i < n && !started; i++)
		started = !strncmp(lines[i], "lockbench: suite ", 17);
	struct lb_run *run = started ? guest_next_point(res, g, last) : NULL;
	if (!run) {
		run = result_add_run(res, "lockbench-guest", "kernel");
		run_set_param_str(run, "workloads", g->workloads);
		if (g->band_users > 0)
			run_set_param_num(run, "users", g->band_users);
	}
	run_set_lockup(run, kind, msg, stacks);
	*running = run;
	free(last);
	return got;
}

bool kernel_valid_variant(const char *v)
{
	if (!strcmp(v, "base") || !strcmp(v, "patched"))
		return true;
	if (strncmp(v, "patch-", 6) || !v[6])
		return false;
	for (const char *p = v + 6; *p; p++)
		if (!isdigit((unsigned char)*p))
			return false;
	return atoi(v + 6) >= 1;
}

int kernel_usage(const char *fmt, const char *arg)
{
	fprintf(stderr, "%s: ", prog);
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\ntry 'lockbench kernel --help'\n");
	return EXIT_USAGE;
}

bool kernel_opt_variant(const char *arg, const char **variant, int *rc)
{
	if (!kernel_valid_variant(arg)) {
		*rc = kernel_usage("--variant: '%s' is not base, patched or patch-K", arg);
		return true;
	}
	*variant = arg;
	return false;
}

int kernel_opt_other(int c, int help)
{
	if (c != help)
		return kernel_usage("bad option%s", "");
	kernel_print_help(stdout);
	return 0;
}

bool kernel_opt_rest(int argc, char **argv, int *rc)
{
	if (optind < argc) {
		*rc = kernel_usage("unexpected argument '%s'", argv[optind]);
		return true;
	}
	return false;
}

void kernel_print_help(FILE *f)
{
	fprintf(
	    f,
	    "usage: lockbench kernel build --tree DIR [OPTIONS]\n"
	    "       lockbench kernel run --kernel bzImage [OPTIONS]\n"
	    "\n"
	    "build options (defaults in brackets):\n"
	    "  --tree DIR           kernel source tree (scripts/kernel-source.sh gives one)\n"
	    "  --config FILE        config fragment merged on tinyconfig "
	    "[lockbench/kernel/locklab.config]\n"
	    "  --out DIR            output folder, make O=DIR [TREE/locklab-out]\n"
	    "  --reuse DIR          start an empty --out from this earlier build's objects\n"
	    "  --jobs N             make -jN [online CPUs]\n"
	    "  --debug              add lockbench/kernel/locklab-debug.config (lockdep, "
	    "DEBUG_MUTEXES,\n"
	    "                       DEBUG_ATOMIC_SLEEP) into OUT TREE/locklab-debug-out\n"
	    "  --variant V, --round N, --json FILE|-   the kernbench build_s result\n"
	    "\n"
	    "run options:\n"
	    "  --kernel FILE        the bzImage to boot\n"
	    "  --suite S            smoke (2 writers, 6 s per torture boot), quick "
	    "(1,2,4 writers, 8 s)\n"
	    "                       or users (smoke's torture; pipe-mutex, epoll-ctl, seq-read "
	    "and\n"
	    "                       aim7-mix, a boot per AIM7 band of users: 100, 1000, 2000;\n"
	    "                       then a table by bands; old name: seeds) [smoke]\n"
	    "  --writers 1,2,4      locktorture writer threads [per suite; --debug quick: 4]\n"
	    "  --types a,b          locktorture types [mutex_lock,rwsem_lock,spin_lock]\n"
	    "  --torture-s N        seconds locktorture runs per boot [per suite]\n"
	    "  --workloads w,...    guest lockbench workloads "
	    "[futex-wake,futex-hash,vfs-creat-unlink,hot]\n"
	    "  --locks a,b          guest lockbench locks [pthread,kmutex]\n"
	    "  --users 10,2000      guest thread or user counts, instead of the suite's (users:\n"
	    "                       all in one boot, no table by bands)\n"
	    "  --stall-ms N         the guest lockbench's watchdog stall time [2000; users or\n"
	    "                       --users past 256: 5000 (and 1536 MB); x 5 under TCG]\n"
	    "  --no-torture, --no-lockbench   skip that part\n"
	    "  --debug              the kernel is a `build --debug` one: record lockups and "
	    "splats, "
	    "not figures\n"
	    "  --timeout-s N        deadline per boot [torture-s + 60; lockbench: 300,\n"
	    "                       users: 600, 900, 1500 for its bands; with --users 1500;\n"
	    "                       --users past 256 in any suite: 1500];\n"
	    "                       a lockbench boot's counts from the guest's last finished\n"
	    "                       point or progress line (every fifth of it, at most\n"
	    "                       60 s: a slow guest that progresses goes on), up to\n"
	    "                       --cap-x times it from the start\n"
	    "  --cap-x N            a lockbench boot ends N x its deadline after its start,\n"
	    "                       however it progresses [4; 1: the deadline from the start]\n"
	    "  --budget-s N         the whole run's time (an agent's limit): a lockbench\n"
	    "                       boot's cap ends it by then, or at its deadline from the\n"
	    "                       start if that is later [none]\n"
	    "  --hung-task-s N      hung task timeout inside the guest, checked every second\n"
	    "                       [3; the users suite's lockbench boot or --users past 256:\n"
	    "                       120, under TCG a third of its deadline, as its RCU stall\n"
	    "                       and soft lockup thresholds (any lockbench boot's under TCG)]\n"
	    "  --cpus N             guest CPUs (qemu -smp) [2]\n"
	    "  --accel A            auto, kvm or tcg [auto: KVM when a guest boots, else TCG]\n"
	    "  --guest-dir DIR      holds locklab-init and lockbench-static [this program's "
	    "folder]\n"
	    "  --console-dir DIR    keep each boot's serial console there\n"
	    "  --build-json FILE    add the runs of a `kernel build --json` document\n"
	    "  --variant V          base, patched or patch-K [base]\n"
	    "  --round N            round number [0]\n"
	    "  --json FILE|-        write the lockbench-result/1 document\n"
	    "\n"
	    "exit status: 0 ok, 1 failure, 2 bad usage, 3 a boot locked up\n");
}

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

size_t kernel_band_rows(const struct lb_result *res, const char *workload,
                        const struct suite_band *bands, size_t nbands, const bool *booted,
                        struct report_band_row *rows, const char **unit)
{
	size_t found = 0;
	*unit = NULL;
	for (size_t i = 0; i < nbands; i++) {
		struct report_band_row *row = &rows[i];
		*row = (struct report_band_row){
		    .umin = bands[i].umin, .umax = bands[i].umax, .users = bands[i].users};
		const struct lb_run *boot_lockup = NULL;
		for (size_t r = 0; r < res->nruns; r++) {
			const struct lb_run *run = &res->runs[r];
			const struct lb_param *pu = run_param(run, "users");
			if (!pu || !pu->is_num || pu->num != bands[i].users)
				continue;
			if (!strcmp(run->workload, "lockbench-guest") && run->lockup)
				boot_lockup = run;
			if (strcmp(run->workload, workload))
				continue;
			found++;
			if (run->lockup) {
				row->note = "lockup";
				row->kind = run->lockup->kind;
				continue;
			}
			if (run->nmetrics) {
				const struct lb_metric *m = &run->metrics[0];
				row->mean = m->value;
				row->n = m->nsamples ? m->nsamples : 1;
				*unit = m->unit;
			}
		}
		if (row->n || row->note)
			continue;
		if (boot_lockup) {
			row->note = "the band's boot locked up";
			row->kind = boot_lockup->lockup->kind;
		} else if (!booted[i])
			row->note = "not run: qemu failed before this band's boot";
		else
			row->note = "no figure (debug kernel, or the guest printed none)";
	}
	return found;
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

/*
 * The options of `lockbench kernel run` into a, with the defaults of its
 * suite; -1 to run, else the exit status (usage printed).
 */
static int run_parse(int argc, char **argv, struct run_args *a)
{
	enum {
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
	static const struct option opts[] = {
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
	char err[1024];
	long long v;
	int c, rc = 1;
	bool workloads_given = false;

	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case O_KERNEL:
			a->kernel = optarg;
			break;
		case O_SUITE:
			if (strcmp(optarg, "smoke") && strcmp(optarg, "quick") &&
			    strcmp(suite_canonical(optarg), "users")) {
				rc = kernel_usage("unknown suite '%s' (valid: smoke, quick, users)",
				                  optarg);
				goto out;
			}
			a->suite = suite_canonical(optarg);
			break;
		case O_WRITERS:
			free(a->writers);
			a->nwriters = lb_parse_int_list(optarg, 1, LB_THREADS_MAX, &a->writers,
			                                "--writers", err, sizeof(err));
			if (a->nwriters < 0) {
				rc = kernel_usage("%s", err);
				goto out;
			}
			break;
		case O_TYPES:
			lb_free_list(a->types);
			a->types = lb_split_list(optarg, "--types", &a->ntypes, err, sizeof(err));
			if (!a->types) {
				rc = kernel_usage("%s", err);
				goto out;
			}
			for (int i = 0; i < a->ntypes; i++)
				if (!valid_torture_type(a->types[i])) {
					rc = kernel_usage(
					    "unknown locktorture type '%s' (e.g. mutex_lock, "
					    "rwsem_lock, spin_lock)",
					    a->types[i]);
					goto out;
				}
			break;
		case O_WORKLOADS:
			a->workloads = optarg;
			workloads_given = true;
			break;
		case O_LOCKS:
			a->locks = optarg;
			break;
		case O_USERS: {
			int *u = NULL;
			int nu = lb_parse_int_list(optarg, 1, WL_MAX_THREADS, &u, "--users", err,
			                           sizeof(err));
			if (nu < 0) {
				rc = kernel_usage("%s", err);
				goto out;
			}
			a->users_max = 0; /* the last --users given is the one run */
			for (int i = 0; i < nu; i++)
				if (u[i] > a->users_max)
					a->users_max = u[i];
			free(u);
			a->users = optarg;
			break;
		}
		case O_NO_TORTURE:
			a->no_torture = true;
			break;
		case O_NO_LB:
			a->no_lockbench = true;
			break;
		case O_DEBUG:
			a->debug = true;
			break;
		case O_CPUS:
		case O_CAP_X: {
			bool cpus = c == O_CPUS;
			if (lb_parse_int(optarg, 1, cpus ? 64 : 100, &v,
			                 cpus ? "--cpus" : "--cap-x", err, sizeof(err))) {
				rc = kernel_usage("%s", err);
				goto out;
			}
			*(cpus ? &a->cpus : &a->cap_x) = (int)v;
			break;
		}
		case O_STALL:
			if (lb_parse_int(optarg, 10, 3600000, &v, "--stall-ms", err, sizeof(err))) {
				rc = kernel_usage("%s", err);
				goto out;
			}
			a->stall_ms = (int)v;
			break;
		case O_TORTURE_S:
		case O_TIMEOUT:
		case O_HUNG:
		case O_BUDGET:
		case O_ROUND: {
			const char *what = c == O_TORTURE_S ? "--torture-s"
			                   : c == O_TIMEOUT ? "--timeout-s"
			                   : c == O_HUNG    ? "--hung-task-s"
			                   : c == O_BUDGET  ? "--budget-s"
			                                    : "--round";
			if (lb_parse_int(optarg, c == O_ROUND ? 0 : 1, 1000000, &v, what, err,
			                 sizeof(err))) {
				rc = kernel_usage("%s", err);
				goto out;
			}
			a->hung_given |= c == O_HUNG;
			*(c == O_TORTURE_S ? &a->torture_s
			  : c == O_TIMEOUT ? &a->timeout_s
			  : c == O_HUNG    ? &a->hung_s
			  : c == O_BUDGET  ? &a->budget_s
			                   : &a->round) = (int)v;
			break;
		}
		case O_ACCEL:
			if (strcmp(optarg, "auto") && strcmp(optarg, "kvm") &&
			    strcmp(optarg, "tcg")) {
				rc = kernel_usage("--accel: '%s' is not auto, kvm or tcg", optarg);
				goto out;
			}
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
			if (kernel_opt_variant(optarg, &a->variant, &rc))
				goto out;
			break;
		case O_JSON:
			if (!*optarg) {
				rc = kernel_usage("--json: empty path%s", "");
				goto out;
			}
			a->json = optarg;
			break;
		case O_EXTRA:
			a->extra = optarg;
			break;
		default: /* --help too */
			rc = kernel_opt_other(c, O_HELP);
			goto out;
		}
	}
	if (kernel_opt_rest(argc, argv, &rc))
		goto out;
	if (!a->kernel) {
		rc = kernel_usage("run needs --kernel bzImage%s", "");
		goto out;
	}
	if (!lb_is_file(a->kernel)) {
		fprintf(stderr, "%s: no kernel image at %s\n", prog, a->kernel);
		goto out;
	}
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
			goto out;
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
out:
	return rc;
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
 * One boot of the static lockbench on the guest workloads: band's users, or
 * --users without a band; false when qemu did not start.
 */
static bool run_lockbench_boot(struct run_state *s, const struct suite_band *band)
{
	const struct run_args *a = s->a;
	char err[1024];
	char label[64] = "lockbench", name[64] = "lockbench", users[16];
	const char *u = a->users;
	if (band) {
		lb_pathf(users, sizeof(users), "%d", band->users);
		u = users;
		lb_pathf(label, sizeof(label), "lockbench users=%d", band->users);
		lb_pathf(name, sizeof(name), "lockbench-users-%d", band->users);
	}
	s->b.label = label;
	s->b.end_tag = "LOCKLAB-END";
	/* many users, in any suite: the users suite's allowances (kernel.h) */
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
	struct kernel_thresholds th;
	kernel_guest_thresholds(true, s->b.deadline_s, hung_s, scale_hung, &th);
	kernel_thresholds_cmdline(&th, s->b.tcg_cmdline, sizeof(s->b.tcg_cmdline));
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
	int lb_rc;
	char **lines = console_lines(s->b.console.buf, &n);
	console_note_guest(&s->res, lines, n, s->accel == ACCEL_KVM ? "KVM" : "TCG");
	char *doc = console_guest_json(lines, n, &lb_rc);
	struct strutil_buf ttys1 = STRUTIL_BUF_INIT;
	if (doc && strutil_read_file(s->b.guest_out, &ttys1) == 0 && ttys1.len) {
		free(doc);
		doc = strutil_buf_detach(&ttys1); /* the document came over ttyS1 */
	} else {
		strutil_buf_release(&ttys1);
	}
	size_t before = s->res.nruns;
	if (doc && *doc && result_load_buffer(doc, strlen(doc), &s->guest, err, sizeof(err))) {
		fprintf(stderr, "%s: guest lockbench document unreadable: %s\n", prog, err);
		s->failures++;
	} else if (doc && *doc) {
		copy_runs(&s->res, &s->guest);
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
	const struct lb_run *running = NULL;
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
		    kernel_recover_boot(&s->res, lines, n, &g, kind, msg, stacks.buf, &running);
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
	s->splats += note_splats(&s->res, lines, n, label, s->tbl);
	fflush(s->tbl);
	free(lines);
	return true;
}

static int cmd_run(int argc, char **argv)
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
	char err[1024], guest_dir[PATH_MAX], tmpdir[PATH_MAX] = "";
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
	s->accel = !strcmp(a.accel_name, "kvm")   ? ACCEL_KVM
	           : !strcmp(a.accel_name, "tcg") ? ACCEL_TCG
	                                          : ACCEL_AUTO;
	if (a.guest_dir)
		lb_pathf(guest_dir, sizeof(guest_dir), "%s", a.guest_dir);
	else
		lb_exe_dir(guest_dir, sizeof(guest_dir));
	if (a.console_dir && mkdir(a.console_dir, 0755) && errno != EEXIST) {
		fprintf(stderr, "%s: cannot create %s: %s\n", prog, a.console_dir, strerror(errno));
		goto out;
	}
	if (a.build_json && result_load_file(a.build_json, &build, err, sizeof(err))) {
		fprintf(stderr, "%s: %s: %s\n", prog, a.build_json, err);
		goto out;
	}
	lb_pathf(tmpdir, sizeof(tmpdir), "%s/lockbench-kernel.XXXXXX",
	         getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(tmpdir)) {
		fprintf(stderr, "%s: cannot create a temporary folder: %s\n", prog,
		        strerror(errno));
		tmpdir[0] = 0;
		goto out;
	}
	lb_pathf(s->initrd, sizeof(s->initrd), "%s/initramfs.cpio", tmpdir);
	if (boot_make_initramfs(guest_dir, s->initrd))
		goto out;

	s->b.cpus = a.cpus;
	lb_pathf(s->b.guest_out, sizeof(s->b.guest_out), "%s/ttyS1.out", tmpdir);
	lb_pathf(s->b.qemu_log, sizeof(s->b.qemu_log), "%s/qemu.err", tmpdir);
	result_fill_machine(&s->res);
	char suite_name[64];
	lb_pathf(suite_name, sizeof(suite_name), "kernel-%s%s", a.debug ? "debug-" : "", a.suite);
	s->res.suite = strutil_xstrdup(suite_name);
	s->res.variant = strutil_xstrdup(a.variant);
	s->res.round = a.round;
	copy_runs(&s->res, &build);
	s->tbl = a.json && !strcmp(a.json, "-") ? stderr : stdout;
	char tsc[64] = "";
	long khz = boot_host_tsc_khz();
	if (khz > 0)
		lb_pathf(tsc, sizeof(tsc), " tsc_early_khz=%ld", khz);
	lb_pathf(s->common, sizeof(s->common),
	         "console=ttyS0 loglevel=7 panic=-1 nokaslr tsc=reliable%s%s%s", tsc,
	         a.extra ? " " : "", a.extra ? a.extra : "");
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
	/*
	 * a debug kernel (lockdep, DEBUG_MUTEXES, might_sleep) runs for
	 * correctness only: its figures were checked above, not recorded
	 */
	for (size_t r = 0; a.debug && r < s->res.nruns; r++)
		run_clear_metrics(&s->res.runs[r]);
	if (s->accel == ACCEL_TCG) {
		fprintf(s->tbl, "%s\n", report_emulated_note);
		if (s->emulated.len) {
			s->res.machine.guest_thresholds = strutil_xstrdup(s->emulated.buf);
			fprintf(s->tbl, "%s%s\n", report_thresholds_lead, s->emulated.buf);
		}
	}
	if (a.debug)
		fputs("debug kernel: figures above are for correctness only and are not recorded\n",
		      s->tbl);
	if (s->qemu_down && s->nplanned - s->nboots - s->failures > 0)
		fprintf(s->tbl, "qemu failed twice: %d planned boots not run\n",
		        s->nplanned - s->nboots - s->failures);
	if (a.json && result_write_file(&s->res, a.json, err, sizeof(err))) {
		fprintf(stderr, "%s: %s\n", prog, err);
		goto out;
	}
	fprintf(s->tbl, "%d boots, %zu runs, %d locked up, %zu splats, %d failed, %.1f s\n",
	        s->nboots, s->res.nruns, s->lockups, s->splats, s->failures,
	        boot_now_s() - s->t_all);
	rc = s->failures ? 1 : s->lockups ? EXIT_LOCKUP : 0;
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

int kernel_main(int argc, char **argv)
{
	if (argc < 2) {
		kernel_print_help(stderr);
		return EXIT_USAGE;
	}
	const char *sub = argv[1];
	if (!strcmp(sub, "--help") || !strcmp(sub, "-h") || !strcmp(sub, "help")) {
		kernel_print_help(stdout);
		return 0;
	}
	if (!strcmp(sub, "build"))
		return kbuild_main(argc - 1, argv + 1);
	if (!strcmp(sub, "run"))
		return cmd_run(argc - 1, argv + 1);
	fprintf(stderr, "%s: unknown subcommand '%s' (valid: build, run)\n", prog, sub);
	return EXIT_USAGE;
}
