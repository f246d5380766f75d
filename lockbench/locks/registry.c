/*
 * registry.c - the table of locks, looked up by name, and their allocation.
 *
 * The order of lock_all() is the order `lockbench list` prints: baselines
 * first, then spinlocks from simplest to the kernel's, then sleeping locks.
 * The deliberately broken locks exist only in the test build (LB_TEST_LOCKS).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lock_internal.h"

static const struct lock_ops *const all_locks[] = {
    &lock_pthread_ops,
    &lock_pthread_adaptive_ops,
    &lock_tas_ops,
    &lock_ttas_ops,
    &lock_ticket_ops,
    &lock_mcs_ops,
    &lock_clh_ops,
    &lock_qspinlock_ops,
    &lock_futex3_ops,
    &lock_kmutex2009_ops,
    &lock_kmutex_ops,
    &lock_parking_ops,
#ifdef LB_TEST_LOCKS
    &lock_broken_lostwake_ops,
    &lock_delay_pthread_ops,
    &lock_kmutex_woken_steal_ops,
#endif
    NULL,
};

const struct lock_ops *lock_find(const char *name)
{
	if (!name)
		return NULL;
	for (const struct lock_ops *const *p = all_locks; *p; p++)
		if (strcmp((*p)->name, name) == 0)
			return *p;
	return NULL;
}

const struct lock_ops *const *lock_all(void)
{
	return all_locks;
}

void *lock_new(const struct lock_ops *ops)
{
	size_t size = (ops->size + LB_CACHELINE - 1) / LB_CACHELINE * LB_CACHELINE;
	void *lock;
	int err;

	if (size == 0)
		size = LB_CACHELINE;
	lock = aligned_alloc(LB_CACHELINE, size);
	if (!lock)
		return NULL;
	memset(lock, 0, size);
	err = ops->init(lock);
	if (err) {
		free(lock);
		errno = err;
		return NULL;
	}
	return lock;
}

void lock_free(const struct lock_ops *ops, void *lock)
{
	if (!lock)
		return;
	ops->destroy(lock);
	free(lock);
}
