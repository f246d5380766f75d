/*
 * workload.h - lockbench workloads.  A workload runs inside a child process
 * that the runner forks for each point (workload x lock x parameters), so a
 * lock that hangs or crashes takes only its own point with it.  The
 * workload publishes progress through shared memory (struct wl_shared) for
 * the runner's watchdog and fills one lb_run with its metrics.
 */
#ifndef LOCKBENCH_WORKLOAD_H
#define LOCKBENCH_WORKLOAD_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "lock.h"
#include "result.h"

/* AIM7's largest band of users in the mutex rewrite's reports ends at 2000 */
#define WL_MAX_THREADS 2048

/*
 * `lockbench LB_AIM7_EXEC_ARG` exits 0 at once: what an aim7-mix job execs
 * where there is no /bin/true (the kernel guest).
 */
#define LB_AIM7_EXEC_ARG "aim7-exec"

/*
 * `lockbench LB_AIM7_USER_ARG DIR USER USERS FD`: one aim7-mix user in its
 * own address space (workload_kernel.c says why); main() hands it argv
 * from DIR on.  Returns the exit status.
 */
#define LB_AIM7_USER_ARG "aim7-user"
int wl_aim7_user_main(int argc, char **argv);

/* One counter per thread or process, each on its own cache line. */
struct wl_counter {
	_Alignas(LB_CACHELINE) atomic_ulong n;
};

/* Shared between the runner and the forked child (MAP_SHARED). */
struct wl_shared {
	struct wl_counter progress[WL_MAX_THREADS + 1]; /* last slot: the coordinator */
	atomic_int phase;                               /* enum wl_phase, for messages */
	/*
	 * What the coordinator gave up waiting for, when the child may then hang
	 * (hot in lockstep: workers that did not stop); a lockup's message ends
	 * with it.  Written once by the child, read after it is gone.
	 */
	char note[192];
	/*
	 * The signal the child died of (SIGSEGV, SIGABRT ...): its handler sets
	 * it and waits to be killed, so that the runner takes its stacks first.
	 */
	atomic_int crash_signal;
};

enum wl_phase { WL_PHASE_SETUP, WL_PHASE_MEASURE, WL_PHASE_STOPPING, WL_PHASE_DONE };

/* Everything a workload may be asked to vary. */
struct wl_params {
	int threads;       /* threads, or processes ("users") for aim7-mix */
	int duration_ms;   /* per repetition */
	int repeat;        /* repetitions = samples */
	int cs_loops;      /* work inside the critical section */
	int outside_loops; /* work between acquisitions */
	int nlocks;        /* many-locks */
	int hold_us;       /* long-hold */
	int wake_batch;    /* futex-wake: waiters woken per call */
	int futexes;       /* futex-hash: futex words per thread */
	const char *dir;   /* vfs-creat-unlink, aim7-mix: where files go */
	/*
	 * Single-thread samples whose disturbance passes this share of their
	 * wall time (disturb.h) are taken again, up to disturb_retries times
	 * each; 0 records the disturbance and repeats nothing.
	 */
	double disturb_limit_pct;
	int disturb_retries;
	/*
	 * ABBA runs (--abba-side): two processes, base and patched, share one
	 * timeline of slot_ms slots from slot_at_ns (CLOCK_REALTIME).  Sample k
	 * of the run (slot_first + the repetition) is pair k: it takes slot 2k
	 * when k % 2 == slot_side, else 2k + 1, so the sides go A B B A A B ...
	 * per single-thread sample.  slot_ms 0: no slots.
	 */
	long long slot_at_ns;
	int slot_ms;
	int slot_side;
	int slot_first;
	/* lockstep runs (--lockstep): single-thread samples take turns with the other side */
	struct lockstep *lockstep;
};

/* An ABBA slot is a sample's duration and this guard, for the sample's start and end. */
#define LB_ABBA_GUARD_MS 20

/* The CLOCK_REALTIME instant at which sample r of a slotted point starts. */
long long wl_slot_start_ns(const struct wl_params *p, int r);

struct workload {
	const char *name;
	const char *description;
	bool uses_lock; /* false: kernel workloads, run once with lock "kernel" */
	bool hidden;    /* not listed (the validate torture) */
	/*
	 * Run in the child.  Fills run (metrics, samples, per-thread figures);
	 * returns 0, or -1 with a reason in err (bad parameter, no memory).
	 */
	int (*run)(const struct lock_ops *ops, const struct wl_params *p, struct wl_shared *sh,
	           struct lb_run *run, char *err, size_t errlen);
};

const struct workload *workload_find(const char *name);
/* NULL-terminated; hidden workloads included. */
const struct workload *const *workload_all(void);

/* Record the parameters a workload uses in run->params. */
void workload_record_params(const struct workload *w, const struct wl_params *p,
                            struct lb_run *run);

#endif
