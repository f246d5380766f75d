/*
 * run_args.h - what lockbench run and validate take (run_args.c reads it
 * from argv; cmd_run.c runs it).
 */
#ifndef LOCKBENCH_RUN_ARGS_H
#define LOCKBENCH_RUN_ARGS_H

#include <stdbool.h>

#include "runner.h"
#include "suite.h"

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

/*
 * argv (argv[0] the command's name) into a, with lib/options.h; what no
 * option sets keeps the value a held (the caller's defaults).  -1 to run,
 * else the exit status (EXIT_USAGE after a message on stderr, or 0 after
 * --help).  free_run_args frees what it allocated, whatever it returned.
 */
int parse_run_args(int argc, char **argv, struct run_args *a);
void free_run_args(struct run_args *a);

#endif
