/*
 * kernel_run_args.c - `lockbench kernel run`'s options (kernel_run_internal.h):
 * their table (lib/options.h), the lists and names they take, and the
 * defaults each suite and accelerator gives the rest.
 */
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
#include "options.h"
#include "strutil.h"
#include "suite.h"
#include "util.h"
#include "workload.h"

static const char *prog = "lockbench kernel";

/*
 * The list-valued options (--writers, --types, --users), as given, into a:
 * 0, or the exit status when one is bad (usage printed).
 */
static int run_parse_lists(const char *writers, const char *types, const char *users,
                           struct run_args *a)
{
	char err[1024];
	int *u = NULL, nu;

	if (writers) {
		a->nwriters = lb_parse_int_list(writers, 1, LB_THREADS_MAX, &a->writers,
		                                "--writers", err, sizeof(err));
		if (a->nwriters < 0)
			return kernel_usage("%s", err);
	}
	if (types) {
		a->types = lb_split_list(types, "--types", &a->ntypes, err, sizeof(err));
		if (!a->types)
			return kernel_usage("%s", err);
		for (int i = 0; i < a->ntypes; i++)
			if (!valid_torture_type(a->types[i]))
				return kernel_usage(
				    "unknown locktorture type '%s' (e.g. mutex_lock, "
				    "rwsem_lock, spin_lock)",
				    a->types[i]);
	}
	if (users) {
		nu = lb_parse_int_list(users, 1, WL_MAX_THREADS, &u, "--users", err, sizeof(err));
		if (nu < 0)
			return kernel_usage("%s", err);
		for (int i = 0; i < nu; i++)
			if (u[i] > a->users_max)
				a->users_max = u[i];
		free(u);
		a->users = users;
	}
	return 0;
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

enum {
	R_KERNEL,
	R_SUITE,
	R_WRITERS,
	R_TYPES,
	R_TORTURE_S,
	R_WORKLOADS,
	R_LOCKS,
	R_USERS,
	R_STALL,
	R_NO_TORTURE,
	R_NO_LB,
	R_DEBUG,
	R_TIMEOUT,
	R_HUNG,
	R_ACCEL,
	R_GUEST,
	R_CONSOLE,
	R_BUILD_JSON,
	R_VARIANT,
	R_ROUND,
	R_JSON,
	R_EXTRA,
	R_CPUS,
	R_CAP_X,
	R_BUDGET,
	NROWS
};

/*
 * The options of `lockbench kernel run` into a, with the defaults of its
 * suite for what they leave unset (what a held when called is the rest's
 * default); -1 to run, else the exit status (usage printed).
 */
int run_parse(int argc, char **argv, struct run_args *a)
{
	const char *writers = NULL, *types = NULL, *users = NULL;
	/* into a what it holds as given; the lists for run_parse_lists */
	struct opt opts[NROWS] = {
	    [R_KERNEL] = {"kernel", NULL, OPT_STR, &a->kernel, NULL, 0, 0, NULL, NULL},
	    [R_SUITE] = {"suite", NULL, OPT_STR, &a->suite, NULL, 0, 0, NULL, NULL},
	    [R_WRITERS] = {"writers", NULL, OPT_STR, &writers, NULL, 0, 0, NULL, NULL},
	    [R_TYPES] = {"types", NULL, OPT_STR, &types, NULL, 0, 0, NULL, NULL},
	    [R_TORTURE_S] = {"torture-s", NULL, OPT_INT, &a->torture_s, NULL, 1, 1000000, NULL,
	                     NULL},
	    [R_WORKLOADS] = {"workloads", NULL, OPT_STR, &a->workloads, NULL, 0, 0, NULL, NULL},
	    [R_LOCKS] = {"locks", NULL, OPT_STR, &a->locks, NULL, 0, 0, NULL, NULL},
	    [R_USERS] = {"users", NULL, OPT_STR, &users, NULL, 0, 0, NULL, NULL},
	    [R_STALL] = {"stall-ms", NULL, OPT_INT, &a->stall_ms, NULL, 10, 3600000, NULL, NULL},
	    [R_NO_TORTURE] = {"no-torture", NULL, OPT_FLAG, &a->no_torture, NULL, 0, 0, NULL, NULL},
	    [R_NO_LB] = {"no-lockbench", NULL, OPT_FLAG, &a->no_lockbench, NULL, 0, 0, NULL, NULL},
	    [R_DEBUG] = {"debug", NULL, OPT_FLAG, &a->debug, NULL, 0, 0, NULL, NULL},
	    [R_TIMEOUT] = {"timeout-s", NULL, OPT_INT, &a->timeout_s, NULL, 1, 1000000, NULL, NULL},
	    [R_HUNG] = {"hung-task-s", NULL, OPT_INT, &a->hung_s, NULL, 1, 1000000, NULL, NULL},
	    [R_ACCEL] = {"accel", NULL, OPT_STR, &a->accel_name, NULL, 0, 0, NULL, NULL},
	    [R_GUEST] = {"guest-dir", NULL, OPT_STR, &a->guest_dir, NULL, 0, 0, NULL, NULL},
	    [R_CONSOLE] = {"console-dir", NULL, OPT_STR, &a->console_dir, NULL, 0, 0, NULL, NULL},
	    [R_BUILD_JSON] = {"build-json", NULL, OPT_STR, &a->build_json, NULL, 0, 0, NULL, NULL},
	    [R_VARIANT] = {"variant", NULL, OPT_STR, &a->variant, NULL, 0, 0, NULL, NULL},
	    [R_ROUND] = {"round", NULL, OPT_INT, &a->round, NULL, 0, 1000000, NULL, NULL},
	    [R_JSON] = {"json", NULL, OPT_STR, &a->json, NULL, 0, 0, NULL, NULL},
	    [R_EXTRA] = {"cmdline", NULL, OPT_STR, &a->extra, NULL, 0, 0, NULL, NULL},
	    [R_CPUS] = {"cpus", NULL, OPT_INT, &a->cpus, NULL, 1, 64, NULL, NULL},
	    [R_CAP_X] = {"cap-x", NULL, OPT_INT, &a->cap_x, NULL, 1, 100, NULL, NULL},
	    [R_BUDGET] = {"budget-s", NULL, OPT_INT, &a->budget_s, NULL, 1, 1000000, NULL, NULL},
	};
	static const struct opt_cmd help[] = {{"help", NULL}};
	bool given[NROWS];
	const struct opt_table t = {
	    .prog = "lockbench kernel run",
	    .opts = opts,
	    .n = NROWS,
	    .given = given,
	    .cmds = help,
	    .ncmds = 1,
	};
	int rc = kernel_opts(&t, argc, argv);

	if (rc >= 0)
		return rc;
	a->hung_given = given[R_HUNG];
	if (strcmp(a->suite, "smoke") && strcmp(a->suite, "quick") &&
	    strcmp(suite_canonical(a->suite), "users"))
		return kernel_usage("unknown suite '%s' (valid: smoke, quick, users)", a->suite);
	a->suite = suite_canonical(a->suite);
	rc = run_parse_lists(writers, types, users, a);
	if (rc)
		return rc;
	if (strcmp(a->accel_name, "auto") && strcmp(a->accel_name, "kvm") &&
	    strcmp(a->accel_name, "tcg"))
		return kernel_usage("--accel: '%s' is not auto, kvm or tcg", a->accel_name);
	rc = kernel_check_variant(a->variant);
	if (rc)
		return rc;
	if (a->json && !*a->json)
		return kernel_usage("--json: empty path%s", "");
	if (!a->kernel)
		return kernel_usage("run needs --kernel bzImage%s", "");
	if (!lb_is_file(a->kernel)) {
		fprintf(stderr, "%s: no kernel image at %s\n", prog, a->kernel);
		return 1;
	}
	return run_defaults(a, given[R_WORKLOADS]);
}
