/*
 * kernel.h - `lockbench kernel`: build a kernel tree with the project's
 * config fragment, boot it under qemu with an initramfs holding a static
 * lockbench, run locktorture and the futex and VFS workloads inside, and
 * read the serial console for results and lockups.  docs/kernel.md says
 * how to use it.
 */
#ifndef LOCKBENCH_KERNEL_H
#define LOCKBENCH_KERNEL_H

/*
 * argv[0] is "kernel"; argv[1] is the subcommand (build or run).  Returns
 * the process exit status: 0 ok, 1 failure (build failed, boot gave no
 * result), 2 bad usage, 3 at least one boot locked up.
 */
int kernel_main(int argc, char **argv);

/* For kbuild.c: the shared command line. */
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

/*
 * A seeds suite's rows by band (report_run_bands) for one workload, from
 * the run's document: the figure at each band's user count, "lockup" for a
 * point or a band's boot that locked up, "not run" for a band whose boot
 * never started (booted[i] false).  *unit is the figure's unit (NULL when
 * none).  Returns how many of the workload's runs it found.
 */
#include "report.h"
#include "result.h"
#include "suite.h"
size_t kernel_band_rows(const struct lb_result *res, const char *workload,
                        const struct suite_band *bands, size_t nbands, const bool *booted,
                        struct report_band_row *rows, const char **unit);

#endif
