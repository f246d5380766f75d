/*
 * disturb.h - what disturbed a sample: hypervisor steal, run-queue delay,
 * time lost to anything else, involuntary context switches and CPU
 * migrations of the measuring thread (struct lb_disturb in result.h).
 *
 * A measuring thread takes a mark before and after its sample, on itself
 * (the figures are the calling thread's own: /proc/thread-self); the
 * difference is the sample's disturbance.  A file that cannot be read
 * leaves its figures 0, so a machine without schedstat only records less.
 */
#ifndef LOCKBENCH_DISTURB_H
#define LOCKBENCH_DISTURB_H

#include <stdbool.h>
#include <stdint.h>

#include "result.h"

/*
 * The default limit, in percent of a sample's wall time the measuring
 * thread wanted to run and did not (lost_pct, which includes steal and
 * run-queue delay): 0, record only.  Measured on the developers' 2-vCPU
 * machine while it was shared (load 9 to 39; make bench-duet, 2026-12-01):
 * samples lost a median of 77-81% of their time, yet lost_pct did not
 * predict an uncontended sample's figure (correlation -0.08 to +0.06 over
 * 360 samples per lock: the median over 256-pair batches already drops the
 * batches a preemption hits), and repeating samples above 5% moved the
 * A/A spread of paired rounds from 2.66% to 2.13% in one run and from
 * 2.98% to 3.30% in another, for up to 3x the time.  --disturb-limit turns
 * it on where it helps.
 */
#define DISTURB_LIMIT_DEFAULT 0.0
/* Times one sample may be taken again before the last try is kept. */
#define DISTURB_RETRIES_DEFAULT 2 /* --help says [2] */

struct disturb_mark {
	uint64_t wall_ns;
	uint64_t run_ns;        /* schedstat 1st field: time on a CPU */
	uint64_t delay_ns;      /* schedstat 2nd field: time runnable, waiting */
	uint64_t steal_jiffies; /* /proc/stat of cpu */
	uint64_t total_jiffies;
	long nivcsw;     /* getrusage(RUSAGE_THREAD) */
	long migrations; /* /proc/thread-self/sched se.nr_migrations; 0 when absent */
	int cpu;         /* where the thread was at the first mark */
};

/* Take a mark on the calling thread; cpu < 0 picks the current CPU. */
void disturb_mark(struct disturb_mark *m, int cpu);

/* The disturbance between two marks of one thread. */
void disturb_between(const struct disturb_mark *a, const struct disturb_mark *b,
                     struct lb_disturb *out);

/*
 * Whether a sample with this disturbance is taken again: its lost share
 * (or steal plus delay when the run time could not be read) passes
 * limit_pct.  limit_pct <= 0 never repeats (recording only).
 */
bool disturb_exceeds(const struct lb_disturb *d, double limit_pct);

#endif
