/*
 * lockbench - native lock and futex benchmarks with a lockup watchdog,
 * result JSON and mailing-list comparison tables.
 *
 *   lockbench list
 *   lockbench run [--suite S] [--locks a,b] [--workloads w,...] [--threads 1,2,4]
 *                 [--duration-ms N] [--repeat N] [--json FILE|-] ...
 *   lockbench validate [--locks a,b] [--duration-ms N]
 *   lockbench compare BASE.json PATCHED.json [--format aim7|perf|lkp|text|json]
 *                     [--plan PLAN.json [--min-rounds N]]
 *   lockbench plan BASE.json PATCHED.json [--round-seconds S] ...
 *
 * Exit status: 0 success, 1 a run or file failed, 2 bad usage, 3 the run
 * finished but at least one point locked up (validate: a lock failed).
 */
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "changepoint.h"
#include "compare.h"
#include "disturb.h"
#include "elfimage.h"
#include "instr.h"
#include "kernel.h"
#include "kernel_cli.h"
#include "lock.h"
#include "lockstep.h"
#include "report.h"
#include "result.h"
#include "roundplan.h"
#include "runner.h"
#include "stats.h"
#include "strutil.h"
#include "suite.h"
#include "util.h"
#include "version.h"
#include "workload.h"

#define EXIT_USAGE  2
#define EXIT_LOCKUP 3

static const char *prog = "lockbench";
static const char *command_name; /* the command running, for its usage errors */

static int usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "%s: ", prog);
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\ntry '%s%s%s --help'\n", prog, command_name ? " " : "",
	        command_name ? command_name : "");
	return EXIT_USAGE;
}

/*
 * What each command takes: the overview (lockbench --help) lists them, and
 * `lockbench COMMAND --help` or `lockbench help COMMAND` prints one;
 * `lockbench help --all` prints every one (the man page).  Kernel's help is
 * its own (kernel.h).
 */
static const char run_options_text[] =
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

static const char compare_options_text[] =
    "  --format F           aim7, perf, lkp, text or json [text]\n"
    "  --alpha A            false discovery rate [0.05]\n"
    "  --min-effect E       smallest change that counts, relative [0.02]\n"
    "  --confirm-from N     rounds before N find a change, rounds N and later\n"
    "                       must confirm it on their own [off]\n"
    "  --margin M           equivalence margin of every row, relative [per row:\n"
    "                       3% single-thread cost, 10% contended throughput]\n"
    "  --looks N            looks at the rounds planned (alpha / N each for\n"
    "                       no-change) [1]\n"
    "  --test T             what the paired tests take from each round: log\n"
    "                       (of the ratio patched / base) or raw (the\n"
    "                       difference); a row with a mean <= 0 takes raw [log]\n"
    "  --ignore-image       judge by statistics even when base and patched ran\n"
    "                       one image (by default such a comparison is an A/A:\n"
    "                       every row a control, verdict no-change)\n"
    "  --plan FILE          judge as the server judges a job with this plan\n"
    "                       (lockbench plan's output, or a job's \"plan\"): its\n"
    "                       looks, its first rounds, and rows it cannot resolve\n"
    "  --min-rounds N       the server's --min-rounds, the plan's step [5]\n"
    "  --max-rounds N       the job's limit (the plan's max_rounds with --plan):\n"
    "                       an inconclusive row whose spread cannot fit inside\n"
    "                       its margin by then is not resolvable [off]\n";

static const char plan_options_text[] =
    "  --alpha A            [0.05]     --min-rounds N [5]   --max-rounds N [20]\n"
    "  --budget S           seconds a job's rounds may take [3600]\n"
    "  --round-seconds S    seconds one round of both sides takes [0: unknown,\n"
    "                       no budget]\n"
    "  --mde-latency X      target MDE of single-thread rows [0.03]\n"
    "  --mde-contended X    target MDE of contended rows [0.10]\n";

struct command {
	const char *name;
	const char *args;    /* after the name (and before [OPTIONS]) */
	const char *summary; /* lines of the overview */
	const char *options; /* NULL: none */
	const char *options_title;
};

