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
/* --variant's value: 0, or 2 after kernel_usage says why it is bad. */
int kernel_check_variant(const char *v);

struct opt_table;

/*
 * build's or run's options: t (lib/options.h; its one command is --help)
 * read from the subcommand's argv (argv[0] "build" or "run") with
 * lb_opts_parse (args.h).  -1 to go on, else the exit status: 0 after the
 * help on stdout, 2 after a message on stderr.
 */
int kernel_opts(const struct opt_table *t, int argc, char **argv);

#endif
