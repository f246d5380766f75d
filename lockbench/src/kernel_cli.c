/*
 * kernel_cli.c - the command line that `lockbench kernel build` (kbuild.c)
 * and `lockbench kernel run` (kernel_run.c) share (kernel_cli.h): reading
 * their tables of options, the variant names, usage errors and the help.
 */
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"

#include "kernel_cli.h"

#define EXIT_USAGE 2

static const char *prog = "lockbench kernel";

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

int kernel_check_variant(const char *v)
{
	if (!kernel_valid_variant(v))
		return kernel_usage("--variant: '%s' is not base, patched or patch-K", v);
	return 0;
}

int kernel_opts(const struct opt_table *t, int argc, char **argv)
{
	switch (lb_opts_parse(t, argc, argv)) {
	case 0:
		return -1;
	case 1:
		kernel_print_help(stdout);
		return 0;
	default:
		return EXIT_USAGE;
	}
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