static const struct command commands[] = {
    {"list", "", "locks, workloads and suites", NULL, NULL},
    {"run", "", "run a suite, print a table, write result JSON", run_options_text,
     "options (defaults in brackets)"},
    {"validate", "", "correctness torture of every lock", run_options_text,
     "options (run's; defaults in brackets)"},
    {"compare", "BASE.json PATCHED.json",
     "mailing-list tables with significance\n(a,b,c.json: several rounds of one side)",
     compare_options_text, "options (defaults in brackets)"},
    {"image", "FILE...",
     "the image of each executable: two builds\nwith one image run the same code", NULL, NULL},
    {"plan", "BASE.json PATCHED.json",
     "the rounds a job plans from these A/A rounds\n(the same lockbench both sides), as the "
     "server\nplans from an agent's noise profile",
     plan_options_text, "options (the server's option of the same name in brackets)"},
    {"changepoint", "[FILE]",
     "steps in a series of numbers (one per commit),\nE-Divisive as the server's tracker runs "
     "it",
     NULL, NULL},
    {"kernel", "build|run", "kernel build; boot with locktorture, lockbench", NULL, NULL},
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static const char exit_status_text[] =
    "exit status: 0 ok, 1 failure, 2 bad usage, 3 lockup found (validate: lock failed)\n";

static const struct command *command_find(const char *name)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

/* text's lines, each after indent spaces but the first */
static void put_lines(FILE *f, const char *text, int indent)
{
	for (const char *nl; (nl = strchr(text, '\n')); text = nl + 1)
		fprintf(f, "%.*s\n%*s", (int)(nl - text), text, indent, "");
	fprintf(f, "%s\n", text);
}

static void print_help(FILE *f)
{
	fprintf(f, "usage: lockbench COMMAND [OPTIONS]\n\ncommands:\n");
	for (size_t i = 0; i < NCOMMANDS; i++) {
		char head[64];

		snprintf(head, sizeof(head), "%s%s%s", commands[i].name,
		         *commands[i].args ? " " : "", commands[i].args);
		if (strlen(head) > 29)
			fprintf(f, "  %s\n  %-29s ", head, "");
		else
			fprintf(f, "  %-29s ", head);
		put_lines(f, commands[i].summary, 32);
	}
	fprintf(f,
	        "\n"
	        "  lockbench COMMAND --help, or lockbench help COMMAND: that command's options\n"
	        "  lockbench help --all: every command's options\n"
	        "  lockbench --version: the version\n\n%s",
	        exit_status_text);
}

/* One command's usage and options. */
static void print_command_help(FILE *f, const struct command *c)
{
	if (!strcmp(c->name, "kernel")) {
		kernel_print_help(f);
		return;
	}
	fprintf(f, "usage: lockbench %s%s%s%s\n\n", c->name, *c->args ? " " : "", c->args,
	        c->options ? " [OPTIONS]" : "");
	put_lines(f, c->summary, 0);
	if (c->options)
		fprintf(f, "\n%s:\n%s", c->options_title, c->options);
	fprintf(f, "\n%s", exit_status_text);
}

/* lockbench help [COMMAND|--all] */
static int cmd_help(int argc, char **argv)
{
	const struct command *c;

	if (argc < 2) {
		print_help(stdout);
		return 0;
	}
	if (argc == 2 && !strcmp(argv[1], "--all")) {
		print_help(stdout);
		for (size_t i = 0; i < NCOMMANDS; i++) {
			if (i && commands[i].options &&
			    commands[i].options == commands[i - 1].options)
				continue; /* validate: run's */
			if (!commands[i].options && strcmp(commands[i].name, "kernel"))
				continue;
			printf("\n%s %s:\n",
			       !strcmp(commands[i].name, "run") ? "run and validate"
			                                        : commands[i].name,
			       commands[i].options ? commands[i].options_title : "options");
			if (commands[i].options)
				fputs(commands[i].options, stdout);
			else
				kernel_print_help(stdout);
		}
		return 0;
	}
	if (argc > 2 || !(c = command_find(argv[1]))) {
		fprintf(stderr, "%s: help: no command '%s'\n", prog, argv[1]);
		fprintf(stderr, "try '%s --help'\n", prog);
		return EXIT_USAGE;
	}
	print_command_help(stdout, c);
	return 0;
}

static int cmd_list(void)
{
	const struct lock_ops *const *locks = lock_all();
	const struct workload *const *wls = workload_all();
	const char *const *suites = suite_names();

	printf("locks:\n");
	for (int i = 0; locks[i]; i++)
		printf("  %-18s %s%s\n", locks[i]->name, locks[i]->description,
		       locks[i]->test_only ? " [test build only]" : "");
	printf("\nworkloads:\n");
	for (int i = 0; wls[i]; i++)
		if (!wls[i]->hidden)
			printf("  %-18s %s%s\n", wls[i]->name, wls[i]->description,
			       wls[i]->uses_lock ? "" : " [lock: kernel]");
	printf("\nsuites:\n");
	for (int i = 0; suites[i]; i++)
		printf("  %-18s %s\n", suites[i], suite_description(suites[i]));
	return 0;
}

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

/* The file must be creatable: check before minutes of benchmarking. */
static int check_writable(const char *path)
{
	if (!strcmp(path, "-"))
		return 0;
	char *copy = strdup(path);
	if (!copy)
		return -1;
	const char *dir = dirname(copy);
	int ok = access(dir, W_OK | X_OK);
	if (ok)
		fprintf(stderr, "%s: cannot write %s: %s\n", prog, path, strerror(errno));
	free(copy);
	return ok ? -1 : 0;
}

static void fmt_num(double v, char *out, size_t len)
{
	if (fabs(v) >= 1000) {
		char tmp[64];
		snprintf(tmp, sizeof(tmp), "%.0f", fabs(v));
		size_t l = strlen(tmp), o = 0;
		if (v < 0 && o + 1 < len)
			out[o++] = '-';
		for (size_t i = 0; i < l && o + 2 < len; i++) {
			out[o++] = tmp[i];
			if ((l - i - 1) % 3 == 0 && i + 1 < l)
				out[o++] = ',';
		}
		out[o] = 0;
	} else if (fabs(v) >= 10) {
		snprintf(out, len, "%.1f", v);
	} else {
		snprintf(out, len, "%.3f", v);
	}
}

static void print_run(FILE *out, const struct lb_run *run)
{
	char *key = run_params_key(run), val[64];
	fprintf(out, "%-17s %-17s %-44s", run->workload, run->lock, key ? key : "");
	free(key);
	if (run->lockup) {
		fprintf(out, " LOCKUP (%s): %s\n", run->lockup->kind, run->lockup->message);
		fflush(out);
		return;
	}
	for (size_t i = 0; i < run->nmetrics; i++) {
		const struct lb_metric *m = &run->metrics[i];
		fmt_num(m->value, val, sizeof(val));
		if (i == 0) {
			double cv = m->nsamples > 1 ? stats_cov(m->samples, m->nsamples) : 0;
			fprintf(out, " %s %s %s ±%.1f%% n=%zu", m->name, val, m->unit, cv * 100,
			        m->nsamples);
		} else {
			fprintf(out, "  %s %s", m->name, val);
		}
	}
	fprintf(out, "\n");
	fflush(out);
}

struct run_args {
	const char *suite;
	const char *json;
	const char *variant;
	int round;
	bool quiet;
	int instructions;      /* -1: as the suite says (suite_counts_instructions), 0 no, 1 yes */
	const void **controls; /* lock_ops: run as untouched controls */
	struct suite_overrides ov;
	struct runner_opts ro;
	double disturb_limit_pct;
	int disturb_retries;
	const char *cpus;      /* --cpus: pin the run to these CPUs */
	long long start_at_ns; /* --start-at: CLOCK_REALTIME ns to start at; 0 now */
	int abba;              /* --abba-side: 1 + the side, 0 not an ABBA run */
	const char *lockstep;  /* --lockstep: the turn file shared with the other side */
	int lockstep_side;     /* --lockstep-side: 1 + the side */
};

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
	OPT_FORMAT,
	OPT_ALPHA,
	OPT_MIN_EFFECT,
	OPT_CONFIRM_FROM,
	OPT_MARGIN,
	OPT_LOOKS,
	OPT_TEST,
	OPT_IGNORE_IMAGE,
	OPT_PLAN,
	OPT_MIN_ROUNDS,
	OPT_MAX_ROUNDS,
	OPT_BUDGET,
	OPT_ROUND_SECONDS,
	OPT_MDE_LATENCY,
	OPT_MDE_CONTENDED,
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

/* Parse run/validate options; returns 0, or an exit status. */
static int parse_run_args(int argc, char **argv, struct run_args *a)
{
	char err[256];
	long long v;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "", run_options, NULL)) != -1) {
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
			if (parse_names(optarg, (const void ***)&a->ov.workloads, find_workload,
			                "workload", valid_workloads()))
				return EXIT_USAGE;
			break;
		case OPT_THREADS:
			a->ov.nthreads =
			    lb_parse_int_list(optarg, 1, LB_THREADS_MAX, &a->ov.threads,
			                      "--threads", err, sizeof(err));
			if (a->ov.nthreads < 0)
				return usage_error("%s", err);
			break;
		case OPT_CS:
		case OPT_OUTSIDE: {
			/* 0 is a valid amount of work */
			int *vals = NULL;
			int n = lb_parse_int_list(optarg, 0, 100000000, &vals,
			                          c == OPT_CS ? "--cs-loops" : "--outside-loops",
			                          err, sizeof(err));
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
		case OPT_SKIP_WORKLOADS:
			if (parse_names(optarg, (const void ***)&a->ov.skip_workloads,
			                find_workload, "workload", valid_workloads()))
				return EXIT_USAGE;
			break;
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
		case OPT_CONTROLS:
			free(a->controls);
			a->controls = NULL;
			if (parse_names(optarg, &a->controls, find_lock, "control", valid_locks()))
				return EXIT_USAGE;
			break;
		case OPT_HELP:
			print_command_help(stdout, command_find(argv[0]) ? command_find(argv[0])
			                                                 : command_find("run"));
			exit(0);
		default:
			return usage_error("bad option%s", "");
		}
	}
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
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

