/*
 * kernel_run_args.c - `lockbench kernel run`'s options (kernel_run_internal.h):
 * the table getopt reads, the lists and numbers they take, and the
 * defaults each suite and accelerator gives the rest.
 */
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "console.h"
#include "kernel_cli.h"
#include "kernel_run.h"
#include "kernel_run_internal.h"
#include "strutil.h"
#include "suite.h"
#include "util.h"
#include "workload.h"

static const char *prog = "lockbench kernel";

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
int run_parse(int argc, char **argv, struct run_args *a)
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
