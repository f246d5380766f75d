/*
 * lock.h - the one interface every lockbench lock implements.
 *
 * A lock is a block of memory of ops->size bytes, aligned to LB_CACHELINE,
 * owned by the caller.  The caller calls init once before any other call and
 * destroy once after the last unlock.  lock/trylock/unlock are called from
 * any thread; a thread unlocks only a lock it holds.  A thread may hold
 * several different locks at once (up to LB_MAX_NESTED of the queue locks,
 * which need a per-thread node for each lock held).
 *
 * Locks are looked up by name (lock_find); lock_all lists them in the order
 * `lockbench list` prints.  Locks that exist only to prove the test harness
 * (for example one that loses wakeups) are compiled in only when
 * LB_TEST_LOCKS is defined and are flagged test_only.
 */
#ifndef LOCKBENCH_LOCK_H
#define LOCKBENCH_LOCK_H

#include <stdbool.h>
#include <stddef.h>

#define LB_CACHELINE  64
#define LB_MAX_NESTED 8

struct lock_ops {
	const char *name;        /* stable name used on the command line */
	const char *description; /* one line for `lockbench list` */
	size_t size;             /* bytes the caller allocates for one lock */
	bool sleeps;             /* true when waiters block in the kernel */
	bool test_only;          /* deliberately broken, test build only */
	/* returns 0 or an errno value */
	int (*init)(void *lock);
	void (*lock)(void *lock);
	/* returns true when the lock was taken */
	bool (*trylock)(void *lock);
	void (*unlock)(void *lock);
	void (*destroy)(void *lock);
};

/* Borrowed pointer to the lock called name, or NULL. */
const struct lock_ops *lock_find(const char *name);

/* Borrowed NULL-terminated array of every lock in this build. */
const struct lock_ops *const *lock_all(void);

/*
 * Allocate and init one lock of the given kind (aligned, zeroed).
 * Returns NULL on failure with errno set.  Release with lock_free.
 */
void *lock_new(const struct lock_ops *ops);
void lock_free(const struct lock_ops *ops, void *lock);

#endif