static void free_run_args(struct run_args *a)
{
	free(a->controls);
	free(a->ov.locks);
	free(a->ov.workloads);
	free(a->ov.skip_workloads);
	free(a->ov.threads);
	free(a->ov.cs_loops);
	free(a->ov.outside_loops);
}

/*
 * The exact instrument (instr.h) for every uncontended run of a lock that
 * did not lock up: one valgrind run for all of them.  Without valgrind the
 * row is left out and stderr says why; a count is never made up.
 */
static void count_instructions(struct lb_result *res, FILE *tbl)
{
	const struct lock_ops **locks = strutil_xcalloc(res->nruns + 1, sizeof(*locks));
	double *per_pair = strutil_xcalloc(res->nruns + 1, sizeof(double));
	size_t n = 0;
	char why[512] = "";

	for (size_t i = 0; i < res->nruns; i++) {
		const struct lb_run *run = &res->runs[i];
		const struct lock_ops *ops = lock_find(run->lock);
		bool have = false;

		if (strcmp(run->workload, "uncontended") || run->lockup || !ops)
			continue;
		for (size_t k = 0; k < n; k++)
			have |= locks[k] == ops;
		if (!have)
			locks[n++] = ops;
	}
	if (!n)
		goto out;
	int rc = instr_count_locks(locks, n, per_pair, why, sizeof(why));
	if (rc) {
		fprintf(stderr, "%s: instructions_per_pair %s: %s\n", prog,
		        rc > 0 ? "left out (no instrument)" : "failed, left out", why);
		goto out;
	}
	for (size_t i = 0; i < res->nruns; i++) {
		struct lb_run *run = &res->runs[i];

		for (size_t k = 0; k < n; k++) {
			if (strcmp(run->workload, "uncontended") || run->lockup ||
			    strcmp(run->lock, locks[k]->name))
				continue;
			struct lb_metric *m = run_add_metric(run, "instructions_per_pair",
			                                     "instructions", false, per_pair[k]);
			metric_add_sample(m, per_pair[k]);
		}
	}
	if (tbl) {
		fprintf(tbl, "instructions_per_pair (valgrind, exact):");
		for (size_t k = 0; k < n; k++)
			fprintf(tbl, "%s %s %.1f", k ? "," : "", locks[k]->name, per_pair[k]);
		fputc('\n', tbl);
	}
out:
	free(per_pair);
	free(locks);
}

/* The metrics a lockstep point measured in turns with the other side. */
static void mark_lockstep(struct lb_run *run)
{
	static const char *const names[] = {"ns_per_pair", "ops_per_sec", "fairness", "cov"};

	for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
		struct lb_metric *m = (struct lb_metric *)run_metric(run, names[k]);
		if (m)
			metric_set_instrument(m, LB_INSTRUMENT_LOCKSTEP);
	}
}

