/*
 * run_args.c - the options of lockbench run and validate, read into a
 * struct run_args (run_args.h), and the text `lockbench run --help` prints.
 * The table is lib/options.h's: it checks the whole numbers and flags; the
 * lists, names and paths are checked here after it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "options.h"
#include "util.h"

#include "cli.h"
#include "run_args.h"

static const char *prog = "lockbench";

const char run_options_text[] =
    "  --suite S            smoke, quick or full [smoke]\n"
    "  --locks a,b          only these locks (and no kernel workloads unless named)\n"
    "  --workloads w,...    only these workloads\n"
    "  --skip-workloads w,... leave these out (a duet ran them)\n"
    "  --threads 1,2,4      thread counts (users for aim7-mix) [per suite]\n"
    "  --duration-ms N      length of one repetition [per suite]\n"
    "  --repeat N           repetitions, each one sample [per suite]\n"
    "  --cs-loops 0,100     work inside the critical section [10]\n"
    "  --outside-loops 0,1  work between acquisitions [10]\n"
    "  --nlocks N           many-locks: locks to pick from [100]\n"
    "  --hold-us N          long-hold: hold time [100]\n"
    "  --wake-batch N       futex-wake: waiters woken per call [1]\n"
    "  --futexes N          futex-hash: futex words per thread [1024]\n"
    "  --dir DIR            vfs-creat-unlink, aim7-mix: directory [/dev/shm]\n"
    "  --stall-ms N         watchdog stall time, x (1 + log10 threads) [2000]\n"
    "  --emulated           the CPU is emulated (the kernel guest under TCG): the\n"
    "                       stall time and the per-thread deadline are x 5\n"
    "  --deadline-ms N      hard limit per point [30000 + 3 x duration x repeat\n"
    "                       + 100 x threads x repeat]\n"
    "  --progress-s N       every N s of a point, a line on stderr if its workers\n"
    "                       made progress meanwhile ('lockbench: WORKLOAD LOCK\n"
    "                       4 threads: OPS operations so far (T s)'), with or\n"
    "                       without --quiet (off unless asked for); 0 off [0]\n"
    "  --no-stacks          on a lockup, skip gdb (the /proc view is kept)\n"
    "  --variant V          base, patched or patch-K, recorded in the JSON [base]\n"
    "  --controls a,b       locks the change did not touch: compare reports their\n"
    "                       rows as the machine's A/A, not as the change's effect\n"
    "  --round N            round number recorded in the JSON [0]\n"
    "  --json FILE|-        write the lockbench-result/1 document\n"
    "  --quiet              no table (it goes to stderr with --json -)\n"
    "  --disturb-limit PCT  take a single-thread sample again when its thread\n"
    "                       lost more than PCT% of its time (steal, run queue);\n"
    "                       0 records the disturbance only [0]\n"
    "  --disturb-retries N  times one sample may be taken again [2]\n"
    "  --cpus 0,1           pin the run to these CPUs (duet runs)\n"
    "  --start-at NS        wait until CLOCK_REALTIME NS (ns since the epoch)\n"
    "                       before the first point (duet runs start together)\n"
    "  --abba-side 0|1      ABBA runs: this run is side 0 or 1 of two started\n"
    "                       with one --start-at; each single-thread sample\n"
    "                       takes its own slot (its duration + 20 ms), the\n"
    "                       sides alternating A B B A per sample\n"
    "  --lockstep FILE      lockstep runs: single-thread samples take turns of\n"
    "                       0.5 ms with the other side's run (on the same\n"
    "                       CPU: --cpus), hot's of 1 ms (on every CPU, --cpus\n"
    "                       or not), passing the turn through FILE\n"
    "  --lockstep-side 0|1  this run's side (side 0 takes the first turn)\n"
    "  --instructions       uncontended points also count instructions_per_pair\n"
    "                       under valgrind (exact; beside ns_per_pair, not instead)\n"
    "  --no-instructions    do not [quick, full: count; smoke: do not]\n";

static char *valid_locks(void)
{
	static char buf[1024];
	const struct lock_ops *const *locks = lock_all();
	buf[0] = 0;
	for (int i = 0; locks[i]; i++) {
		if (i)
			strncat(buf, ", ", sizeof(buf) - strlen(buf) - 1);
		strncat(buf, locks[i]->name, sizeof(buf) - strlen(buf) - 1);
	}
	return buf;
}

static char *valid_workloads(void)
{
	static char buf[1024];
	const struct workload *const *w = workload_all();
	buf[0] = 0;
	for (int i = 0; w[i]; i++) {
		if (w[i]->hidden)
			continue;
		if (buf[0])
			strncat(buf, ", ", sizeof(buf) - strlen(buf) - 1);
		strncat(buf, w[i]->name, sizeof(buf) - strlen(buf) - 1);
	}
	return buf;
}

/* Split "a,b" into a NULL-terminated array of looked-up pointers. */
static int parse_names(const char *arg, const void ***out, const void *(*find)(const char *),
                       const char *what, const char *valid)
{
	char err[256], opt[32];
	int n;
	char **tok;
	const void **v;

	snprintf(opt, sizeof(opt), "--%ss", what);
	tok = lb_split_list(arg, opt, &n, err, sizeof(err));
	if (!tok) {
		fprintf(stderr, "%s: %s\n", prog, err);
		return -1;
	}
	v = calloc((size_t)n + 1, sizeof(*v));
	if (!v) {
		lb_free_list(tok);
		fprintf(stderr, "%s: out of memory\n", prog);
		return -1;
	}
	for (int i = 0; i < n; i++) {
		v[i] = find(tok[i]);
		if (!v[i]) {
			fprintf(stderr, "%s: unknown %s '%s' (valid: %s)\n", prog, what, tok[i],
			        valid);
			lb_free_list(tok);
			free(v);
			return -1;
		}
	}
	lb_free_list(tok);
	*out = v;
	return 0;
}

