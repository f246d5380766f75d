/*
 * kmutex.c - `kmutex`, a userspace model of the kernel mutex after the 2016
 * rewrite ("locking/mutex: Rewrite basic mutex", Peter Zijlstra, v4.10, with
 * the PICKUP fix of v4.11; its review threads on LKML) and of its OSQ
 * (kernel/locking/osq_lock.c, Jason Low, Waiman Long, Peter Zijlstra).
 *
 * owner is one word: the owner's task address | MUTEX_FLAG_WAITERS (someone
 * sleeps: unlock must wake) | MUTEX_FLAG_HANDOFF (the first waiter asks for
 * the lock to be handed to it) | MUTEX_FLAG_PICKUP (handed over; the waiter
 * must pick it up).  Lock: CAS 0 -> current; else optimistic spinning,
 * serialised by the OSQ (an MCS queue of spinners) so that one spinner at a
 * time watches the owner word; else queue FIFO on wait_list under wait_lock,
 * set WAITERS, sleep.  Unlock: CAS current -> 0 when no flag is set; else,
 * unless HANDOFF, release keeping WAITERS, and wake the first waiter; with
 * HANDOFF, write owner = first waiter | PICKUP and wake it.  A woken first
 * waiter spins too, and when it fails to get the lock it sets HANDOFF, so
 * spinners and new lockers cannot starve it past the next unlock.
 *
 * Departures from the kernel:
 *  - Userspace cannot see owner->on_cpu, need_resched() or
 *    vcpu_is_preempted(): a spinner (and an OSQ waiter) spins for at most
 *    LB_SPIN_BUDGET_NS (about one context switch, as LiTL does), then goes
 *    to sleep (or unqueues from the OSQ).  mutex_can_spin_on_owner() is
 *    therefore always true.
 *  - HANDOFF is set as since v5.16 ("locking/mutex: Fix HANDOFF condition"):
 *    by the first waiter each time it fails after a wakeup, and only while
 *    the mutex is owned, so a barging trylock cannot leave it unset for
 *    good.  In this model only the first waiter is ever woken, so the
 *    waiter knows it is first without reading the list outside wait_lock.
 *  - The per-CPU OSQ nodes become a static table indexed by lb_thread_id();
 *    a thread without an index does not spin.
 */
#include "kmutex_common.h"

/*
 * The test build compiles this file once more, in broken.c, as
 * `kmutex-woken-steal`: there KMUTEX_WOKEN_HANDOFF is false, so a woken
 * waiter still spins but never asks for the handoff, and spinners and a
 * re-locking holder can starve it (what the HANDOFF bit is for).  The
 * tests that a verdict catches starvation compare it with kmutex.
 */
#ifndef KMUTEX_WOKEN_HANDOFF
#define KMUTEX_WOKEN_HANDOFF true
#define KMUTEX_OPS           lock_kmutex_ops
#define KMUTEX_NAME          "kmutex"
#define KMUTEX_DESCRIPTION                                                                         \
	"2016 kernel mutex: owner word + WAITERS/HANDOFF/PICKUP, OSQ spinners, FIFO waiters, "     \
	"handoff"
#define KMUTEX_TEST_ONLY false
#endif

#define MUTEX_FLAG_WAITERS 0x01u
#define MUTEX_FLAG_HANDOFF 0x02u
#define MUTEX_FLAG_PICKUP  0x04u
#define MUTEX_FLAGS        0x07u

#define OSQ_UNLOCKED_VAL 0

struct optimistic_spin_node {
	_Alignas(LB_CACHELINE) _Atomic(struct optimistic_spin_node *) next;
	_Atomic(struct optimistic_spin_node *) prev;
	atomic_int locked; /* 1 when this spinner may go on to spin on the owner */
};

struct optimistic_spin_queue {
	atomic_int tail; /* encoded index of the last spinner, or OSQ_UNLOCKED_VAL */
};

struct kmutex {
	atomic_uintptr_t owner;
	struct lb_spinlock wait_lock;
	struct optimistic_spin_queue osq;
	struct kmutex_list wait_list; /* under wait_lock */
};

/* Static storage, as the kernel's per-CPU osq_node: a node never goes away. */
static struct optimistic_spin_node osq_nodes[LB_MAX_THREADS];

static inline struct optimistic_spin_node *decode_cpu(int encoded)
{
	return &osq_nodes[encoded - 1];
}

/*
 * The kernel keeps this in node->cpu and rewrites it on every osq_lock while
 * neighbours may read it: the same value, but a data race in C11.  Here the
 * node's place in the table is its encoded index.
 */
static inline int node_cpu(const struct optimistic_spin_node *node)
{
	return (int)(node - osq_nodes) + 1;
}

