/*
 * run_args.c - the options of lockbench run and validate, read into a
 * struct run_args (run_args.h), and the text `lockbench run --help` prints.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

enum {
	OPT_SUITE = 256,
	OPT_LOCKS,
	OPT_WORKLOADS,
	OPT_THREADS,
	OPT_DURATION,
	OPT_REPEAT,
	OPT_CS,
	OPT_OUTSIDE,
	OPT_NLOCKS,
	OPT_HOLD,
	OPT_WAKE_BATCH,
	OPT_FUTEXES,
	OPT_DIR,
	OPT_STALL,
	OPT_DEADLINE,
	OPT_PROGRESS,
	OPT_NO_STACKS,
	OPT_EMULATED,
	OPT_VARIANT,
	OPT_ROUND,
	OPT_JSON,
	OPT_QUIET,
	OPT_DISTURB_LIMIT,
	OPT_DISTURB_RETRIES,
	OPT_CPUS,
	OPT_START_AT,
	OPT_ABBA_SIDE,
	OPT_LOCKSTEP,
	OPT_LOCKSTEP_SIDE,
	OPT_SKIP_WORKLOADS,
	OPT_INSTRUCTIONS,
	OPT_NO_INSTRUCTIONS,
	OPT_CONTROLS,
	OPT_HELP,
};

static const struct option run_options[] = {
    {"suite", required_argument, NULL, OPT_SUITE},
    {"locks", required_argument, NULL, OPT_LOCKS},
    {"workloads", required_argument, NULL, OPT_WORKLOADS},
    {"threads", required_argument, NULL, OPT_THREADS},
    {"duration-ms", required_argument, NULL, OPT_DURATION},
    {"repeat", required_argument, NULL, OPT_REPEAT},
    {"cs-loops", required_argument, NULL, OPT_CS},
    {"outside-loops", required_argument, NULL, OPT_OUTSIDE},
    {"nlocks", required_argument, NULL, OPT_NLOCKS},
    {"hold-us", required_argument, NULL, OPT_HOLD},
    {"wake-batch", required_argument, NULL, OPT_WAKE_BATCH},
    {"futexes", required_argument, NULL, OPT_FUTEXES},
    {"dir", required_argument, NULL, OPT_DIR},
    {"stall-ms", required_argument, NULL, OPT_STALL},
    {"deadline-ms", required_argument, NULL, OPT_DEADLINE},
    {"progress-s", required_argument, NULL, OPT_PROGRESS},
    {"no-stacks", no_argument, NULL, OPT_NO_STACKS},
    {"emulated", no_argument, NULL, OPT_EMULATED},
    {"variant", required_argument, NULL, OPT_VARIANT},
    {"controls", required_argument, NULL, OPT_CONTROLS},
    {"round", required_argument, NULL, OPT_ROUND},
    {"json", required_argument, NULL, OPT_JSON},
    {"quiet", no_argument, NULL, OPT_QUIET},
    {"disturb-limit", required_argument, NULL, OPT_DISTURB_LIMIT},
    {"disturb-retries", required_argument, NULL, OPT_DISTURB_RETRIES},
    {"cpus", required_argument, NULL, OPT_CPUS},
    {"start-at", required_argument, NULL, OPT_START_AT},
    {"abba-side", required_argument, NULL, OPT_ABBA_SIDE},
    {"lockstep", required_argument, NULL, OPT_LOCKSTEP},
    {"lockstep-side", required_argument, NULL, OPT_LOCKSTEP_SIDE},
    {"skip-workloads", required_argument, NULL, OPT_SKIP_WORKLOADS},
    {"instructions", no_argument, NULL, OPT_INSTRUCTIONS},
    {"no-instructions", no_argument, NULL, OPT_NO_INSTRUCTIONS},
    {"help", no_argument, NULL, OPT_HELP},
    {NULL, 0, NULL, 0},
};

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
 * One option of what to measure (suite, locks, workloads and their
 * parameters' lists): 0 when parsed, EXIT_USAGE when bad (said), 1 when c
 * is not one of them.
 */