static const void *find_lock(const char *n)
{
	return lock_find(n);
}

static const void *find_workload(const char *n)
{
	const struct workload *w = workload_find(n);
	return w && !w->hidden ? w : NULL;
}

static bool valid_variant(const char *v)
{
	if (!strcmp(v, "base") || !strcmp(v, "patched"))
		return true;
	if (strncmp(v, "patch-", 6) || !v[6])
		return false;
	for (const char *p = v + 6; *p; p++)
		if (*p < '0' || *p > '9')
			return false;
	return atoi(v + 6) >= 1;
}

/*
 * What run's options give before run_args_convert checks them: the names
 * and lists as given (borrowed from argv), and the values a holds in
 * another form.
 */
struct run_text {
	const char *suite, *locks, *workloads, *skip_workloads, *controls, *threads, *cs_loops,
	    *outside_loops;
	long start_at;                /* 0: not given */
	int abba_side, lockstep_side; /* -1: not given */
	bool instructions;            /* --instructions, or --no-instructions, the last given */
};

/* A list of whole numbers (--threads, --cs-loops, --outside-loops): 0 or EXIT_USAGE (said). */
static int int_list(const char *text, int min, int max, const char *name, int **vals, int *n)
{
	char err[256];

	*n = lb_parse_int_list(text, min, max, vals, name, err, sizeof(err));
	return *n < 0 ? usage_error("%s", err) : 0;
}

/*
 * The options of what to measure (suite, locks, workloads and their
 * parameters' lists) into a: 0, or EXIT_USAGE when one is bad (said).
 */
static int run_selection(const struct run_text *t, struct run_args *a)
{
	if (t->suite && !suite_exists(t->suite))
		return usage_error("unknown suite '%s' (valid: smoke, quick, full)", t->suite);
	if (t->suite)
		a->suite = suite_canonical(t->suite);
	if (t->locks &&
	    parse_names(t->locks, (const void ***)&a->ov.locks, find_lock, "lock", valid_locks()))
		return EXIT_USAGE;
	if (t->workloads && parse_names(t->workloads, (const void ***)&a->ov.workloads,
	                                find_workload, "workload", valid_workloads()))
		return EXIT_USAGE;
	if (t->threads &&
	    int_list(t->threads, 1, LB_THREADS_MAX, "--threads", &a->ov.threads, &a->ov.nthreads))
		return EXIT_USAGE;
	/* 0 is a valid amount of work */
	if (t->cs_loops &&
	    int_list(t->cs_loops, 0, 100000000, "--cs-loops", &a->ov.cs_loops, &a->ov.ncs))
		return EXIT_USAGE;
	if (t->outside_loops && int_list(t->outside_loops, 0, 100000000, "--outside-loops",
	                                 &a->ov.outside_loops, &a->ov.noutside))
		return EXIT_USAGE;
	if (t->skip_workloads &&
	    parse_names(t->skip_workloads, (const void ***)&a->ov.skip_workloads, find_workload,
	                "workload", valid_workloads()))
		return EXIT_USAGE;
	if (t->controls &&
	    parse_names(t->controls, &a->controls, find_lock, "control", valid_locks()))
		return EXIT_USAGE;
	return 0;
}

/*
 * run_text into a, and the paths and names the table put in a checked: 0,
 * or EXIT_USAGE when one is bad (said).
 */