static int cmd_run(int argc, char **argv)
{
	struct run_args a = {.suite = "smoke",
	                     .variant = "base",
	                     .instructions = -1,
	                     .ro = RUNNER_OPTS_DEFAULT,
	                     .disturb_limit_pct = DISTURB_LIMIT_DEFAULT,
	                     .disturb_retries = DISTURB_RETRIES_DEFAULT};
	struct plan plan = {0};
	struct lb_result res;
	struct lockstep *ls = NULL;
	char err[1024];
	int rc, lockups = 0, failures = 0;

	result_init(&res);
	rc = parse_run_args(argc, argv, &a);
	if (rc)
		goto out;
	if (a.json && check_writable(a.json)) {
		rc = 1;
		goto out;
	}
	if (suite_plan(a.suite, &a.ov, &plan, err, sizeof(err))) {
		fprintf(stderr, "%s: %s\n", prog, err);
		rc = EXIT_USAGE;
		goto out;
	}
	for (size_t i = 0, slotted = 0; i < plan.n; i++) {
		struct wl_params *p = &plan.points[i].p;
		p->disturb_limit_pct = a.disturb_limit_pct;
		p->disturb_retries = a.disturb_retries;
		/* slots are for the single-thread samples; the k-th such sample of the run is pair
		 * k */
		if (a.abba && !strcmp(plan.points[i].w->name, "uncontended")) {
			p->slot_at_ns = a.start_at_ns;
			p->slot_ms = p->duration_ms + LB_ABBA_GUARD_MS;
			p->slot_side = a.abba - 1;
			p->slot_first = (int)slotted;
			slotted += (size_t)p->repeat;
		}
	}
	if (a.lockstep) {
		ls = lockstep_open(a.lockstep, a.lockstep_side - 1, err, sizeof(err));
		if (!ls) {
			fprintf(stderr, "%s: %s\n", prog, err);
			rc = 1;
			goto out;
		}
		/* single-thread points on one CPU; hot's threads on every CPU (workload_lock.c) */
		for (size_t i = 0; i < plan.n; i++)
			if (!strcmp(plan.points[i].w->name, "uncontended") ||
			    !strcmp(plan.points[i].w->name, "hot"))
				plan.points[i].p.lockstep = ls;
	}
	/* with --lockstep, --cpus pins the single-thread points: hot's run on these */
	cpu_set_t every;
	bool have_every = !sched_getaffinity(0, sizeof(every), &every);
	if (a.cpus && lb_cpus_pin(a.cpus, err, sizeof(err))) {
		fprintf(stderr, "%s: %s\n", prog, err);
		rc = 1;
		goto out;
	}
	if (a.start_at_ns)
		lb_sleep_until(CLOCK_REALTIME, (uint64_t)a.start_at_ns);
	result_fill_machine(&res);
	res.suite = strdup(a.suite);
	res.variant = strdup(a.variant);
	res.round = a.round;
	{
		/* the code that measures: compare says when base and patched share it */
		char image[ELFIMAGE_LEN];

		if (elfimage_sha256("/proc/self/exe", image, err, sizeof(err)) == 0)
			res.image = strdup(image);
		else
			fprintf(stderr, "%s: this binary's image is not recorded: %s\n", prog, err);
	}
	for (int i = 0; a.controls && a.controls[i]; i++)
		result_add_control(&res, ((const struct lock_ops *)a.controls[i])->name);
	/* with the JSON on stdout, the table goes to stderr */
	FILE *tbl = a.quiet ? NULL : a.json && !strcmp(a.json, "-") ? stderr : stdout;
	if (tbl) {
		fprintf(tbl, "lockbench: suite %s, %zu points, %d CPUs (%s), kernel %s\n", a.suite,
		        plan.n, res.machine.cpus, res.machine.model, res.machine.kernel);
		fflush(tbl);
	}
	for (size_t i = 0; i < plan.n; i++) {
		struct plan_point *pt = &plan.points[i];
		size_t before = res.nruns;
		long alone0 = 0, alone1 = 0;
		bool unpin = pt->p.lockstep && a.cpus && have_every && !strcmp(pt->w->name, "hot");
		if (ls)
			lockstep_turns(ls, &alone0);
		if (unpin)
			sched_setaffinity(0, sizeof(every), &every);
		int failed =
		    runner_run_point(pt->w, pt->ops, &pt->p, &a.ro, &res, err, sizeof(err));
		if (unpin && lb_cpus_pin(a.cpus, err, sizeof(err)))
			fprintf(stderr, "%s: %s\n", prog, err);
		if (failed) {
			fprintf(stderr, "%s: %s\n", prog, err);
			failures++;
			continue;
		}
		if (res.nruns > before) {
			/* lockstep only when every turn of the point followed the other side's */
			if (ls)
				lockstep_turns(ls, &alone1);
			if (pt->p.lockstep && alone1 == alone0)
				mark_lockstep(&res.runs[before]);
			if (res.runs[before].lockup)
				lockups++;
			if (tbl)
				print_run(tbl, &res.runs[before]);
		}
	}
	if (ls) {
		/* the other side runs alone from here; the counts below take no turns */
		long alone, turns = lockstep_turns(ls, &alone);
		lockstep_done(ls);
		if (tbl)
			fprintf(tbl, "lockstep side %d: %ld turns, %ld of them alone\n",
			        a.lockstep_side - 1, turns, alone);
	}
	if (a.instructions == 1 || (a.instructions < 0 && suite_counts_instructions(a.suite)))
		count_instructions(&res, tbl);
	if (failures && !res.nruns) {
		fprintf(stderr, "%s: every point failed; no result written\n", prog);
		rc = 1;
		goto out;
	}
	if (a.json && result_write_file(&res, a.json, err, sizeof(err))) {
		fprintf(stderr, "%s: %s\n", prog, err);
		rc = 1;
		goto out;
	}
	if (tbl)
		fprintf(tbl, "%zu runs, %d locked up, %d failed to run\n", res.nruns, lockups,
		        failures);
	rc = failures ? 1 : lockups ? EXIT_LOCKUP : 0;
out:
	lockstep_close(ls);
	plan_release(&plan);
	result_release(&res);
	free_run_args(&a);
	return rc;
}

/*
 * validate: a lock is called checked only after enough acquisitions.  Fair
 * spin locks under 4x oversubscription manage about a hundred a second (each
 * handover waits for a preempted waiter's next time slice), so a lock short
 * of VALIDATE_MIN_ACQ in the first 500 ms runs again for longer, up to
 * VALIDATE_MAX_MS, unless --duration-ms was given.
 */
#define VALIDATE_MIN_ACQ 2000
#define VALIDATE_MAX_MS  5000

/* Acquisitions of a torture run: total and the least any thread made. */
static void validate_counts(const struct lb_run *run, int duration_ms, double *total, double *least)
{
	const struct lb_metric *m = run_metric(run, "ops_per_sec");

	*total = *least = 0;
	if (!m)
		return;
	*total = m->value * duration_ms / 1000.0;
	for (size_t k = 0; k < m->nper_thread; k++)
		if (k == 0 || m->per_thread[k] < *least)
			*least = m->per_thread[k];
	*least *= duration_ms / 1000.0;
}