/*
 * Get a stable node->next, for unlock or unqueue; NULL when we were the last
 * queued and moved the tail back to prev (or to unlocked).
 */
static struct optimistic_spin_node *osq_wait_next(struct optimistic_spin_queue *lock,
                                                  struct optimistic_spin_node *node,
                                                  struct optimistic_spin_node *prev)
{
	struct optimistic_spin_node *next = NULL;
	int curr = node_cpu(node);
	int old = prev ? node_cpu(prev) : OSQ_UNLOCKED_VAL;

	for (;;) {
		int expected = curr;

		/* acquire: pairs with the exchange of the next osq_lock */
		if (atomic_load_explicit(&lock->tail, memory_order_relaxed) == curr &&
		    atomic_compare_exchange_strong_explicit(
		        &lock->tail, &expected, old, memory_order_acq_rel, memory_order_relaxed))
			break;
		/*
		 * Take next out of node->next (exchange, not load): a concurrent
		 * unqueue of next must not think its prev link is still ours.
		 */
		if (atomic_load_explicit(&node->next, memory_order_relaxed)) {
			next = atomic_exchange_explicit(&node->next, NULL, memory_order_acq_rel);
			if (next)
				break;
		}
		cpu_relax();
	}
	return next;
}

static bool osq_lock(struct optimistic_spin_queue *lock, struct lb_spin_clock *clock)
{
	int tid = lb_thread_id();
	struct optimistic_spin_node *node, *prev, *next;
	int curr, old;

	if (tid < 0)
		return false;
	node = &osq_nodes[tid];
	curr = tid + 1;
	atomic_store_explicit(&node->locked, 0, memory_order_relaxed);
	atomic_store_explicit(&node->next, NULL, memory_order_relaxed);

	/* release: publishes the node; acquire: pairs with osq_unlock's release */
	old = atomic_exchange_explicit(&lock->tail, curr, memory_order_acq_rel);
	if (old == OSQ_UNLOCKED_VAL)
		return true;

	prev = decode_cpu(old);
	/* node->prev before prev->next: unqueue's step C writes the same field */
	atomic_store_explicit(&node->prev, prev, memory_order_relaxed);
	/* release: orders the node->prev store before it (the kernel's smp_wmb) */
	atomic_store_explicit(&prev->next, node, memory_order_release);

	/* acquire: pairs with the release store of locked in osq_unlock */
	while (!atomic_load_explicit(&node->locked, memory_order_acquire)) {
		/* need_resched() / vcpu_is_preempted() stand-in */
		if (lb_spin_clock_expired(clock))
			goto unqueue;
		cpu_relax();
	}
	return true;

unqueue:
	/* step A: undo prev->next = node, so prev's unlock/unqueue waits for a new next */
	for (;;) {
		struct optimistic_spin_node *expected = node;

		if (atomic_load_explicit(&prev->next, memory_order_relaxed) == node &&
		    atomic_compare_exchange_strong_explicit(
		        &prev->next, &expected, NULL, memory_order_acq_rel, memory_order_relaxed))
			break;
		/* we can only lose against an unlock, which hands us the queue */
		if (atomic_load_explicit(&node->locked, memory_order_acquire))
			return true;
		cpu_relax();
		/* or against a concurrent unqueue's step B, whose step C gives a new prev */
		prev = atomic_load_explicit(&node->prev, memory_order_acquire);
	}

	/* step B: stabilise next, or move the tail back to prev */
	next = osq_wait_next(lock, node, prev);
	if (!next)
		return false;

	/* step C: unlink; prev waits for a new next, next waits in its step A */
	atomic_store_explicit(&next->prev, prev, memory_order_release);
	atomic_store_explicit(&prev->next, next, memory_order_release);
	return false;
}

static void osq_unlock(struct optimistic_spin_queue *lock)
{
	struct optimistic_spin_node *node = &osq_nodes[lb_thread_id()];
	struct optimistic_spin_node *next;
	int expected = node_cpu(node);

	/* release: pairs with the acquire exchange of the next osq_lock */
	if (atomic_compare_exchange_strong_explicit(&lock->tail, &expected, OSQ_UNLOCKED_VAL,
	                                            memory_order_release, memory_order_relaxed))
		return;

	next = atomic_exchange_explicit(&node->next, NULL, memory_order_acq_rel);
	if (!next)
		next = osq_wait_next(lock, node, NULL);
	/* release: pairs with the acquire spin on locked in osq_lock */
	if (next)
		atomic_store_explicit(&next->locked, 1, memory_order_release);
}

static inline uintptr_t owner_task(uintptr_t owner)
{
	return owner & ~(uintptr_t)MUTEX_FLAGS;
}

