/*
 * broken.c - locks that are wrong on purpose, to prove that the harness
 * (watchdog, lockup report, `Fail:` counts) catches what it claims to.
 * Compiled into the test build only (LB_TEST_LOCKS); elsewhere this file is
 * empty.
 *
 * `broken-lostwake` is futex3 (Drepper's mutex #3) with one bug: on every
 * BROKEN_LOSE_EVERY-th contended unlock it "forgets" both halves of the slow
 * path, leaving the word at 2 (locked, waiters) with no owner and waking
 * nobody.  Every thread that wants the lock then exchanges in 2 and sleeps
 * in FUTEX_WAIT forever: a genuine lost-wakeup lockup, no thread makes
 * progress.  With three or more threads and short holds it hangs within a
 * fraction of a second.
 */
#ifdef LB_TEST_LOCKS

#include "lock_internal.h"

#define BROKEN_LOSE_EVERY 64

struct broken_lock {
	atomic_uint word;
	unsigned int contended_unlocks; /* only the holder touches it */
};

static int broken_init(void *p)
{
	struct broken_lock *lock = p;

	atomic_init(&lock->word, 0);
	lock->contended_unlocks = 0;
	return 0;
}

/*
 * The word comes first, as in struct futex3_lock: futex3's own code takes
 * and releases it, so the one difference is the dropped wakeup below.
 */
static void broken_lock(void *p)
{
	struct broken_lock *lock = p;

	lock_futex3_ops.lock(&lock->word);
}

static bool broken_trylock(void *p)
{
	struct broken_lock *lock = p;

	return lock_futex3_ops.trylock(&lock->word);
}

static void broken_unlock(void *p)
{
	struct broken_lock *lock = p;

	if (atomic_load_explicit(&lock->word, memory_order_relaxed) == 2 &&
	    ++lock->contended_unlocks % BROKEN_LOSE_EVERY == 0)
		return; /* the bug: stays "locked with waiters", nobody is woken */
	lock_futex3_ops.unlock(&lock->word);
}

static void broken_destroy(void *p)
{
}

const struct lock_ops lock_broken_lostwake_ops = {
    .name = "broken-lostwake",
    .description = "BROKEN ON PURPOSE (test only): futex mutex that loses a wakeup and locks up",
    .size = LB_LOCK_SIZE(struct broken_lock),
    .sleeps = true,
    .test_only = true,
    .init = broken_init,
    .lock = broken_lock,
    .trylock = broken_trylock,
    .unlock = broken_unlock,
    .destroy = broken_destroy,
};

#endif /* LB_TEST_LOCKS */

#ifdef LB_TEST_LOCKS
/*
 * `delay-pthread` is not broken: it is glibc's default mutex plus a fixed
 * amount of extra work inside lock(), LOCKBENCH_DELAY_LOOPS iterations read
 * once from the environment (0 when unset).  Two runs of the same binary with
 * different delays are a real, calibrated slowdown of one lock under one
 * name, which is what `make bench-verdicts` needs for its A/B comparisons.
 */
#include <pthread.h>
#include <stdlib.h>

static unsigned env_knob(atomic_int *cached, const char *name)
{
	int v = atomic_load_explicit(cached, memory_order_relaxed);
	if (v < 0) {
		const char *s = getenv(name);
		v = s ? atoi(s) : 0;
		atomic_store_explicit(cached, v < 0 ? 0 : v, memory_order_relaxed);
	}
	return (unsigned)v;
}

static unsigned delay_loops(void)
{
	static atomic_int cached = -1;
	return env_knob(&cached, "LOCKBENCH_DELAY_LOOPS");
}

static unsigned hold_loops(void)
{
	static atomic_int cached = -1;
	return env_knob(&cached, "LOCKBENCH_HOLD_LOOPS");
}

static int delay_init(void *p)
{
	return pthread_mutex_init(p, NULL);
}