/* Torture one lock; prints its line and returns true when it passed. */
static bool validate_lock(const struct lock_ops *ops, const struct run_args *a, int threads,
                          struct lb_result *res)
{
	const struct workload *torture = workload_find("torture");
	struct wl_params p = {.threads = a->ov.nthreads ? a->ov.threads[0] : threads,
	                      .duration_ms = a->ov.duration_ms ? a->ov.duration_ms : 500,
	                      .repeat = a->ov.repeat ? a->ov.repeat : 1};
	double total = 0, least = 0;
	const struct lb_run *run = NULL;
	char err[1024];

	for (;;) {
		size_t before = res->nruns;

		if (runner_run_point(torture, ops, &p, &a->ro, res, err, sizeof(err))) {
			printf("FAIL %-18s %s\n", ops->name, err);
			return false;
		}
		run = &res->runs[before];
		if (run->lockup)
			break;
		validate_counts(run, p.duration_ms, &total, &least);
		if (total >= VALIDATE_MIN_ACQ || a->ov.duration_ms ||
		    p.duration_ms >= VALIDATE_MAX_MS)
			break;
		/* not enough to call it checked: again, long enough for the minimum */
		double want = p.duration_ms * 1.5 * VALIDATE_MIN_ACQ / (total > 1 ? total : 1);
		p.duration_ms = want > VALIDATE_MAX_MS ? VALIDATE_MAX_MS : (int)want;
	}
	if (run->lockup) {
		printf("FAIL %-18s %s: %s\n", ops->name, run->lockup->kind, run->lockup->message);
		if (run->lockup->stacks) {
			/* the first lines say where the threads are */
			const char *s = run->lockup->stacks;
			for (int l = 0; l < 12 && *s; l++) {
				const char *nl = strchr(s, '\n');
				int len = nl ? (int)(nl - s) : (int)strlen(s);
				printf("     | %.*s\n", len, s);
				s = nl ? nl + 1 : s + len;
			}
		}
		return false;
	}
	printf("ok   %-18s %.0f acquisitions in %.1f s (%d threads, the fewest %.0f), no "
	       "violation%s\n",
	       ops->name, total, p.duration_ms / 1000.0, p.threads, least,
	       total < VALIDATE_MIN_ACQ ? " (few: a slow lock under oversubscription)" : "");
	return true;
}

static int cmd_validate(int argc, char **argv)
{
	struct run_args a = {
	    .suite = "smoke", .variant = "base", .instructions = -1, .ro = RUNNER_OPTS_DEFAULT};
	struct lb_result res;
	const struct lock_ops *const *all = lock_all();
	char err[1024];
	int rc, failed = 0, checked = 0;

	result_init(&res);
	rc = parse_run_args(argc, argv, &a);
	if (rc)
		goto out;
	int threads = 4 * lb_online_cpus();
	printf("lockbench validate: %d threads (4x %d CPUs), exclusion, trylock on held, random "
	       "short and long holds, lost-wakeup watchdog; at least %d acquisitions a lock "
	       "(up to %d s)\n",
	       threads, lb_online_cpus(), VALIDATE_MIN_ACQ, VALIDATE_MAX_MS / 1000);
	for (int i = 0; all[i]; i++) {
		const struct lock_ops *ops = all[i];
		bool want = a.ov.locks == NULL ? !ops->test_only : false;
		for (int k = 0; a.ov.locks && a.ov.locks[k]; k++)
			want |= a.ov.locks[k] == ops;
		if (!want)
			continue;
		checked++;
		if (!validate_lock(ops, &a, threads, &res))
			failed++;
		fflush(stdout);
	}
	printf("%d locks checked, %d failed\n", checked, failed);
	if (a.json && result_write_file(&res, a.json, err, sizeof(err)))
		fprintf(stderr, "%s: %s\n", prog, err);
	rc = failed ? EXIT_LOCKUP : 0;
out:
	result_release(&res);
	free_run_args(&a);
	return rc;
}

static const struct option compare_options[] = {
    {"format", required_argument, NULL, OPT_FORMAT},
    {"alpha", required_argument, NULL, OPT_ALPHA},
    {"min-effect", required_argument, NULL, OPT_MIN_EFFECT},
    {"confirm-from", required_argument, NULL, OPT_CONFIRM_FROM},
    {"margin", required_argument, NULL, OPT_MARGIN},
    {"looks", required_argument, NULL, OPT_LOOKS},
    {"test", required_argument, NULL, OPT_TEST},
    {"ignore-image", no_argument, NULL, OPT_IGNORE_IMAGE},
    {"plan", required_argument, NULL, OPT_PLAN},
    {"min-rounds", required_argument, NULL, OPT_MIN_ROUNDS},
    {"max-rounds", required_argument, NULL, OPT_MAX_ROUNDS},
    {"help", no_argument, NULL, OPT_HELP},
    {NULL, 0, NULL, 0},
};

static const struct option plan_options[] = {
    {"alpha", required_argument, NULL, OPT_ALPHA},
    {"min-rounds", required_argument, NULL, OPT_MIN_ROUNDS},
    {"max-rounds", required_argument, NULL, OPT_MAX_ROUNDS},
    {"budget", required_argument, NULL, OPT_BUDGET},
    {"round-seconds", required_argument, NULL, OPT_ROUND_SECONDS},
    {"mde-latency", required_argument, NULL, OPT_MDE_LATENCY},
    {"mde-contended", required_argument, NULL, OPT_MDE_CONTENDED},
    {"help", no_argument, NULL, OPT_HELP},
    {NULL, 0, NULL, 0},
};

static int parse_fraction(const char *s, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (!*s || *end || errno || !(v > 0 && v < 1))
		return -1;
	*out = v;
	return 0;
}

static void free_side(struct lb_result *docs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		result_release(&docs[i]);
	free(docs);
}

