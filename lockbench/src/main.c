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
 *
 * This file only finds the command in cli.c's table and runs it (and the
 * internal entry points that are not commands: aim7 users, instr-count).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "instr.h"
#include "version.h"
#include "workload.h"

#include "cli.h"

static const char *prog = "lockbench";

int main(int argc, char **argv)
{
	if (argc < 2) {
		lb_print_help(stderr);
		return EXIT_USAGE;
	}
	const char *cmd = argv[1];
	if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
		lb_print_help(stdout);
		return 0;
	}
	if (!strcmp(cmd, "--version")) {
		version_print(stdout, prog);
		return 0;
	}
	if (!strcmp(cmd, "help"))
		return cmd_help(argc - 1, argv + 1);
	if (!strcmp(cmd, LB_AIM7_EXEC_ARG))
		return 0; /* an aim7-mix job's exec (workload.h), not a command */
	if (!strcmp(cmd, LB_AIM7_USER_ARG))
		return wl_aim7_user_main(argc - 2, argv + 2); /* an aim7-mix user */
	/* internal: what `run` starts under valgrind (instr.h) */
	if (!strcmp(cmd, "instr-count"))
		return instr_child_main(argc - 1, argv + 1);
	const struct command *c = lb_command_find(cmd);
	if (!c) {
		fprintf(stderr,
		        "%s: unknown command '%s' (valid: list, run, validate, compare, kernel, "
		        "changepoint, image, plan, help)\n",
		        prog, cmd);
		return EXIT_USAGE;
	}
	lb_command_name = cmd;
	/* the commands without options of their own take --help as their only argument */
	if (argc == 3 && (!strcmp(argv[2], "--help") || !strcmp(argv[2], "-h")) && !c->options &&
	    strcmp(cmd, "kernel")) {
		lb_print_command_help(stdout, c);
		return 0;
	}
	return c->run(argc - 1, argv + 1);
}