static inline uintptr_t owner_flags(uintptr_t owner)
{
	return owner & MUTEX_FLAGS;
}

static inline void mutex_set_flag(struct kmutex *lock, uintptr_t flag)
{
	atomic_fetch_or_explicit(&lock->owner, flag, memory_order_relaxed);
}

static inline void mutex_clear_flag(struct kmutex *lock, uintptr_t flag)
{
	atomic_fetch_and_explicit(&lock->owner, ~flag, memory_order_relaxed);
}

/*
 * Try to take the mutex in any unlocked state, keeping the flag bits, or
 * pick up a handoff addressed to us.  Returns 0 when we now own it, else the
 * owner's task.  With handoff (first waiter only) a failure sets HANDOFF.
 */
static uintptr_t mutex_trylock_common(struct kmutex *lock, bool handoff)
{
	uintptr_t curr = (uintptr_t)kmutex_current();
	uintptr_t owner = atomic_load_explicit(&lock->owner, memory_order_relaxed);

	for (;;) {
		uintptr_t flags = owner_flags(owner);
		uintptr_t task = owner_task(owner);

		if (task) {
			if (flags & MUTEX_FLAG_PICKUP) {
				if (task != curr)
					break;
				flags &= ~(uintptr_t)MUTEX_FLAG_PICKUP;
			} else if (handoff) {
				if (flags & MUTEX_FLAG_HANDOFF)
					break;
				flags |= MUTEX_FLAG_HANDOFF;
			} else {
				break;
			}
		} else {
			task = curr;
		}
		/*
		 * HANDOFF never outlives the acquisition that answers it.
		 * acquire: pairs with the release CAS of unlock and handoff.
		 */
		if (task == curr)
			flags &= ~(uintptr_t)MUTEX_FLAG_HANDOFF;
		if (atomic_compare_exchange_weak_explicit(&lock->owner, &owner, task | flags,
		                                          memory_order_acquire,
		                                          memory_order_relaxed)) {
			if (task == curr)
				return 0;
			break;
		}
	}
	return owner_task(owner);
}

static inline bool mutex_trylock_or_handoff(struct kmutex *lock, bool handoff)
{
	return mutex_trylock_common(lock, handoff) == 0;
}

/* Spin while owner holds the lock and "runs"; false: stop spinning. */
static bool mutex_spin_on_owner(struct kmutex *lock, uintptr_t owner, struct lb_spin_clock *clock)
{
	while (owner_task(atomic_load_explicit(&lock->owner, memory_order_relaxed)) == owner) {
		/* !owner->on_cpu || need_resched() stand-in */
		if (lb_spin_clock_expired(clock))
			return false;
		cpu_relax();
	}
	return true;
}

/*
 * Spin on the owner word and try to take the mutex.  A spinner that is not a
 * waiter first queues on the OSQ; the woken first waiter spins without it.
 */
static bool mutex_optimistic_spin(struct kmutex *lock, bool waiter)
{
	struct lb_spin_clock clock;
	bool ret = false;

	lb_spin_clock_start(&clock, LB_SPIN_BUDGET_NS);
	if (!waiter && !osq_lock(&lock->osq, &clock))
		return false;
	for (;;) {
		uintptr_t owner = mutex_trylock_common(lock, false);

		if (!owner) {
			ret = true;
			break;
		}
		if (!mutex_spin_on_owner(lock, owner, &clock))
			break;
		/* owners keep changing: still bounded by the budget */
		if (lb_spin_clock_expired(&clock))
			break;
		cpu_relax();
	}
	if (!waiter)
		osq_unlock(&lock->osq);
	return ret;
}

static void kmutex_lock_slowpath(struct kmutex *lock)
{
	struct kmutex_waiter waiter = {.task = kmutex_current()};
	bool first = false;

	if (mutex_trylock_or_handoff(lock, false) || mutex_optimistic_spin(lock, false))
		return;

	lb_spin_lock(&lock->wait_lock);
	/* after waiting for wait_lock, try again */
	if (mutex_trylock_or_handoff(lock, false)) {
		lb_spin_unlock(&lock->wait_lock);
		return;
	}
	kmutex_list_add_tail(&waiter.list, &lock->wait_list);
	if (kmutex_first_waiter(&lock->wait_list) == &waiter)
		mutex_set_flag(lock, MUTEX_FLAG_WAITERS);
	kmutex_set_state(&waiter, TASK_SLEEPING);

	for (;;) {
		/*
		 * Under wait_lock we are serialised against an unlock handing
		 * the mutex to us: try (and pick up a handoff) before sleeping.
		 */
		if (mutex_trylock_or_handoff(lock, false))
			goto acquired;
		lb_spin_unlock(&lock->wait_lock);
		kmutex_schedule(&waiter);

		/* woken: only the first waiter is ever woken in this model */
		first = true;
		kmutex_set_state(&waiter, TASK_SLEEPING);
		if (mutex_trylock_or_handoff(lock, first && KMUTEX_WOKEN_HANDOFF))
			break;
		if (first && mutex_optimistic_spin(lock, true))
			break;
		lb_spin_lock(&lock->wait_lock);
	}
	lb_spin_lock(&lock->wait_lock);
acquired:
	kmutex_set_state(&waiter, TASK_RUNNING);
	kmutex_list_del(&waiter.list);
	if (kmutex_list_empty(&lock->wait_list))
		mutex_clear_flag(lock, MUTEX_FLAGS);
	lb_spin_unlock(&lock->wait_lock);
}

