/*
 * queue.c - the two queue spinlocks: every waiter spins on its own cache line.
 *
 * `mcs` is Mellor-Crummey and Scott's lock (1991): the lock word is the tail
 * of a queue of per-thread nodes; a waiter links itself behind the old tail
 * and spins on its own node until its predecessor hands over.  `clh` is
 * Craig's and Landin/Hagersten's lock (1993/94): the queue is implicit, each
 * waiter spins on its predecessor's node and, on unlock, adopts that node as
 * its own for next time (the standard recycling).
 *
 * Nodes: lock() has no node argument, so each thread keeps a pool of
 * LB_MAX_NESTED nodes (one per lock it may hold at once) and the holder
 * stores its node in the lock after acquiring; only the holder reads it back
 * in unlock.  MCS nodes live in thread-local storage: nobody references one
 * after its owner's unlock returns.  CLH nodes move between threads and the
 * lock keeps the last one, so they come from a process-wide free list and
 * are never returned to malloc: a stale reader (trylock peeking at the tail)
 * always reads node memory, never freed memory.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "lock_internal.h"

struct mcs_node {
	_Alignas(LB_CACHELINE) _Atomic(struct mcs_node *) next;
	atomic_uint locked; /* 1 while the owner waits, 0 once handed the lock */
};

struct mcs_lock {
	_Atomic(struct mcs_node *) tail;
	struct mcs_node *holder; /* written by the holder, read by it in unlock */
};

struct clh_node {
	_Alignas(LB_CACHELINE) atomic_uint locked; /* 1 held or waiting, 0 released */
	struct clh_node *next_free;                /* on clh_free_list only */
};

struct clh_lock {
	_Atomic(struct clh_node *) tail;
	/* written by the holder after acquiring, read by it in unlock */
	struct clh_node *holder;
	struct clh_node *holder_pred;
	unsigned int holder_slot;
};

/* A thread's CLH nodes: node[i] is free for a new acquisition unless busy bit i. */
struct clh_pool {
	struct clh_node *node[LB_MAX_NESTED];
	unsigned int busy;
	bool ready;
};

static _Thread_local struct mcs_node mcs_pool[LB_MAX_NESTED];
static _Thread_local unsigned int mcs_busy;

static _Thread_local struct clh_pool clh_pool;
static pthread_mutex_t clh_free_mutex = PTHREAD_MUTEX_INITIALIZER;
static struct clh_node *clh_free_list; /* under clh_free_mutex */
static pthread_once_t clh_once = PTHREAD_ONCE_INIT;
static pthread_key_t clh_key;

static void too_many_nested(const char *name)
{
	fprintf(stderr, "lockbench: %s: a thread holds more than %d such locks\n", name,
	        LB_MAX_NESTED);
	abort();
}

static unsigned int pool_slot(unsigned int busy, const char *name)
{
	if (busy == (1u << LB_MAX_NESTED) - 1)
		too_many_nested(name);
	return (unsigned int)__builtin_ctz(~busy);
}

static struct mcs_node *mcs_node_get(void)
{
	unsigned int slot = pool_slot(mcs_busy, "mcs");
	struct mcs_node *node = &mcs_pool[slot];

	mcs_busy |= 1u << slot;
	atomic_store_explicit(&node->next, NULL, memory_order_relaxed);
	atomic_store_explicit(&node->locked, 1, memory_order_relaxed);
	return node;
}

static void mcs_node_put(struct mcs_node *node)
{
	mcs_busy &= ~(1u << (node - mcs_pool));
}

static int mcs_init(void *p)
{
	struct mcs_lock *lock = p;

	atomic_init(&lock->tail, NULL);
	lock->holder = NULL;
	return 0;
}