/* "a.json,b.json": every round of one side; each must follow the schema. */
static int load_side(const char *arg, struct lb_result **out, size_t *n)
{
	char err[1024];
	int ntok;
	char **tok = lb_split_list(arg, "compare", &ntok, err, sizeof(err));
	struct lb_result *docs = NULL;
	int rc = -1;

	*n = 0;
	if (!tok) {
		fprintf(stderr, "%s: %s\n", prog, err);
		goto out;
	}
	docs = calloc((size_t)ntok, sizeof(*docs));
	if (!docs) {
		fprintf(stderr, "%s: out of memory\n", prog);
		goto out;
	}
	for (int i = 0; i < ntok; i++) {
		result_init(&docs[*n]);
		if (result_load_file(tok[i], &docs[*n], err, sizeof(err))) {
			fprintf(stderr, "%s: %s\n", prog, err);
			result_release(&docs[*n]);
			goto out;
		}
		(*n)++;
	}
	rc = 0;
out:
	lb_free_list(tok);
	if (rc) {
		free_side(docs, *n);
		docs = NULL;
		*n = 0;
	}
	*out = docs;
	return rc;
}

/* True when docs hold a round before from and one at or after it. */
static bool has_rounds(const struct lb_result *docs, size_t n, int from)
{
	bool before = false, after = false;

	for (size_t i = 0; i < n; i++) {
		before |= docs[i].round < from;
		after |= docs[i].round >= from;
	}
	return before && after;
}

/*
 * lockbench changepoint [FILE]: the steps E-Divisive finds in a series of
 * numbers (one per commit, oldest first; whitespace separated) from FILE or
 * stdin, with the server's tracker defaults (changepoint.h).
 */
/*
 * lockbench image FILE...: the image each executable would record in its
 * result documents (elfimage.h), one line each; an operator's way to see
 * whether a patch changes the code a suite runs before any round is run.
 */
static int cmd_image(int argc, char **argv)
{
	char image[ELFIMAGE_LEN], err[512];
	int rc = 0;

	if (argc < 2)
		return usage_error("image: name one or more executables%s", "");
	for (int i = 1; i < argc; i++) {
		if (elfimage_sha256(argv[i], image, err, sizeof(err))) {
			fprintf(stderr, "%s: %s\n", prog, err);
			rc = 1;
			continue;
		}
		printf("%s  %s\n", image, argv[i]);
	}
	return rc;
}

static int cmd_changepoint(int argc, char **argv)
{
	FILE *in = stdin;
	double *x = NULL, v;
	size_t n = 0, cap = 0;
	struct changepoint_opts o;
	struct changepoint_step steps[64];
	int found, i, rc = 1;

	if (argc > 2)
		return usage_error("changepoint takes at most one file%s", "");
	if (argc == 2 && !(in = fopen(argv[1], "r"))) {
		fprintf(stderr, "%s: %s: %s\n", prog, argv[1], strerror(errno));
		return 1;
	}
	while (fscanf(in, "%lf", &v) == 1) {
		if (n == cap) {
			double *bigger = realloc(x, (cap = cap ? 2 * cap : 64) * sizeof(*x));

			if (!bigger)
				goto out;
			x = bigger;
		}
		x[n++] = v;
	}
	if (!feof(in)) {
		fprintf(stderr, "%s: changepoint: not a number after %zu values\n", prog, n);
		goto out;
	}
	changepoint_defaults(&o);
	found = changepoint_find(x, n, &o, steps, 64);
	if (found < 0)
		goto out;
	for (i = 0; i < found; i++)
		printf("step at %zu: %g -> %g (%+.1f%%), p %.3f\n", steps[i].at, steps[i].before,
		       steps[i].after, 100 * steps[i].change, steps[i].p);
	printf("%d step(s) in %zu values\n", found, n);
	rc = 0;
out:
	free(x);
	if (in != stdin)
		fclose(in);
	return rc;
}

/*
 * The plan in FILE (lockbench plan's output, or a job's "plan" from the
 * server) as compact text in *text; 0, or -1 with a message.  A plan has
 * integer "rounds" of at least COMPARE_MIN_PAIRS, "max_rounds" not below
 * them, and a "rows" list.
 */
static int load_plan(const char *path, char **text)
{
	json_error_t jerr;
	json_t *plan = json_load_file(path, 0, &jerr), *rounds, *cap;
	int rc = -1;

	*text = NULL;
	if (!plan) {
		fprintf(stderr, "%s: --plan %s: %s (line %d)\n", prog, path, jerr.text, jerr.line);
		return -1;
	}
	rounds = json_object_get(plan, "rounds");
	cap = json_object_get(plan, "max_rounds");
	if (!json_is_integer(rounds) || json_integer_value(rounds) < COMPARE_MIN_PAIRS ||
	    !json_is_integer(cap) || json_integer_value(cap) < json_integer_value(rounds) ||
	    json_integer_value(cap) > 100000 || !json_is_array(json_object_get(plan, "rows"))) {
		fprintf(stderr,
		        "%s: --plan %s: not a plan (an object with integer \"rounds\" >= %d, "
		        "\"max_rounds\" >= rounds and a \"rows\" list)\n",
		        prog, path, COMPARE_MIN_PAIRS);
		goto out;
	}
	*text = json_dumps(plan, JSON_COMPACT);
	rc = *text ? 0 : -1;
out:
	json_decref(plan);
	return rc;
}

/* A count option: an integer in [min, max] into *out, or a usage error. */
static int parse_count(const char *arg, const char *name, long long min, long long max, int *out)
{
	char err[256];
	long long v;

	if (lb_parse_int(arg, min, max, &v, name, err, sizeof(err)))
		return usage_error("%s", err);
	*out = (int)v;
	return 0;
}

/* A positive number option (seconds, a relative MDE) into *out, or a usage error. */
static int parse_positive(const char *arg, const char *name, double max, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (!*arg || *end || errno || !(v >= 0 && v <= max)) {
		fprintf(stderr, "%s: %s: '%s' is not a number from 0 to %g\n", prog, name, arg,
		        max);
		return EXIT_USAGE;
	}
	*out = v;
	return 0;
}

/*
 * lockbench plan BASE PATCHED: the rounds a job plans on this machine, from
 * A/A rounds (the same lockbench both sides): their profile (the spread of
 * each headline row's per-round paired change, as the agent posts it) and
 * the plan the server would make of it with these settings, as JSON.
 */
