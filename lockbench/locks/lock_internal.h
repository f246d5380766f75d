/*
 * lock_internal.h - helpers shared by the lock families; not part of the
 * public interface (lock.h).
 *
 * cpu_relax() is the spin-loop hint, futex_wait/futex_wake wrap futex(2) on
 * private futexes, struct lb_spinlock is the small internal spinlock that
 * guards wait lists and parking buckets, struct lb_spin_clock bounds
 * optimistic spinning in time, and lb_thread_id() gives each live thread a
 * small index for locks that name a thread in a few bits (qspinlock tail, OSQ).
 */
#ifndef LOCKBENCH_LOCK_INTERNAL_H
#define LOCKBENCH_LOCK_INTERNAL_H

#include <linux/futex.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "lock.h"

/* Bytes to allocate for a lock whose state is type: whole cache lines. */
#define LB_LOCK_SIZE(type) ((sizeof(type) + LB_CACHELINE - 1) / LB_CACHELINE * LB_CACHELINE)

/*
 * How long a spinner keeps spinning before it assumes the owner is not
 * running and goes to sleep: about one futex sleep/wake round trip.
 */
#define LB_SPIN_BUDGET_NS 5000

/* Spins on a busy lb_spinlock before the waiter yields the CPU. */
#define LB_SPINLOCK_SPINS 128

/* Live threads that can hold a small thread index at once. */
#define LB_MAX_THREADS 4096

/* Spin-loop hint: lets the sibling hyperthread run and saves power. */
static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ volatile("yield" ::: "memory");
#else
	__asm__ volatile("" ::: "memory");
#endif
}

/* Sleep while *word == val (returns at once when it differs, or spuriously). */
static inline void futex_wait(atomic_uint *word, unsigned int val)
{
	syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
}

/*
 * Wake up to nr threads sleeping on word.  Waking an address nobody sleeps
 * on, or one whose owner has gone, is harmless: every sleeper in lockbench
 * re-checks its condition after futex_wait returns.
 */
static inline void futex_wake(atomic_uint *word, int nr)
{
	syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, nr, NULL, NULL, 0);
}

/*
 * The small spinlock the kernel calls wait_lock.  The kernel disables
 * preemption while it holds one; userspace cannot, so a waiter that has spun
 * LB_SPINLOCK_SPINS times yields in case the holder was preempted.
 */
struct lb_spinlock {
	atomic_uint locked;
};

static inline void lb_spin_lock(struct lb_spinlock *l)
{
	unsigned int spins = 0;

	/* acquire: pairs with the release in lb_spin_unlock */
	while (atomic_exchange_explicit(&l->locked, 1, memory_order_acquire)) {
		while (atomic_load_explicit(&l->locked, memory_order_relaxed)) {
			if (++spins < LB_SPINLOCK_SPINS) {
				cpu_relax();
			} else {
				spins = 0;
				sched_yield();
			}
		}
	}
}

static inline void lb_spin_unlock(struct lb_spinlock *l)
{
	atomic_store_explicit(&l->locked, 0, memory_order_release);
}

static inline uint64_t lb_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * A deadline for one spell of optimistic spinning.  Reading the clock costs
 * about 20 ns (vDSO), so it is read only every 8th check.
 */
struct lb_spin_clock {
	uint64_t deadline;
	unsigned int checks;
};

static inline void lb_spin_clock_start(struct lb_spin_clock *c, uint64_t budget_ns)
{
	c->deadline = lb_now_ns() + budget_ns;
	c->checks = 0;
}

static inline bool lb_spin_clock_expired(struct lb_spin_clock *c)
{
	if (++c->checks & 7)
		return false;
	return lb_now_ns() >= c->deadline;
}

/*
 * This thread's index in [0, LB_MAX_THREADS), stable for the thread's life
 * and reused after it exits; -1 when LB_MAX_THREADS threads already hold one.
 */
int lb_thread_id(void);

extern const struct lock_ops lock_pthread_ops;
extern const struct lock_ops lock_pthread_adaptive_ops;
extern const struct lock_ops lock_tas_ops;
extern const struct lock_ops lock_ttas_ops;
extern const struct lock_ops lock_ticket_ops;
extern const struct lock_ops lock_mcs_ops;
extern const struct lock_ops lock_clh_ops;
extern const struct lock_ops lock_qspinlock_ops;
extern const struct lock_ops lock_futex3_ops;
extern const struct lock_ops lock_kmutex2009_ops;
extern const struct lock_ops lock_kmutex_ops;
extern const struct lock_ops lock_parking_ops;
#ifdef LB_TEST_LOCKS
extern const struct lock_ops lock_broken_lostwake_ops;
extern const struct lock_ops lock_delay_pthread_ops;
extern const struct lock_ops lock_kmutex_woken_steal_ops;
#endif

#endif