static void mcs_lock(void *p)
{
	struct mcs_lock *lock = p;
	struct mcs_node *node = mcs_node_get();
	struct mcs_node *prev;

	/*
	 * release: publishes node's initialisation to the successor that finds
	 * it here; acquire: pairs with the release CAS of an uncontended unlock.
	 */
	prev = atomic_exchange_explicit(&lock->tail, node, memory_order_acq_rel);
	if (prev) {
		/* release: pairs with the acquire load of next in mcs_unlock */
		atomic_store_explicit(&prev->next, node, memory_order_release);
		/* acquire: pairs with the release hand-over in mcs_unlock */
		while (atomic_load_explicit(&node->locked, memory_order_acquire))
			cpu_relax();
	}
	lock->holder = node;
}

static bool mcs_trylock(void *p)
{
	struct mcs_lock *lock = p;
	struct mcs_node *node = mcs_node_get();
	struct mcs_node *expected = NULL;

	/* as the exchange in mcs_lock: release publishes node, acquire pairs with unlock */
	if (atomic_compare_exchange_strong_explicit(&lock->tail, &expected, node,
	                                            memory_order_acq_rel, memory_order_relaxed)) {
		lock->holder = node;
		return true;
	}
	mcs_node_put(node);
	return false;
}

static void mcs_unlock(void *p)
{
	struct mcs_lock *lock = p;
	struct mcs_node *node = lock->holder;
	/* acquire: pairs with the successor's release store of next */
	struct mcs_node *next = atomic_load_explicit(&node->next, memory_order_acquire);

	if (!next) {
		struct mcs_node *expected = node;

		/* release: pairs with the acquire exchange of the next locker */
		if (atomic_compare_exchange_strong_explicit(
		        &lock->tail, &expected, NULL, memory_order_release, memory_order_relaxed)) {
			mcs_node_put(node);
			return;
		}
		/* a successor swapped the tail but has not linked itself yet */
		while (!(next = atomic_load_explicit(&node->next, memory_order_acquire)))
			cpu_relax();
	}
	/* release: pairs with the successor's acquire spin on its node */
	atomic_store_explicit(&next->locked, 0, memory_order_release);
	mcs_node_put(node);
}

static void mcs_destroy(void *p)
{
}

static struct clh_node *clh_node_alloc(void)
{
	struct clh_node *node;

	pthread_mutex_lock(&clh_free_mutex);
	node = clh_free_list;
	if (node)
		clh_free_list = node->next_free;
	pthread_mutex_unlock(&clh_free_mutex);
	if (!node) {
		node = aligned_alloc(LB_CACHELINE, sizeof(*node));
		if (!node)
			return NULL;
	}
	node->next_free = NULL;
	atomic_store_explicit(&node->locked, 0, memory_order_relaxed);
	return node;
}

static void clh_node_release(struct clh_node *node)
{
	pthread_mutex_lock(&clh_free_mutex);
	node->next_free = clh_free_list;
	clh_free_list = node;
	pthread_mutex_unlock(&clh_free_mutex);
}

/* Key destructor: an exiting thread's nodes are its own, give them back. */
static void clh_pool_release(void *value)
{
	struct clh_pool *pool = value;

	for (int i = 0; i < LB_MAX_NESTED; i++) {
		clh_node_release(pool->node[i]);
		pool->node[i] = NULL;
	}
	pool->ready = false;
}

static void clh_key_create(void)
{
	if (pthread_key_create(&clh_key, clh_pool_release) != 0) {
		fprintf(stderr, "lockbench: clh: cannot create a thread key\n");
		abort();
	}
}

static struct clh_pool *clh_pool_get(void)
{
	struct clh_pool *pool = &clh_pool;

	if (__builtin_expect(pool->ready, 1))
		return pool;
	pthread_once(&clh_once, clh_key_create);
	for (int i = 0; i < LB_MAX_NESTED; i++) {
		pool->node[i] = clh_node_alloc();
		if (!pool->node[i]) {
			fprintf(stderr, "lockbench: clh: out of memory for queue nodes\n");
			abort();
		}
	}
	pool->busy = 0;
	pool->ready = true;
	pthread_setspecific(clh_key, pool);
	return pool;
}