static int cmd_plan(int argc, char **argv)
{
	struct plan_settings ps = {0.05, 5, 20, 3600, 0.03, 0.10};
	struct compare_opts co = COMPARE_OPTS_DEFAULT;
	struct lb_result *base = NULL, *patched = NULL;
	size_t nbase = 0, npatched = 0;
	struct comparison cmp;
	json_t *points = NULL, *plan = NULL;
	struct profile_point *pts = NULL;
	double round_s = 0, budget = 3600;
	char err[1024];
	int c, rc = 1, first, cap;

	comparison_init(&cmp);
	optind = 1;
	while ((c = getopt_long(argc, argv, "", plan_options, NULL)) != -1) {
		int bad = 0;

		switch (c) {
		case OPT_ALPHA:
			if (parse_fraction(optarg, &ps.alpha))
				bad = usage_error("--alpha: '%s' is not between 0 and 1", optarg);
			break;
		case OPT_MIN_ROUNDS:
			bad = parse_count(optarg, "--min-rounds", 1, 1000, &ps.min_rounds);
			break;
		case OPT_MAX_ROUNDS:
			bad = parse_count(optarg, "--max-rounds", 1, 1000, &ps.max_rounds);
			break;
		case OPT_BUDGET:
			bad = parse_positive(optarg, "--budget", 604800, &budget);
			break;
		case OPT_ROUND_SECONDS:
			bad = parse_positive(optarg, "--round-seconds", 604800, &round_s);
			break;
		case OPT_MDE_LATENCY:
			bad = parse_positive(optarg, "--mde-latency", 1, &ps.mde_latency);
			break;
		case OPT_MDE_CONTENDED:
			bad = parse_positive(optarg, "--mde-contended", 1, &ps.mde_contended);
			break;
		case OPT_HELP:
			print_command_help(stdout, command_find("plan"));
			rc = 0;
			goto out;
		default:
			bad = usage_error("bad option%s", "");
		}
		if (bad) {
			rc = bad;
			goto out;
		}
	}
	ps.budget_s = (int)budget;
	if (!(ps.mde_latency > 0 && ps.mde_contended > 0)) {
		rc = usage_error("--mde-latency and --mde-contended must be above 0%s", "");
		goto out;
	}
	if (ps.max_rounds < ps.min_rounds) {
		rc = usage_error("--max-rounds is below --min-rounds%s", "");
		goto out;
	}
	if (argc - optind != 2) {
		rc = usage_error("plan needs BASE.json and PATCHED.json (A/A rounds)%s", "");
		goto out;
	}
	if (load_side(argv[optind], &base, &nbase) ||
	    load_side(argv[optind + 1], &patched, &npatched))
		goto out;
	/* the agent's noise A/A: the tests' own spread even on one image */
	co.ignore_image = true;
	co.alpha = ps.alpha;
	if (compare_results(base, nbase, patched, npatched, &co, &cmp, err, sizeof(err))) {
		fprintf(stderr, "%s: %s\n", prog, err);
		goto out;
	}
	points = plan_profile_points(&cmp);
	if (!points || json_array_size(points) == 0) {
		fprintf(stderr,
		        "%s: plan: no row has %d paired rounds or more with an interval: "
		        "nothing to plan from\n",
		        prog, COMPARE_MIN_PAIRS);
		goto out;
	}
	pts = calloc(json_array_size(points), sizeof(*pts));
	if (!pts)
		goto out;
	for (size_t i = 0; i < json_array_size(points); i++) {
		json_t *o = json_array_get(points, i);

		pts[i] = (struct profile_point){
		    json_string_value(json_object_get(o, "workload")),
		    json_string_value(json_object_get(o, "lock")),
		    json_string_value(json_object_get(o, "params")),
		    json_string_value(json_object_get(o, "metric")),
		    (long long)json_integer_value(json_object_get(o, "users")),
		    json_real_value(json_object_get(o, "sd"))};
	}
	plan = plan_build(pts, json_array_size(points), round_s, "", &ps, &first, &cap);
	if (!plan || json_dumpf(plan, stdout, JSON_INDENT(2)) || fputc('\n', stdout) == EOF ||
	    fflush(stdout)) {
		fprintf(stderr, "%s: cannot write the plan: %s\n", prog, strerror(errno));
		goto out;
	}
	rc = 0;
out:
	free(pts);
	json_decref(points);
	json_decref(plan);
	comparison_release(&cmp);
	free_side(patched, npatched);
	free_side(base, nbase);
	return rc;
}

