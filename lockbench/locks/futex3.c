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
	atomic_uint word; /* the only member: broken.c passes a bare word to these ops */
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
	unsigned int c = 0;

	/* acquire (CAS and exchanges): pairs with the release in futex3_unlock */
	if (atomic_compare_exchange_strong_explicit(&lock->word, &c, 1, memory_order_acquire,
	                                            memory_order_relaxed))
		return;
	if (c != 2)
		c = atomic_exchange_explicit(&lock->word, 2, memory_order_acquire);
	while (c != 0) {
		futex_wait(&lock->word, 2);
		c = atomic_exchange_explicit(&lock->word, 2, memory_order_acquire);
	}
}

static bool futex3_trylock(void *p)
{
	struct futex3_lock *lock = p;
	unsigned int c = 0;

	/* acquire: pairs with the release in futex3_unlock */
	return atomic_compare_exchange_strong_explicit(&lock->word, &c, 1, memory_order_acquire,
	                                               memory_order_relaxed);
}

static void futex3_unlock(void *p)
{
	struct futex3_lock *lock = p;

	/* release: pairs with the acquire CAS/exchange in futex3_lock */
	if (atomic_fetch_sub_explicit(&lock->word, 1, memory_order_release) != 1) {
		atomic_store_explicit(&lock->word, 0, memory_order_release);
		futex_wake(&lock->word, 1);
	}
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