static int clh_init(void *p)
{
	struct clh_lock *lock = p;
	/* the lock starts with one released node, which it owns */
	struct clh_node *node = clh_node_alloc();

	if (!node)
		return ENOMEM;
	atomic_init(&lock->tail, node);
	lock->holder = NULL;
	lock->holder_pred = NULL;
	return 0;
}

static void clh_acquired(struct clh_lock *lock, struct clh_node *node, struct clh_node *pred,
                         unsigned int slot)
{
	lock->holder = node;
	lock->holder_pred = pred;
	lock->holder_slot = slot;
}

static void clh_lock(void *p)
{
	struct clh_lock *lock = p;
	struct clh_pool *pool = clh_pool_get();
	unsigned int slot = pool_slot(pool->busy, "clh");
	struct clh_node *node = pool->node[slot];
	struct clh_node *pred;

	pool->busy |= 1u << slot;
	atomic_store_explicit(&node->locked, 1, memory_order_relaxed);
	/*
	 * release: publishes locked = 1 before a successor spins on node;
	 * acquire: makes pred's node contents visible before we spin on it.
	 */
	pred = atomic_exchange_explicit(&lock->tail, node, memory_order_acq_rel);
	/* acquire: pairs with the release in clh_unlock */
	while (atomic_load_explicit(&pred->locked, memory_order_acquire))
		cpu_relax();
	clh_acquired(lock, node, pred, slot);
}

static bool clh_trylock(void *p)
{
	struct clh_lock *lock = p;
	struct clh_pool *pool = clh_pool_get();
	/* acquire: as the exchange in clh_lock */
	struct clh_node *pred = atomic_load_explicit(&lock->tail, memory_order_acquire);
	struct clh_node *node;
	unsigned int slot;

	if (atomic_load_explicit(&pred->locked, memory_order_relaxed))
		return false;
	slot = pool_slot(pool->busy, "clh");
	node = pool->node[slot];
	atomic_store_explicit(&node->locked, 1, memory_order_relaxed);
	if (!atomic_compare_exchange_strong_explicit(&lock->tail, &pred, node, memory_order_acq_rel,
	                                             memory_order_relaxed))
		return false;
	pool->busy |= 1u << slot;
	/*
	 * We are queued behind pred.  It was released when we looked, but it
	 * may since have been recycled and queued again (ABA on the tail): then
	 * we are a legitimate waiter and wait like clh_lock.
	 */
	while (atomic_load_explicit(&pred->locked, memory_order_acquire))
		cpu_relax();
	clh_acquired(lock, node, pred, slot);
	return true;
}

static void clh_unlock(void *p)
{
	struct clh_lock *lock = p;
	struct clh_pool *pool = &clh_pool;
	struct clh_node *node = lock->holder;
	struct clh_node *pred = lock->holder_pred;
	unsigned int slot = lock->holder_slot;

	/* release: pairs with the successor's acquire spin on node */
	atomic_store_explicit(&node->locked, 0, memory_order_release);
	/* node now belongs to the queue; pred, released and unreferenced, is ours */
	pool->node[slot] = pred;
	pool->busy &= ~(1u << slot);
}

static void clh_destroy(void *p)
{
	struct clh_lock *lock = p;

	clh_node_release(atomic_load_explicit(&lock->tail, memory_order_relaxed));
}

const struct lock_ops lock_mcs_ops = {
    .name = "mcs",
    .description = "MCS queue spinlock (spin on own node; FIFO)",
    .size = LB_LOCK_SIZE(struct mcs_lock),
    .init = mcs_init,
    .lock = mcs_lock,
    .trylock = mcs_trylock,
    .unlock = mcs_unlock,
    .destroy = mcs_destroy,
};

const struct lock_ops lock_clh_ops = {
    .name = "clh",
    .description = "CLH queue spinlock (spin on predecessor's node; FIFO)",
    .size = LB_LOCK_SIZE(struct clh_lock),
    .init = clh_init,
    .lock = clh_lock,
    .trylock = clh_trylock,
    .unlock = clh_unlock,
    .destroy = clh_destroy,
};
