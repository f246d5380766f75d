/*
 * futex3.c - mutex #3 of Ulrich Drepper's "Futexes Are Tricky" (2004-2011),
 * the design of glibc's lowlevellock.
 *
 * The word is 0 (unlocked), 1 (locked, no waiters) or 2 (locked, maybe
 * waiters).  Lock: CAS 0 -> 1; failing that, exchange in 2 and sleep on the
 * word while the exchange returns non-zero.  Unlock: decrement; if the old
 * value was 2, store 0 and wake one sleeper.  A waiter that takes the lock
 * leaves it at 2, so its unlock wakes the next one (at worst one spurious
 * FUTEX_WAKE).  Unfair: a running thread can take the word between the
 * release and the woken waiter's exchange.
 */
#include "lock_internal.h"

struct futex3_lock {
	atomic_uint word;
};

static int futex3_init(void *p)
{
	struct futex3_lock *lock = p;

	atomic_init(&lock->word, 0);
	return 0;
}

static void futex3_lock(void *p)
{
	struct futex3_lock *lock = p;

	lb_futex3_acquire(&lock->word);
}

static bool futex3_trylock(void *p)
{
	struct futex3_lock *lock = p;

	return lb_futex3_tryacquire(&lock->word);
}

static void futex3_unlock(void *p)
{
	struct futex3_lock *lock = p;

	lb_futex3_release(&lock->word);
}

static void futex3_destroy(void *p)
{
}

const struct lock_ops lock_futex3_ops = {
    .name = "futex3",
    .description = "Drepper's three-state futex mutex (Futexes Are Tricky, mutex #3)",
    .size = LB_LOCK_SIZE(struct futex3_lock),
    .sleeps = true,
    .init = futex3_init,
    .lock = futex3_lock,
    .trylock = futex3_trylock,
    .unlock = futex3_unlock,
    .destroy = futex3_destroy,
};
