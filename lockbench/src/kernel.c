/*
 * kernel.c - `lockbench kernel`: its subcommands, `build` (kbuild.c) and
 * `run` (kernel_run.c).
 */
#include <stdio.h>
#include <string.h>

#include "kbuild.h"
#include "kernel.h"
#include "kernel_cli.h"
#include "kernel_run.h"

#define EXIT_USAGE 2

static const char *prog = "lockbench kernel";

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
		return kernel_run_main(argc - 1, argv + 1);
	fprintf(stderr, "%s: unknown subcommand '%s' (valid: build, run)\n", prog, sub);
	return EXIT_USAGE;
}
