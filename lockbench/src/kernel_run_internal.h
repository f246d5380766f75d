/*
 * kernel_run_internal.h - shared by the files of `lockbench kernel run`
 * only; the public interface is kernel_run.h.
 *
 * kernel_run.c runs the boots (the locktorture ones itself), prints their
 * rows and writes the result; kernel_run_args.c reads the options;
 * kernel_run_lockbench.c runs the static lockbench's boots.  Each
 * function's full contract is the comment above its definition.
 */
#ifndef LOCKLAB_LOCKBENCH_KERNEL_RUN_INTERNAL_H
#define LOCKLAB_LOCKBENCH_KERNEL_RUN_INTERNAL_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "boot.h"
#include "result.h"
#include "strutil.h"
#include "suite.h"

#define EXIT_LOCKUP 3

struct run_args {
	const char *kernel, *suite, *json, *variant, *accel_name, *guest_dir, *console_dir,
	    *build_json, *workloads, *locks, *users, *extra;
	int *writers, nwriters;
	char **types;
	int ntypes;
	int round, timeout_s, torture_s, hung_s, cpus, stall_ms;
	int users_max; /* the largest of --users, 0 without it */
	int cap_x;     /* a lockbench boot's hard cap, in deadlines */
	int budget_s;  /* the whole run's time (the agent's limit), 0: none */
	bool no_torture, no_lockbench, hung_given;
	bool debug; /* a debug kernel: lockups and splats only, no figures */
};

/* What the boots of one `lockbench kernel run` share (cmd_run). */
struct run_state {
	const struct run_args *a;
	struct lb_result res, guest;
	struct boot b;
	enum accel accel;
	FILE *tbl;
	char initrd[PATH_MAX], common[512];
	/* under TCG, the thresholds of the guest kernel's lockup detectors, per boot */
	struct strutil_buf emulated;
	int lockups, failures, nboots, nplanned;
	size_t splats;
	bool qemu_down;
	bool torture_said; /* the locktorture boots' thresholds are in emulated */
	double t_all;
};

/* ---- kernel_run.c ---- */

bool valid_torture_type(const char *t);
int save_console(const char *dir, const char *name, const struct strutil_buf *c);
size_t note_splats(struct lb_result *res, char **lines, size_t n, const char *boot, FILE *tbl);
void print_run_line(FILE *tbl, const struct lb_run *run);

/* ---- kernel_run_args.c ---- */

int run_parse(int argc, char **argv, struct run_args *a);

/* ---- kernel_run_lockbench.c ---- */

bool run_lockbench_boot(struct run_state *s, const struct suite_band *band);
void boot_cap(struct run_state *s);
/* How boot b ended, as console_detect_lockup reads it. */
struct console_end boot_console_end(const struct boot *b);

#endif