/*
 * The work is extra atomic operations on a word of the lock's own line:
 * LOCKBENCH_DELAY_LOOPS / 256 of them a call on average (n of every 256
 * calls take one more than n / 256), so the knob is linear past 256 too:
 * hot at 2 threads lost only 5.8% with one atomic in every call.  It is
 * the cost of the lock's own kind of work, so it moves with the machine's
 * modes as the lock's atomics do.  (Loops of plain instructions were
 * hidden behind the atomics' latency in some modes of this machine: the
 * same 6 loops cost 0.3% in one comparison and 3% in the next, so they
 * were no fixed slowdown.)
 */
/*
 * LOCKBENCH_HOLD_LOOPS is the other knob: a longer hold, for contended
 * points.  The extra atomics above are no loss there: on a quiet host they
 * made hot at 2 threads 6.2% faster (they keep the line with the holder).
 * The hold is a dependent chain of multiply-adds (about 4 cycles a step),
 * LOCKBENCH_HOLD_LOOPS / 256 steps a call on average, spread as above.  It starts from a load of
 * the mutex's word, which x86 cannot do before the acquiring atomic, and ends in a plain store to
 * the padding, which it cannot do after the releasing one: the chain lies inside the hold in every
 * mode, and the hold is serial work that every waiter pays.  Nothing else of the lock changes.
 */
static void hold_chain(void *p, unsigned k)
{
	unsigned long x = *(volatile unsigned *)p;
	while (k--) {
		x = x * 6364136223846793005ul + 1442695040888963407ul;
		__asm__ volatile("" : "+r"(x));
	}
	*(volatile unsigned *)((char *)p + sizeof(pthread_mutex_t) + sizeof(unsigned)) =
	    (unsigned)x;
}

static void delay_lock(void *p)
{
	static _Thread_local unsigned calls;
	unsigned n = delay_loops(), h = hold_loops();
	pthread_mutex_lock(p);
	if (!(n | h))
		return;
	if (n) {
		/* the padding after the mutex, inside the lock's line (.size below) */
		_Atomic unsigned *pad = (_Atomic unsigned *)((char *)p + sizeof(pthread_mutex_t));
		unsigned k = n / 256 + (calls % 256 < n % 256);
		while (k--)
			atomic_fetch_add(pad, 1);
	}
	if (h)
		hold_chain(p, h / 256 + (calls % 256 < h % 256));
	calls++;
}

static bool delay_trylock(void *p)
{
	return pthread_mutex_trylock(p) == 0;
}

static void delay_unlock(void *p)
{
	pthread_mutex_unlock(p);
}

static void delay_destroy(void *p)
{
	pthread_mutex_destroy(p);
}

const struct lock_ops lock_delay_pthread_ops = {
    .name = "delay-pthread",
    .description = "pthread + LOCKBENCH_DELAY_LOOPS atomics / LOCKBENCH_HOLD_LOOPS of hold in "
                   "lock() (test only: calibrated slowdowns)",
    .size = (sizeof(pthread_mutex_t) + 2 * sizeof(unsigned) + LB_CACHELINE - 1) / LB_CACHELINE *
            LB_CACHELINE,
    .sleeps = true,
    .test_only = true,
    .init = delay_init,
    .lock = delay_lock,
    .trylock = delay_trylock,
    .unlock = delay_unlock,
    .destroy = delay_destroy,
};
/*
 * `kmutex-woken-steal` is kmutex with one line changed: a woken first
 * waiter that fails to take the lock spins as before but never sets HANDOFF,
 * so a releasing thread that locks again at once, or a spinner, takes the
 * lock from under it after every wake-up.  Mutual exclusion holds; the
 * waiter's worst wait grows without bound (the starvation the 2016 rewrite's
 * handoff ended).  A correct lock whose fault is unfairness: what the
 * worst-wait rows must catch.
 */
#define KMUTEX_WOKEN_HANDOFF false
#define KMUTEX_OPS           lock_kmutex_woken_steal_ops
#define KMUTEX_NAME          "kmutex-woken-steal"
#define KMUTEX_DESCRIPTION                                                                         \
	"kmutex whose woken waiter never asks for a handoff (test only: starvation)"
#define KMUTEX_TEST_ONLY true
#include "kmutex.c"

#endif
