/*
 * kernel_guest.h - what `lockbench kernel run` knows of its guest
 * (kernel_guest.c): pure functions, unit-tested in
 * lockbench/tests/test_kernel_bands.c.
 */
#ifndef LOCKBENCH_KERNEL_GUEST_H
#define LOCKBENCH_KERNEL_GUEST_H

#include <stdbool.h>
#include <stddef.h>

#include "report.h"
#include "result.h"
#include "suite.h"

/* Copy every run of src (a loaded document) into dst. */
void kernel_copy_runs(struct lb_result *dst, const struct lb_result *src);

/*
 * A users suite's rows by band (report_run_bands) for one workload, from
 * the run's document: the figure at each band's user count, "lockup" for a
 * point or a band's boot that locked up, "not run" for a band whose boot
 * never started (booted[i] false).  *unit is the figure's unit (NULL when
 * none).  Returns how many of the workload's runs it found.
 */
size_t kernel_band_rows(const struct lb_result *res, const char *workload,
                        const struct suite_band *bands, size_t nbands, const bool *booted,
                        struct report_band_row *rows, const char **unit);

/*
 * The guest kernel's own lockup thresholds for one lockbench boot.  The
 * defaults (RCU stall 21 s: CONFIG_RCU_CPU_STALL_TIMEOUT of the fragment;
 * soft lockup 2 x watchdog_thresh 10 s) are meant for real CPUs.  Under TCG
 * the guest's CPU runs as fast as the host lets qemu run it, so thousands of
 * users on a loaded host can hold a CPU in the kernel past 21 s of guest time
 * without anything being stuck: an emulated boot gets the longest the kernel
 * takes (6.1 clamps rcu_cpu_stall_timeout to 3..300 s, its sysctl
 * watchdog_thresh to 0..60), each within a third of the boot's deadline, so
 * that a CPU that is really stuck is still reported, with its call trace, well
 * before the boot ends.  hung_s is the hung-task timeout the boot uses; with
 * scale_hung (every lockbench boot's default, not a --hung-task-s) an
 * emulated boot's is a third of the deadline when that is longer: 2000
 * processes sharing one file mapping's i_mmap_rwsem on two emulated CPUs of
 * a loaded host kept a waiter in D state past 120 s, and an exiting thread
 * of a few users waited past 3 s on a debug kernel at host load 15.
 */
#define KERNEL_RCU_STALL_S     21
#define KERNEL_RCU_STALL_MAX_S 300
#define KERNEL_WATCHDOG_THRESH 10
#define KERNEL_WATCHDOG_MAX    60
struct kernel_thresholds {
	bool scaled;         /* emulated: the values below go on the command line */
	int rcu_stall_s;     /* rcupdate.rcu_cpu_stall_timeout */
	int watchdog_thresh; /* watchdog_thresh: a soft lockup after twice this */
	int hung_task_s;     /* sysctl.kernel.hung_task_timeout_secs */
};
void kernel_guest_thresholds(bool emulated, double deadline_s, int hung_s, bool scale_hung,
                             struct kernel_thresholds *t);
/* The kernel arguments that set them ("" when not scaled). */
void kernel_thresholds_cmdline(const struct kernel_thresholds *t, char *out, size_t len);
/* "RCU stall 300 s, soft lockup 120 s, hung task 120 s" */
void kernel_thresholds_say(const struct kernel_thresholds *t, char *out, size_t len);

/*
 * locklab.progress_s of a lockbench boot: the guest lockbench's
 * --progress-s, a fifth of the boot's no-progress limit deadline_s, at
 * most KERNEL_PROGRESS_MAX_S, at least 1 s.  One aim7-mix point of 2000
 * users under TCG runs past 800 s without a table line; its progress
 * lines keep the boot alive while its users' jobs advance.
 */
#define KERNEL_PROGRESS_MAX_S 60
int kernel_progress_s(double deadline_s);

/*
 * Whether a lockbench boot gets the users suite's allowances for many users
 * (a hung-task timeout of minutes, a 5 s stall, 1536 MB, a 1500 s limit
 * without progress unless a band or --timeout-s sets one): the users suite,
 * or a largest user count past KERNEL_MANY_USERS in any suite.  They follow
 * the count, not the suite's name: `--users 2000` on the default suite had a
 * 3 s hung-task timeout and 512 MB, and under TCG its aim7 users' waits on a
 * kernel mutex (2000 of them, seconds each in D state) ended the boot in 43 s
 * as a hung-task lockup.  users_max 0: the suite's own counts.
 */
#define KERNEL_MANY_USERS 256
bool kernel_many_users(const char *suite, int users_max);

/*
 * A lockbench boot that locked up before the guest's document came.  The
 * points the guest's table on the console shows finished go into res
 * (console_guest_table_runs), and the lockup (kind, the kernel's line msg,
 * its stacks) goes to the point that was running: the guest plan's point
 * after the last one on the console, for the suite, workloads, locks and
 * users (a list, or NULL for the suite's) the boot gave the guest.  When no
 * point can be told (the guest lockbench had not started, or it had
 * finished every point), the lockup is a run "lockbench-guest" / "kernel"
 * with param workloads, and users when band_users > 0.  Returns the number
 * of finished points recovered; *running is set to that point's run or NULL.
 */
struct kernel_guest_plan {
	const char *suite, *workloads, *locks, *users;
	int band_users;
};
size_t kernel_recover_boot(struct lb_result *res, char **lines, size_t n,
                           const struct kernel_guest_plan *g, const char *kind, const char *msg,
                           const char *stacks, const struct lb_run **running);

#endif