static void kmutex_lock(void *p)
{
	struct kmutex *lock = p;
	uintptr_t zero = 0;

	/* acquire: pairs with the release CAS in unlock */
	if (atomic_compare_exchange_strong_explicit(&lock->owner, &zero,
	                                            (uintptr_t)kmutex_current(),
	                                            memory_order_acquire, memory_order_relaxed))
		return;
	kmutex_lock_slowpath(lock);
}

static bool kmutex_trylock(void *p)
{
	return mutex_trylock_or_handoff(p, false);
}

/*
 * Give the mutex to task (0: plain release), keeping WAITERS, clearing
 * HANDOFF, setting PICKUP on a real handoff.  release: pairs with the
 * acquire CAS in mutex_trylock_common of the new owner.
 */
static void mutex_handoff(struct kmutex *lock, uintptr_t task)
{
	uintptr_t owner = atomic_load_explicit(&lock->owner, memory_order_relaxed);
	uintptr_t new;

	do {
		new = (owner & MUTEX_FLAG_WAITERS) | task;
		if (task)
			new |= MUTEX_FLAG_PICKUP;
	} while (!atomic_compare_exchange_weak_explicit(
	    &lock->owner, &owner, new, memory_order_release, memory_order_relaxed));
}

static void kmutex_unlock_slowpath(struct kmutex *lock)
{
	uintptr_t owner = atomic_load_explicit(&lock->owner, memory_order_relaxed);
	struct kmutex_waiter *waiter;

	/* release before taking wait_lock, unless the first waiter asked for a handoff */
	for (;;) {
		if (owner & MUTEX_FLAG_HANDOFF)
			break;
		/* release: pairs with the acquire CAS of the next owner */
		if (atomic_compare_exchange_weak_explicit(&lock->owner, &owner, owner_flags(owner),
		                                          memory_order_release,
		                                          memory_order_relaxed)) {
			if (owner & MUTEX_FLAG_WAITERS)
				break;
			return;
		}
	}

	lb_spin_lock(&lock->wait_lock);
	waiter = kmutex_first_waiter(&lock->wait_list);
	if (waiter)
		kmutex_wake_mark(waiter);
	if (owner & MUTEX_FLAG_HANDOFF)
		mutex_handoff(lock, waiter ? (uintptr_t)waiter->task : 0);
	lb_spin_unlock(&lock->wait_lock);
	/* wake_up_q(): the waiter may be gone already, which is harmless */
	if (waiter)
		futex_wake(&waiter->state, 1);
}

static void kmutex_unlock(void *p)
{
	struct kmutex *lock = p;
	uintptr_t curr = (uintptr_t)kmutex_current();

	/* release: pairs with the acquire CAS of the next owner */
	if (atomic_compare_exchange_strong_explicit(&lock->owner, &curr, 0, memory_order_release,
	                                            memory_order_relaxed))
		return;
	kmutex_unlock_slowpath(lock);
}

static int kmutex_init(void *p)
{
	struct kmutex *lock = p;

	atomic_init(&lock->owner, 0);
	lock->wait_lock = (struct lb_spinlock){0};
	atomic_init(&lock->osq.tail, OSQ_UNLOCKED_VAL);
	kmutex_list_init(&lock->wait_list);
	return 0;
}

static void kmutex_destroy(void *p)
{
}

const struct lock_ops KMUTEX_OPS = {
    .name = KMUTEX_NAME,
    .description = KMUTEX_DESCRIPTION,
    .size = LB_LOCK_SIZE(struct kmutex),
    .sleeps = true,
    .test_only = KMUTEX_TEST_ONLY,
    .init = kmutex_init,
    .lock = kmutex_lock,
    .trylock = kmutex_trylock,
    .unlock = kmutex_unlock,
    .destroy = kmutex_destroy,
};