static int cmd_compare(int argc, char **argv)
{
	enum report_format fmt = REPORT_TEXT;
	struct compare_opts co = COMPARE_OPTS_DEFAULT;
	struct lb_result *base = NULL, *patched = NULL;
	size_t nbase = 0, npatched = 0;
	struct comparison cmp;
	const char *plan_path = NULL;
	char err[1024], *plan_text = NULL;
	int c, rc = 1, min_rounds = 5, max_rounds = 0;

	comparison_init(&cmp);
	optind = 1;
	while ((c = getopt_long(argc, argv, "", compare_options, NULL)) != -1) {
		switch (c) {
		case OPT_FORMAT:
			if (report_format_parse(optarg, &fmt)) {
				rc = usage_error(
				    "unknown format '%s' (valid: aim7, perf, lkp, text, "
				    "json)",
				    optarg);
				goto out;
			}
			break;
		case OPT_ALPHA:
			if (parse_fraction(optarg, &co.alpha)) {
				rc = usage_error("--alpha: '%s' is not between 0 and 1", optarg);
				goto out;
			}
			break;
		case OPT_MIN_EFFECT:
			if (parse_fraction(optarg, &co.min_effect)) {
				rc = usage_error("--min-effect: '%s' is not between 0 and 1",
				                 optarg);
				goto out;
			}
			break;
		case OPT_CONFIRM_FROM: {
			long long v;
			if (lb_parse_int(optarg, 1, 1000000, &v, "--confirm-from", err,
			                 sizeof(err))) {
				rc = usage_error("%s", err);
				goto out;
			}
			co.confirm_from = (int)v;
			break;
		}
		case OPT_MARGIN:
			if (parse_fraction(optarg, &co.equiv_margin)) {
				rc = usage_error("--margin: '%s' is not between 0 and 1", optarg);
				goto out;
			}
			break;
		case OPT_LOOKS: {
			long long v;
			if (lb_parse_int(optarg, 1, 1000, &v, "--looks", err, sizeof(err))) {
				rc = usage_error("%s", err);
				goto out;
			}
			co.looks = (int)v;
			break;
		}
		case OPT_TEST:
			if (!strcmp(optarg, "log")) {
				co.test = COMPARE_TEST_LOG;
			} else if (!strcmp(optarg, "raw")) {
				co.test = COMPARE_TEST_RAW;
			} else {
				rc = usage_error("--test: '%s' is not log or raw", optarg);
				goto out;
			}
			break;
		case OPT_IGNORE_IMAGE:
			co.ignore_image = true;
			break;
		case OPT_PLAN:
			plan_path = optarg;
			break;
		case OPT_MIN_ROUNDS:
			if (parse_count(optarg, "--min-rounds", 1, 1000, &min_rounds)) {
				rc = EXIT_USAGE;
				goto out;
			}
			break;
		case OPT_MAX_ROUNDS:
			if (parse_count(optarg, "--max-rounds", COMPARE_MIN_PAIRS, 100000,
			                &max_rounds)) {
				rc = EXIT_USAGE;
				goto out;
			}
			break;
		case OPT_HELP:
			print_command_help(stdout, command_find("compare"));
			rc = 0;
			goto out;
		default:
			rc = usage_error("bad option%s", "");
			goto out;
		}
	}
	if (argc - optind != 2) {
		rc = usage_error("compare needs BASE.json and PATCHED.json%s", "");
		goto out;
	}
	/* as the server judges (server/verdicts.c): a row needs the rounds a job asks for first */
	if ((size_t)min_rounds < co.min_samples)
		co.min_samples =
		    min_rounds > COMPARE_MIN_PAIRS ? (size_t)min_rounds : COMPARE_MIN_PAIRS;
	if (plan_path) {
		/* and a planned job its plan's looks, first rounds and rows it cannot resolve */
		if (load_plan(plan_path, &plan_text))
			goto out;
		plan_compare_opts(plan_text, min_rounds, &co);
	}
	if (load_side(argv[optind], &base, &nbase) ||
	    load_side(argv[optind + 1], &patched, &npatched))
		goto out;
	if (co.confirm_from && (!has_rounds(base, nbase, co.confirm_from) ||
	                        !has_rounds(patched, npatched, co.confirm_from))) {
		fprintf(stderr,
		        "%s: --confirm-from %d: each side needs rounds before %d and from %d on\n",
		        prog, co.confirm_from, co.confirm_from, co.confirm_from);
		goto out;
	}
	if (compare_results(base, nbase, patched, npatched, &co, &cmp, err, sizeof(err))) {
		fprintf(stderr, "%s: %s\n", prog, err);
		goto out;
	}
	plan_mark_rows(plan_text, &cmp);
	/* futility needs the job's limit: given, or the plan's */
	if (!max_rounds)
		max_rounds = plan_max_rounds(plan_text);
	if (max_rounds)
		plan_mark_futile(&cmp, max_rounds);
	/* a debug kernel's documents carry lockups and splats only, no figures */
	bool debug = cmp.suite && !strncmp(cmp.suite, "kernel-debug", 12);
	if (!cmp.nrows && !cmp.nsplats && !debug) {
		fprintf(stderr, "%s: the two documents have no point in common\n", prog);
		goto out;
	}
	if (report_render(&cmp, fmt, stdout) || fflush(stdout)) {
		fprintf(stderr, "%s: cannot write the report: %s\n", prog, strerror(errno));
		goto out;
	}
	rc = 0;
out:
	free(plan_text);
	comparison_release(&cmp);
	free_side(patched, npatched);
	free_side(base, nbase);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		print_help(stderr);
		return EXIT_USAGE;
	}
	const char *cmd = argv[1];
	if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
		print_help(stdout);
		return 0;
	}
	if (!strcmp(cmd, "--version")) {
		version_print(stdout, prog);
		return 0;
	}
	if (!strcmp(cmd, "help"))
		return cmd_help(argc - 1, argv + 1);
	if (command_find(cmd))
		command_name = cmd;
	/* the commands without options of their own take --help as their only argument */
	if (argc == 3 && (!strcmp(argv[2], "--help") || !strcmp(argv[2], "-h")) &&
	    (!strcmp(cmd, "list") || !strcmp(cmd, "image") || !strcmp(cmd, "changepoint"))) {
		print_command_help(stdout, command_find(cmd));
		return 0;
	}
	if (!strcmp(cmd, LB_AIM7_EXEC_ARG))
		return 0; /* an aim7-mix job's exec (workload.h), not a command */
	if (!strcmp(cmd, LB_AIM7_USER_ARG))
		return wl_aim7_user_main(argc - 2, argv + 2); /* an aim7-mix user */
	if (!strcmp(cmd, "list"))
		return argc == 2 ? cmd_list() : usage_error("list takes no arguments%s", "");
	if (!strcmp(cmd, "run"))
		return cmd_run(argc - 1, argv + 1);
	if (!strcmp(cmd, "validate"))
		return cmd_validate(argc - 1, argv + 1);
	if (!strcmp(cmd, "compare"))
		return cmd_compare(argc - 1, argv + 1);
	if (!strcmp(cmd, "kernel"))
		return kernel_main(argc - 1, argv + 1);
	/* internal: what `run` starts under valgrind (instr.h) */
	if (!strcmp(cmd, "instr-count"))
		return instr_child_main(argc - 1, argv + 1);
	if (!strcmp(cmd, "changepoint"))
		return cmd_changepoint(argc - 1, argv + 1);
	if (!strcmp(cmd, "image"))
		return cmd_image(argc - 1, argv + 1);
	if (!strcmp(cmd, "plan"))
		return cmd_plan(argc - 1, argv + 1);
	fprintf(stderr,
	        "%s: unknown command '%s' (valid: list, run, validate, compare, kernel, "
	        "changepoint, image, plan, help)\n",
	        prog, cmd);
	return EXIT_USAGE;
}