static int run_args_convert(const struct run_text *t, struct run_args *a)
{
	char err[256], at[32];

	if (run_selection(t, a))
		return EXIT_USAGE;
	if (a->ov.dir && access(a->ov.dir, W_OK | X_OK))
		return usage_error("--dir: cannot use '%s' (not a writable directory)", a->ov.dir);
	if (!valid_variant(a->variant))
		return usage_error("--variant: '%s' is not base, patched or patch-K", a->variant);
	if (a->json && !*a->json)
		return usage_error("--json: empty path%s", "");
	if (a->cpus && lb_cpus_parse(a->cpus, NULL, err, sizeof(err)))
		return usage_error("%s", err);
	if (a->lockstep && !*a->lockstep)
		return usage_error("--lockstep: empty path%s", "");
	if (t->start_at > lb_realtime_ns() + 3600 * 1000000000ll) {
		snprintf(at, sizeof(at), "%ld", t->start_at);
		return usage_error("--start-at %s: more than an hour ahead", at);
	}
	if (t->start_at)
		a->start_at_ns = t->start_at;
	if (t->abba_side >= 0)
		a->abba = t->abba_side + 1;
	if (t->lockstep_side >= 0)
		a->lockstep_side = t->lockstep_side + 1;
	return 0;
}

/* The options that go together or exclude each other: 0, or EXIT_USAGE (said). */
static int check_run_args(const struct run_args *a)
{
	if (!a->lockstep != !a->lockstep_side)
		return usage_error("--lockstep and --lockstep-side go together%s", "");
	if (a->lockstep && a->abba)
		return usage_error("--lockstep and --abba-side are two ways to pair: one at a "
		                   "time%s",
		                   "");
	if (a->abba && !a->start_at_ns)
		return usage_error("--abba-side needs --start-at: the instant both sides count "
		                   "their slots from%s",
		                   "");
	for (int i = 0; a->controls && a->controls[i] && a->ov.locks; i++) {
		bool listed = false;

		for (int k = 0; a->ov.locks[k]; k++)
			listed |= a->ov.locks[k] == a->controls[i];
		if (!listed)
			return usage_error("--controls: %s is not one of --locks",
			                   ((const struct lock_ops *)a->controls[i])->name);
	}
	return 0;
}

enum {
	R_SUITE,
	R_LOCKS,
	R_WORKLOADS,
	R_SKIP_WORKLOADS,
	R_THREADS,
	R_DURATION,
	R_REPEAT,
	R_CS,
	R_OUTSIDE,
	R_NLOCKS,
	R_HOLD,
	R_WAKE_BATCH,
	R_FUTEXES,
	R_DIR,
	R_STALL,
	R_EMULATED,
	R_DEADLINE,
	R_PROGRESS,
	R_NO_STACKS,
	R_VARIANT,
	R_CONTROLS,
	R_ROUND,
	R_JSON,
	R_QUIET,
	R_DISTURB_LIMIT,
	R_DISTURB_RETRIES,
	R_CPUS,
	R_START_AT,
	R_ABBA_SIDE,
	R_LOCKSTEP,
	R_LOCKSTEP_SIDE,
	R_INSTRUCTIONS,
	R_NO_INSTRUCTIONS,
	NROWS
};