static int parse_selection_option(int c, struct run_args *a)
{
	char err[256];

	switch (c) {
	case OPT_SUITE:
		if (!suite_exists(optarg))
			return usage_error("unknown suite '%s' (valid: smoke, quick, full)",
			                   optarg);
		a->suite = suite_canonical(optarg);
		break;
	case OPT_LOCKS:
		if (parse_names(optarg, (const void ***)&a->ov.locks, find_lock, "lock",
		                valid_locks()))
			return EXIT_USAGE;
		break;
	case OPT_WORKLOADS:
		if (parse_names(optarg, (const void ***)&a->ov.workloads, find_workload, "workload",
		                valid_workloads()))
			return EXIT_USAGE;
		break;
	case OPT_THREADS:
		a->ov.nthreads = lb_parse_int_list(optarg, 1, LB_THREADS_MAX, &a->ov.threads,
		                                   "--threads", err, sizeof(err));
		if (a->ov.nthreads < 0)
			return usage_error("%s", err);
		break;
	case OPT_CS:
	case OPT_OUTSIDE: {
		/* 0 is a valid amount of work */
		int *vals = NULL;
		int n = lb_parse_int_list(optarg, 0, 100000000, &vals,
		                          c == OPT_CS ? "--cs-loops" : "--outside-loops", err,
		                          sizeof(err));
		if (n < 0)
			return usage_error("%s", err);
		if (c == OPT_CS) {
			a->ov.cs_loops = vals;
			a->ov.ncs = n;
		} else {
			a->ov.outside_loops = vals;
			a->ov.noutside = n;
		}
		break;
	}
	case OPT_SKIP_WORKLOADS:
		if (parse_names(optarg, (const void ***)&a->ov.skip_workloads, find_workload,
		                "workload", valid_workloads()))
			return EXIT_USAGE;
		break;
	case OPT_CONTROLS:
		free(a->controls);
		a->controls = NULL;
		if (parse_names(optarg, &a->controls, find_lock, "control", valid_locks()))
			return EXIT_USAGE;
		break;
	default:
		return 1;
	}
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

/* Parse run/validate options; returns 0, or an exit status. */
int parse_run_args(int argc, char **argv, struct run_args *a)
{
	char err[256];
	long long v;
	int c, rc;

	optind = 1;
	while ((c = getopt_long(argc, argv, "", run_options, NULL)) != -1) {
		switch (c) {
#define INT_OPT(code, name, lo, hi, field)                                                         \
	case code:                                                                                 \
		if (lb_parse_int(optarg, lo, hi, &v, name, err, sizeof(err)))                      \
			return usage_error("%s", err);                                             \
		field = (int)v;                                                                    \
		break;
			INT_OPT(OPT_DURATION, "--duration-ms", 1, 3600000, a->ov.duration_ms)
			INT_OPT(OPT_REPEAT, "--repeat", 1, 10000, a->ov.repeat)
			INT_OPT(OPT_NLOCKS, "--nlocks", 1, 1000000, a->ov.nlocks)
			INT_OPT(OPT_HOLD, "--hold-us", 1, 10000000, a->ov.hold_us)
			INT_OPT(OPT_WAKE_BATCH, "--wake-batch", 1, 1000000, a->ov.wake_batch)
			INT_OPT(OPT_FUTEXES, "--futexes", 1, 1000000, a->ov.futexes)
			INT_OPT(OPT_STALL, "--stall-ms", 10, 3600000, a->ro.stall_ms)
			INT_OPT(OPT_DEADLINE, "--deadline-ms", 10, 86400000, a->ro.deadline_ms)
			INT_OPT(OPT_PROGRESS, "--progress-s", 0, RUNNER_PROGRESS_S_MAX,
			        a->ro.progress_s)
			INT_OPT(OPT_ROUND, "--round", 0, 1000000, a->round)
			INT_OPT(OPT_DISTURB_RETRIES, "--disturb-retries", 0, 100,
			        a->disturb_retries)
		case OPT_DISTURB_LIMIT: {
			char *end;
			errno = 0;
			double x = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(x >= 0 && x <= 100))
				return usage_error(
				    "--disturb-limit: '%s' is not a share from 0 to 100", optarg);
			a->disturb_limit_pct = x;
			break;
		}
		case OPT_CPUS:
			a->cpus = optarg;
			if (lb_cpus_parse(optarg, NULL, err, sizeof(err)))
				return usage_error("%s", err);
			break;
		case OPT_ABBA_SIDE:
			if (lb_parse_int(optarg, 0, 1, &v, "--abba-side", err, sizeof(err)))
				return usage_error("%s", err);
			a->abba = (int)v + 1;
			break;
		case OPT_LOCKSTEP:
			if (!*optarg)
				return usage_error("--lockstep: empty path%s", "");
			a->lockstep = optarg;
			break;
		case OPT_LOCKSTEP_SIDE:
			if (lb_parse_int(optarg, 0, 1, &v, "--lockstep-side", err, sizeof(err)))
				return usage_error("%s", err);
			a->lockstep_side = (int)v + 1;
			break;
		case OPT_START_AT:
			if (lb_parse_int(optarg, 1, LLONG_MAX, &v, "--start-at", err, sizeof(err)))
				return usage_error("%s", err);
			if (v > lb_realtime_ns() + 3600 * 1000000000ll)
				return usage_error("--start-at %s: more than an hour ahead",
				                   optarg);
			a->start_at_ns = v;
			break;
#undef INT_OPT
		case OPT_DIR:
			if (access(optarg, W_OK | X_OK))
				return usage_error(
				    "--dir: cannot use '%s' (not a writable directory)", optarg);
			a->ov.dir = optarg;
			break;
		case OPT_EMULATED:
			a->ro.emulated = true;
			break;
		case OPT_NO_STACKS:
			a->ro.capture_stacks = false;
			break;
		case OPT_VARIANT:
			if (!valid_variant(optarg))
				return usage_error(
				    "--variant: '%s' is not base, patched or patch-K", optarg);
			a->variant = optarg;
			break;
		case OPT_JSON:
			if (!*optarg)
				return usage_error("--json: empty path%s", "");
			a->json = optarg;
			break;
		case OPT_QUIET:
			a->quiet = true;
			break;
		case OPT_INSTRUCTIONS:
		case OPT_NO_INSTRUCTIONS:
			a->instructions = c == OPT_INSTRUCTIONS;
			break;
		case OPT_HELP:
			lb_print_command_help(stdout, lb_command_find(argv[0])
			                                  ? lb_command_find(argv[0])
			                                  : lb_command_find("run"));
			exit(0);
		default:
			rc = parse_selection_option(c, a);
			if (rc == 0)
				break;
			return rc == 1 ? usage_error("bad option%s", "") : rc;
		}
	}
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	return check_run_args(a);
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
