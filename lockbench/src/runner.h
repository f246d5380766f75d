/*
 * runner.h - runs one point (workload x lock x parameters) in a child
 * process under a watchdog.
 *
 * The watchdog reads the child's progress counters; when no thread makes
 * progress for the stall time, or the run passes its deadline, the point is
 * a lockup: every thread's stack is captured (gdb in batch mode, plus the
 * kernel's view from /proc), the child's process group is killed, and the
 * run is recorded with its lockup so the rest of the suite goes on.
 *
 * The stall time grows with the thread count the way the AIM7 alarm in the
 * mutex rewrite's review (LKML, 2016) grows with the users:
 * stall_ms * (1 + log10(threads)), and five times that on an emulated CPU
 * (the kernel guest under TCG, where a loaded host leaves a vCPU
 * unscheduled for seconds).  The stall clock counts only the time the
 * watchdog was awake to look: a gap between two of its looks longer than
 * RUNNER_STALL_CREDIT_MS (the whole machine stopped, so did the workload)
 * counts as that much.
 */
#ifndef LOCKBENCH_RUNNER_H
#define LOCKBENCH_RUNNER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "result.h"
#include "workload.h"

struct runner_opts {
	int stall_ms;        /* base stall time, default 2000 */
	int deadline_ms;     /* 0: derived from duration, repeat and threads */
	bool capture_stacks; /* default true */
	bool emulated;       /* an emulated CPU (TCG): the stall time is x RUNNER_EMULATED_STALL */
	int progress_s;      /* > 0: a progress line on stderr every this many s (below); 0 off */
};

#define RUNNER_OPTS_DEFAULT                                                                        \
	{                                                                                          \
		2000, 0, true, false, 0                                                            \
	}

#define RUNNER_PROGRESS_S_MAX 86400

#define RUNNER_EMULATED_STALL  5
#define RUNNER_STALL_CREDIT_MS 250

/*
 * The default deadline of a point: 30 s + 3 x duration x repeat, plus this
 * many ms per thread (user) and repetition for starting and ending them
 * (x RUNNER_EMULATED_STALL on an emulated CPU).
 */
#define RUNNER_MS_PER_USER 100

/* Stall time for a thread count, in ms. */
int runner_stall_ms(const struct runner_opts *o, int threads);

/* What a gap of gap_ns between two looks of the watchdog adds to the stall clock. */
uint64_t runner_stall_credit_ns(uint64_t gap_ns);

/*
 * Progress lines.  With progress_s > 0 the watchdog looks every progress_s
 * seconds and writes one line to stderr when the workers' counters grew
 * since its previous look (a hung point prints nothing):
 *
 *   lockbench: <workload> <lock> <N> threads|users: <ops> operations so far (<T> s)
 *
 * <ops> counts what the progress counters counted since the start of the
 * point, counter by counter (operations, or aim7-mix's job steps, plus the
 * coordinator's own steps: threads started and joined, repetitions), T the
 * seconds since the start.  The host side of a kernel boot takes any "lockbench: " line
 * on the console as progress, so a long point keeps its boot alive.
 */

/*
 * True when a progress line is due at a look at now_ns: progress_s > 0,
 * progress_s seconds have passed since the previous look (last_look_ns,
 * the start of the point at first) and ops grew past ops_at_last_look.
 * The caller moves its look time to now_ns whenever the period passed,
 * line or not.
 */
bool runner_progress_due(int progress_s, uint64_t now_ns, uint64_t last_look_ns, unsigned long ops,
                         unsigned long ops_at_last_look);

/*
 * The period passed: progress_s > 0 and progress_s seconds since
 * last_look_ns.  runner_progress_due is this and "ops grew".
 */
bool runner_progress_look(int progress_s, uint64_t now_ns, uint64_t last_look_ns);

/*
 * Format the progress line (with its newline) into buf: workload and lock
 * names (lock NULL: "kernel"), the thread count (users for aim7-mix), ops
 * and the ns since the point started.  Returns snprintf's value.
 */
int runner_progress_format(char *buf, size_t len, const char *workload, const char *lock,
                           int threads, unsigned long ops, uint64_t elapsed_ns);

/*
 * Run the point and append its run to res (ops NULL for kernel workloads:
 * lock "kernel").  Returns 0 when a run was recorded, completed or locked
 * up; -1 with a reason in err when the workload could not run at all (bad
 * parameter, no directory, fork failed), and nothing is appended.
 */
int runner_run_point(const struct workload *w, const struct lock_ops *ops,
                     const struct wl_params *p, const struct runner_opts *o, struct lb_result *res,
                     char *err, size_t errlen);

#endif
