/*
 * kmutex2009.c - `kmutex-2009`, the adaptive-spinning kernel mutex of 2009
 * ("mutex: implement adaptive spinning", Peter Zijlstra and Ingo Molnar,
 * v2.6.30; LKML "[GIT PULL] adaptive spinning mutexes"), modelled in userspace.
 *
 * count is 1 (unlocked), 0 (locked) or negative (locked, maybe waiters);
 * owner is a hint for spinners.  Lock: decrement; if the old count was not
 * 1, spin while the owner "runs", trying CAS 1 -> 0, then take wait_lock,
 * queue FIFO, exchange -1 in and sleep until the exchange returns 1.
 * Unlock: clear owner, increment; if the count stayed <= 0, set it to 1 and
 * wake the first waiter.  No handoff: the woken waiter competes with
 * spinners and arriving lockers and can lose again and again.
 *
 * Departure from the kernel: userspace cannot see owner->on_cpu or
 * need_resched(), so a spinner spins for at most LB_SPIN_BUDGET_NS (about
 * one context switch, as LiTL does) and then sleeps.
 */
#include "kmutex_common.h"

struct kmutex2009 {
	atomic_int count;
	struct lb_spinlock wait_lock;
	struct kmutex_list wait_list; /* under wait_lock */
	/* relaxed everywhere: a hint for spinners, never a synchronisation point */
	_Atomic(struct kmutex_task *) owner;
};

static int kmutex2009_init(void *p)
{
	struct kmutex2009 *lock = p;

	atomic_init(&lock->count, 1);
	lock->wait_lock = (struct lb_spinlock){0};
	kmutex_list_init(&lock->wait_list);
	atomic_init(&lock->owner, NULL);
	return 0;
}

static void mutex_set_owner(struct kmutex2009 *lock)
{
	atomic_store_explicit(&lock->owner, kmutex_current(), memory_order_relaxed);
}

/* Spin while owner holds the lock and "runs"; false: go to sleep. */
static bool mutex_spin_on_owner(struct kmutex2009 *lock, struct kmutex_task *owner,
                                struct lb_spin_clock *clock)
{
	while (atomic_load_explicit(&lock->owner, memory_order_relaxed) == owner) {
		if (lb_spin_clock_expired(clock))
			return false;
		cpu_relax();
	}
	return true;
}

static bool mutex_optimistic_spin(struct kmutex2009 *lock)
{
	struct lb_spin_clock clock;

	lb_spin_clock_start(&clock, LB_SPIN_BUDGET_NS);
	for (;;) {
		struct kmutex_task *owner =
		    atomic_load_explicit(&lock->owner, memory_order_relaxed);
		int one = 1;

		if (owner && !mutex_spin_on_owner(lock, owner, &clock))
			return false;
		/* acquire: pairs with the release increment/store in unlock */
		if (atomic_compare_exchange_strong_explicit(
		        &lock->count, &one, 0, memory_order_acquire, memory_order_relaxed)) {
			mutex_set_owner(lock);
			return true;
		}
		/* no owner yet (it is between CAS and set_owner): need_resched() stand-in */
		if (lb_spin_clock_expired(&clock))
			return false;
		cpu_relax();
	}
}

static void kmutex2009_lock_slowpath(struct kmutex2009 *lock)
{
	struct kmutex_waiter waiter = {.task = kmutex_current()};

	if (mutex_optimistic_spin(lock))
		return;

	lb_spin_lock(&lock->wait_lock);
	kmutex_list_add_tail(&waiter.list, &lock->wait_list);
	for (;;) {
		/*
		 * -1 marks "waiters" so the next unlock takes the slow path;
		 * acquire: pairs with the release store of 1 in unlock.
		 */
		if (atomic_exchange_explicit(&lock->count, -1, memory_order_acquire) == 1)
			break;
		kmutex_set_state(&waiter, TASK_SLEEPING);
		lb_spin_unlock(&lock->wait_lock);
		kmutex_schedule(&waiter);
		lb_spin_lock(&lock->wait_lock);
	}
	kmutex_list_del(&waiter.list);
	mutex_set_owner(lock);
	/* nobody left to wake: let unlock take the fast path again */
	if (kmutex_list_empty(&lock->wait_list))
		atomic_store_explicit(&lock->count, 0, memory_order_relaxed);
	lb_spin_unlock(&lock->wait_lock);
}

static void kmutex2009_lock(void *p)
{
	struct kmutex2009 *lock = p;

	/* acquire: pairs with the release increment/store in unlock */
	if (atomic_fetch_sub_explicit(&lock->count, 1, memory_order_acquire) == 1) {
		mutex_set_owner(lock);
		return;
	}
	kmutex2009_lock_slowpath(lock);
}

static bool kmutex2009_trylock(void *p)
{
	struct kmutex2009 *lock = p;
	int one = 1;

	/* acquire: pairs with the release increment/store in unlock */
	if (atomic_compare_exchange_strong_explicit(&lock->count, &one, 0, memory_order_acquire,
	                                            memory_order_relaxed)) {
		mutex_set_owner(lock);
		return true;
	}
	return false;
}

static void kmutex2009_unlock(void *p)
{
	struct kmutex2009 *lock = p;
	struct kmutex_waiter *waiter;

	atomic_store_explicit(&lock->owner, NULL, memory_order_relaxed);
	/* release: pairs with the acquire decrement/CAS/exchange of the next owner */
	if (atomic_fetch_add_explicit(&lock->count, 1, memory_order_release) >= 0)
		return;

	/* count was negative: unlock for real, then wake the first waiter */
	atomic_store_explicit(&lock->count, 1, memory_order_release);
	lb_spin_lock(&lock->wait_lock);
	waiter = kmutex_first_waiter(&lock->wait_list);
	if (waiter) {
		kmutex_wake_mark(waiter);
		futex_wake(&waiter->state, 1);
	}
	lb_spin_unlock(&lock->wait_lock);
}

static void kmutex2009_destroy(void *p)
{
}

const struct lock_ops lock_kmutex2009_ops = {
    .name = "kmutex-2009",
    .description = "2009 adaptive-spinning kernel mutex: spin while owner runs, sleep, no handoff",
    .size = LB_LOCK_SIZE(struct kmutex2009),
    .sleeps = true,
    .init = kmutex2009_init,
    .lock = kmutex2009_lock,
    .trylock = kmutex2009_trylock,
    .unlock = kmutex2009_unlock,
    .destroy = kmutex2009_destroy,
};
