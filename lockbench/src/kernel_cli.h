/*
 * kernel_cli.h - the command line that `lockbench kernel build` and `run`
 * share (kernel_cli.c).
 */
#ifndef LOCKBENCH_KERNEL_CLI_H
#define LOCKBENCH_KERNEL_CLI_H

#include <stdbool.h>
#include <stdio.h>
/* "base", "patched" or "patch-K" (K >= 1). */
bool kernel_valid_variant(const char *v);
/* Says "lockbench kernel: <fmt>" and where the help is; returns 2. */
int kernel_usage(const char *fmt, const char *arg);
void kernel_print_help(FILE *f);
/*
 * The option handling build and run share.
 * kernel_opt_variant: --variant ARG into *variant (borrowed from ARG).
 * kernel_opt_rest: after getopt, any argument left is bad usage.
 * Both return true when parsing must stop, with *rc the exit status; false
 * leaves *rc as it was.
 * kernel_opt_other: for getopt's c that no case took: help (c == help)
 * prints the help and returns 0, anything else is bad usage (2).
 */
bool kernel_opt_variant(const char *arg, const char **variant, int *rc);
bool kernel_opt_rest(int argc, char **argv, int *rc);
int kernel_opt_other(int c, int help);

#endif
