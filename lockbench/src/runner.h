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
 * The stall time grows with the thread count the way seed 004's AIM7 alarm
 * grows with the users: stall_ms * (1 + log10(threads)), and five times
 * that on an emulated CPU (the kernel guest under TCG, where a loaded host
 * leaves a vCPU unscheduled for seconds).  The stall clock counts only the
 * time the watchdog was awake to look: a gap between two of its looks
 * longer than RUNNER_STALL_CREDIT_MS (the whole machine stopped, so did
 * the workload) counts as that much.
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
};

#define RUNNER_OPTS_DEFAULT                                                                        \
	{                                                                                          \
		2000, 0, true, false                                                               \
	}

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
 * Run the point and append its run to res (ops NULL for kernel workloads:
 * lock "kernel").  Returns 0 when a run was recorded, completed or locked
 * up; -1 with a reason in err when the workload could not run at all (bad
 * parameter, no directory, fork failed), and nothing is appended.
 */
int runner_run_point(const struct workload *w, const struct lock_ops *ops,
                     const struct wl_params *p, const struct runner_opts *o, struct lb_result *res,
                     char *err, size_t errlen);

#endif