int parse_run_args(int argc, char **argv, struct run_args *a)
{
	struct run_text t = {.abba_side = -1, .lockstep_side = -1};
	struct runner_opts *ro = &a->ro;
	struct suite_overrides *ov = &a->ov;
	/* into a what it holds as given; the rest into t, for run_args_convert */
	struct opt opts[NROWS] = {
	    [R_SUITE] = {"suite", NULL, OPT_STR, &t.suite, NULL, 0, 0, NULL, NULL},
	    [R_LOCKS] = {"locks", NULL, OPT_STR, &t.locks, NULL, 0, 0, NULL, NULL},
	    [R_WORKLOADS] = {"workloads", NULL, OPT_STR, &t.workloads, NULL, 0, 0, NULL, NULL},
	    [R_SKIP_WORKLOADS] = {"skip-workloads", NULL, OPT_STR, &t.skip_workloads, NULL, 0, 0,
	                          NULL, NULL},
	    [R_THREADS] = {"threads", NULL, OPT_STR, &t.threads, NULL, 0, 0, NULL, NULL},
	    [R_DURATION] = {"duration-ms", NULL, OPT_INT, &ov->duration_ms, NULL, 1, 3600000, NULL,
	                    NULL},
	    [R_REPEAT] = {"repeat", NULL, OPT_INT, &ov->repeat, NULL, 1, 10000, NULL, NULL},
	    [R_CS] = {"cs-loops", NULL, OPT_STR, &t.cs_loops, NULL, 0, 0, NULL, NULL},
	    [R_OUTSIDE] = {"outside-loops", NULL, OPT_STR, &t.outside_loops, NULL, 0, 0, NULL,
	                   NULL},
	    [R_NLOCKS] = {"nlocks", NULL, OPT_INT, &ov->nlocks, NULL, 1, 1000000, NULL, NULL},
	    [R_HOLD] = {"hold-us", NULL, OPT_INT, &ov->hold_us, NULL, 1, 10000000, NULL, NULL},
	    [R_WAKE_BATCH] = {"wake-batch", NULL, OPT_INT, &ov->wake_batch, NULL, 1, 1000000, NULL,
	                      NULL},
	    [R_FUTEXES] = {"futexes", NULL, OPT_INT, &ov->futexes, NULL, 1, 1000000, NULL, NULL},
	    [R_DIR] = {"dir", NULL, OPT_STR, &ov->dir, NULL, 0, 0, NULL, NULL},
	    [R_STALL] = {"stall-ms", NULL, OPT_INT, &ro->stall_ms, NULL, 10, 3600000, NULL, NULL},
	    [R_EMULATED] = {"emulated", NULL, OPT_FLAG, &ro->emulated, NULL, 0, 0, NULL, NULL},
	    [R_DEADLINE] = {"deadline-ms", NULL, OPT_INT, &ro->deadline_ms, NULL, 10, 86400000,
	                    NULL, NULL},
	    [R_PROGRESS] = {"progress-s", NULL, OPT_INT, &ro->progress_s, NULL, 0,
	                    RUNNER_PROGRESS_S_MAX, NULL, NULL},
	    [R_NO_STACKS] = {"no-stacks", NULL, OPT_FLAG_OFF, &ro->capture_stacks, NULL, 0, 0, NULL,
	                     NULL},
	    [R_VARIANT] = {"variant", NULL, OPT_STR, &a->variant, NULL, 0, 0, NULL, NULL},
	    [R_CONTROLS] = {"controls", NULL, OPT_STR, &t.controls, NULL, 0, 0, NULL, NULL},
	    [R_ROUND] = {"round", NULL, OPT_INT, &a->round, NULL, 0, 1000000, NULL, NULL},
	    [R_JSON] = {"json", NULL, OPT_STR, &a->json, NULL, 0, 0, NULL, NULL},
	    [R_QUIET] = {"quiet", NULL, OPT_FLAG, &a->quiet, NULL, 0, 0, NULL, NULL},
	    [R_DISTURB_LIMIT] = {"disturb-limit", NULL, OPT_DOUBLE, &a->disturb_limit_pct, NULL, 0,
	                         100, NULL, NULL},
	    [R_DISTURB_RETRIES] = {"disturb-retries", NULL, OPT_INT, &a->disturb_retries, NULL, 0,
	                           100, NULL, NULL},
	    [R_CPUS] = {"cpus", NULL, OPT_STR, &a->cpus, NULL, 0, 0, NULL, NULL},
	    [R_START_AT] = {"start-at", NULL, OPT_LONG, &t.start_at, NULL, 1, 0, NULL, NULL},
	    [R_ABBA_SIDE] = {"abba-side", NULL, OPT_INT, &t.abba_side, NULL, 0, 1, NULL, NULL},
	    [R_LOCKSTEP] = {"lockstep", NULL, OPT_STR, &a->lockstep, NULL, 0, 0, NULL, NULL},
	    [R_LOCKSTEP_SIDE] = {"lockstep-side", NULL, OPT_INT, &t.lockstep_side, NULL, 0, 1, NULL,
	                         NULL},
	    [R_INSTRUCTIONS] = {"instructions", NULL, OPT_FLAG, &t.instructions, NULL, 0, 0, NULL,
	                        NULL},
	    [R_NO_INSTRUCTIONS] = {"no-instructions", NULL, OPT_FLAG_OFF, &t.instructions, NULL, 0,
	                           0, NULL, NULL},
	};
	static const struct opt_cmd help[] = {{"help", NULL}};
	bool given[NROWS];
	char name[64];
	const struct opt_table table = {
	    .prog = name,
	    .opts = opts,
	    .n = NROWS,
	    .given = given,
	    .cmds = help,
	    .ncmds = 1,
	};
	const struct command *cmd = lb_command_find(argv[0]);
	int rc;

	snprintf(name, sizeof(name), "lockbench %s", argv[0]);
	rc = lb_command_opts(&table, cmd ? cmd : lb_command_find("run"), argc, argv);
	if (rc >= 0)
		return rc;
	if (given[R_INSTRUCTIONS] || given[R_NO_INSTRUCTIONS])
		a->instructions = t.instructions;
	if (run_args_convert(&t, a))
		return EXIT_USAGE;
	return check_run_args(a) ? EXIT_USAGE : -1;
}

void free_run_args(struct run_args *a)
{
	free(a->controls);
	free(a->ov.locks);
	free(a->ov.workloads);
	free(a->ov.skip_workloads);
	free(a->ov.threads);
	free(a->ov.cs_loops);
	free(a->ov.outside_loops);
}
