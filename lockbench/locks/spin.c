/*
 * spin.c - the classic centralised spinlocks (Mellor-Crummey and Scott,
 * "Algorithms for Scalable Synchronization on Shared-Memory Multiprocessors",
 * 1991; the same three as Concurrency Kit's ck_spinlock_{fas,ttas,ticket}).
 *
 * `tas` hammers the word with atomic exchange: barging, unfair, bus-heavy.
 * `ttas` reads until the word looks free before the exchange and backs off
 * exponentially (bounded) after each lost race.  `ticket` is FIFO: a
 * fetch-and-add draws a ticket, the holder serves the next one on unlock.
 * None of them sleeps; a preempted holder (or, for ticket, a preempted next
 * in line) stalls everyone behind it.
 */
#include "lock_internal.h"

#define TTAS_BACKOFF_MIN 4
#define TTAS_BACKOFF_MAX 256

struct tas_lock {
	atomic_uint locked;
};

struct ticket_lock {
	atomic_uint next;  /* next ticket to draw */
	atomic_uint owner; /* ticket now served; written only by the holder */
};

static int tas_init(void *p)
{
	struct tas_lock *lock = p;

	atomic_init(&lock->locked, 0);
	return 0;
}

static void tas_lock(void *p)
{
	struct tas_lock *lock = p;

	/* acquire: pairs with the release in tas_unlock */
	while (atomic_exchange_explicit(&lock->locked, 1, memory_order_acquire))
		cpu_relax();
}

static bool tas_trylock(void *p)
{
	struct tas_lock *lock = p;

	/* acquire: pairs with the release in tas_unlock */
	return !atomic_exchange_explicit(&lock->locked, 1, memory_order_acquire);
}

static void tas_unlock(void *p)
{
	struct tas_lock *lock = p;

	atomic_store_explicit(&lock->locked, 0, memory_order_release);
}

static void spin_destroy(void *p)
{
}

static void ttas_lock(void *p)
{
	struct tas_lock *lock = p;
	unsigned int backoff = TTAS_BACKOFF_MIN;

	for (;;) {
		/* spin on a shared copy of the line, not with exchanges */
		while (atomic_load_explicit(&lock->locked, memory_order_relaxed))
			cpu_relax();
		/* acquire: pairs with the release in tas_unlock */
		if (!atomic_exchange_explicit(&lock->locked, 1, memory_order_acquire))
			return;
		for (unsigned int i = 0; i < backoff; i++)
			cpu_relax();
		if (backoff < TTAS_BACKOFF_MAX)
			backoff <<= 1;
	}
}

static bool ttas_trylock(void *p)
{
	struct tas_lock *lock = p;

	if (atomic_load_explicit(&lock->locked, memory_order_relaxed))
		return false;
	/* acquire: pairs with the release in tas_unlock */
	return !atomic_exchange_explicit(&lock->locked, 1, memory_order_acquire);
}

static int ticket_init(void *p)
{
	struct ticket_lock *lock = p;

	atomic_init(&lock->next, 0);
	atomic_init(&lock->owner, 0);
	return 0;
}

static void ticket_lock(void *p)
{
	struct ticket_lock *lock = p;
	/* relaxed: the ticket orders nothing, the owner load below acquires */
	unsigned int ticket = atomic_fetch_add_explicit(&lock->next, 1, memory_order_relaxed);

	/* acquire: pairs with the release in ticket_unlock */
	while (atomic_load_explicit(&lock->owner, memory_order_acquire) != ticket)
		cpu_relax();
}

static bool ticket_trylock(void *p)
{
	struct ticket_lock *lock = p;
	/* acquire: pairs with the release in ticket_unlock */
	unsigned int owner = atomic_load_explicit(&lock->owner, memory_order_acquire);

	/*
	 * Free and nobody in line when next == owner; owner cannot move while
	 * next stays equal to it, so winning the CAS means holding the lock.
	 */
	return atomic_compare_exchange_strong_explicit(&lock->next, &owner, owner + 1,
	                                               memory_order_relaxed, memory_order_relaxed);
}

static void ticket_unlock(void *p)
{
	struct ticket_lock *lock = p;
	unsigned int owner = atomic_load_explicit(&lock->owner, memory_order_relaxed);

	atomic_store_explicit(&lock->owner, owner + 1, memory_order_release);
}

const struct lock_ops lock_tas_ops = {
    .name = "tas",
    .description = "test-and-set spinlock (atomic exchange, unfair)",
    .size = LB_LOCK_SIZE(struct tas_lock),
    .init = tas_init,
    .lock = tas_lock,
    .trylock = tas_trylock,
    .unlock = tas_unlock,
    .destroy = spin_destroy,
};

const struct lock_ops lock_ttas_ops = {
    .name = "ttas",
    .description = "test-and-test-and-set spinlock with bounded exponential backoff",
    .size = LB_LOCK_SIZE(struct tas_lock),
    .init = tas_init,
    .lock = ttas_lock,
    .trylock = ttas_trylock,
    .unlock = tas_unlock,
    .destroy = spin_destroy,
};

const struct lock_ops lock_ticket_ops = {
    .name = "ticket",
    .description = "ticket spinlock (fetch-and-add ticket, now-serving; FIFO)",
    .size = LB_LOCK_SIZE(struct ticket_lock),
    .init = ticket_init,
    .lock = ticket_lock,
    .trylock = ticket_trylock,
    .unlock = ticket_unlock,
    .destroy = spin_destroy,
};
