/*
 * lockstep.h - two lockbench processes (base and patched) that take turns
 * on one CPU, a slice at a time, for single-thread samples.
 *
 * This machine kind (shared vCPUs) has modes: the same lock/unlock pair
 * costs 18.2 ns for a while, then 21-23 ns, switching within tens of ms to
 * seconds.  Two sides timed one after the other land in different modes
 * (paired A/A spread 4.1% on 30 ms samples); two sides that alternate every
 * LOCKSTEP_SLICE_US on the same CPU see the same modes (0.13%;
 * docs/measured/pairing.md).  The turn is a word in a shared file (the agent creates it and
 * gives both sandboxes the one path): each side waits on it with a futex,
 * times only its own slices, and passes it.  A side that is done says so,
 * and the other then runs alone; a side that does not pass the turn within
 * LOCKSTEP_WAIT_MS fails the run (the agent then measures one side at a
 * time).  The other side is untrusted: anything it writes into the file is
 * only a turn number or a done flag, and every wait is bounded.
 */
#ifndef LOCKBENCH_LOCKSTEP_H
#define LOCKBENCH_LOCKSTEP_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "result.h"

/*
 * A slice: long enough that the switch between the sides is a small share
 * of it, short enough that a mode rarely changes within a pair of turns
 * (A/A paired spread 0.13% at 0.5 ms, 0.16% at 0.1 ms, 2.7% at 2 ms).
 */
#define LOCKSTEP_SLICE_US ((int)(LB_LOCKSTEP_SLICE_MS * 1000))
/*
 * A turn of hot (workload_lock.c, hot_stepped): 1 ms, so that waking and
 * parking its threads (tens of us on this VM, up to 2 threads a CPU) is a
 * small share of it; longer past that (lockstep_hot_slice_us).
 */
#define LOCKSTEP_HOT_SLICE_US ((int)(LB_LOCKSTEP_HOT_SLICE_MS * 1000))
/* The longest turn of an oversubscribed hot point (lockstep_hot_slice_us). */
#define LOCKSTEP_HOT_SLICE_MAX_US ((int)(LB_LOCKSTEP_HOT_SLICE_MAX_MS * 1000))
/* How long a side waits for its turn before it gives up. */
#define LOCKSTEP_WAIT_MS 5000
/*
 * How long hot waits for its own threads to park after a turn: well inside
 * LOCKSTEP_WAIT_MS, so the side whose threads hang says so before its
 * partner's wait for the turn ends (and blames the wrong side).
 */
#define LOCKSTEP_PARK_MS 2000

struct lockstep;

/* Open (creating it if need be) the shared turn file at path as side 0 or 1. */
struct lockstep *lockstep_open(const char *path, int side, char *err, size_t errlen);
/*
 * Wait for this side's turn: 0 when it came, 1 when the other side is done
 * or writes no turn number (run alone from here), -1 (err set) when it did
 * not come in time; after that every wait fails at once.  beat (may be
 * NULL) is bumped while waiting: the runner's stall watch sees a side that
 * waits for the other, not a lock that hangs.
 */
int lockstep_wait(struct lockstep *ls, atomic_ulong *beat, char *err, size_t errlen);
/* Give the turn to the other side. */
void lockstep_pass(struct lockstep *ls);
/*
 * The turn of a hot point of threads workers on ncpus CPUs, in us:
 * LOCKSTEP_HOT_SLICE_US while the threads are at most twice the CPUs;
 * past that, LOCKSTEP_HOT_SLICE_US a thread per CPU, at most
 * LOCKSTEP_HOT_SLICE_MAX_US (8 threads on 2 CPUs: 4 ms).  Parking more
 * threads than CPUs takes time slices, not tens of us: measured on this VM
 * (2 CPUs, load 7-8, pthread and kmutex, same binary both sides), quick's
 * hot at 8 threads took 13.5-14.9 s a round (both sides) in turns of 1 ms,
 * 7.6 s in turns of 2 ms and 4.4-4.5 s in turns of 4 ms; the sd of the
 * per-sample log(A/B) went from 24-28% to 32-34% (kmutex) and from 4.3% to
 * 6.6-8.3% (pthread).  At 4 threads turns of 2 ms were faster (6.0 -> 3.9 s)
 * at about the same spread (kmutex sd 13.6 -> 14.6%, n=12), but 4 threads
 * is hot10's row, measured at N=50 in turns of 1 ms: it keeps them.
 */
int lockstep_hot_slice_us(int threads, int ncpus);
/*
 * This side failed mid-point and takes no more turns: it keeps the turn
 * (the other side's wait times out, and both runs fail) and its own later
 * waits fail at once, so the two sides never run different points in turns.
 */
void lockstep_stop(struct lockstep *ls);

/*
 * One slice of a side's work, run in its turn: t0 is the instant the turn
 * came (lb_now_ns).  0, or -1 with err set.
 */
typedef int lockstep_slice_fn(void *arg, uint64_t t0, char *err, size_t errlen);
/*
 * Take n turns (at least one), the one way both stepped workloads take them
 * (workload_lock.c: unc_sample, hot_stepped): wait for this side's turn
 * (lockstep_wait, beat as there), run slice(arg, t0), pass the turn.  ls
 * NULL: the slices run one after the other, no turns.  Returns 0 with the
 * ns spent waiting for the turns in *waited (may be NULL); -1 with err set
 * when a turn did not come, or when a slice failed (then lockstep_stop).
 */
int lockstep_take_turns(struct lockstep *ls, long n, atomic_ulong *beat, lockstep_slice_fn *slice,
                        void *arg, uint64_t *waited, char *err, size_t errlen);
/* This side is done: the other runs alone from now on. */
void lockstep_done(struct lockstep *ls);
/* How many turns this side took (all points, all children), and how many it ran alone. */
long lockstep_turns(const struct lockstep *ls, long *alone);
void lockstep_close(struct lockstep *ls);

#endif
