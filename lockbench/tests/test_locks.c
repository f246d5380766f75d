/*
 * test_locks.c - unit tests for every lock behind struct lock_ops.
 *
 * One cmocka test per (property, lock), named "property/lock", for every
 * lock that is not test_only: single-thread lock/trylock/unlock semantics,
 * mutual exclusion of a plain counter under contention (lock, and a mix of
 * trylock and lock), nesting two and LB_MAX_NESTED locks of one kind, and for
 * the locks that promise it, that no hammering thread starves.  Contended
 * runs are joined against a watchdog: a lockup fails the test (naming the
 * lock) instead of hanging it.  Fair spinlocks collapse when threads
 * outnumber CPUs, so spinning locks run fewer iterations.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lock.h"

#define NTHREADS         4
#define ITERS_SLEEPING   20000
#define ITERS_SPINNING   2000
#define ITERS_STARVATION 50000
#define WATCHDOG_S       60

/* Protected by the lock under test; deliberately not atomic. */
static unsigned long counter;

struct hammer {
	const struct lock_ops *ops;
	void *a;
	void *b; /* taken inside a when not NULL */
	unsigned long iters;
	bool use_trylock;
	unsigned long done; /* written by the thread, read after join */
	pthread_t thread;
};

static void relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ volatile("yield" ::: "memory");
#else
	__asm__ volatile("" ::: "memory");
#endif
}

static const struct lock_ops *test_ops(void **state)
{
	return *state;
}

static unsigned long iters_for(const struct lock_ops *ops)
{
	return ops->sleeps ? ITERS_SLEEPING : ITERS_SPINNING;
}

static void *new_lock(const struct lock_ops *ops)
{
	void *lock = lock_new(ops);

	if (!lock)
		fail_msg("%s: lock_new failed: %s", ops->name, strerror(errno));
	return lock;
}

static void *hammer_thread(void *arg)
{
	struct hammer *h = arg;

	for (unsigned long i = 0; i < h->iters; i++) {
		unsigned long v;

		if (!(h->use_trylock && (i & 1) && h->ops->trylock(h->a)))
			h->ops->lock(h->a);
		if (h->b)
			h->ops->lock(h->b);
		/* read, wait a little, write: a second holder would lose an update */
		v = counter;
		for (int k = 0; k < 4; k++)
			relax();
		counter = v + 1;
		if (h->b)
			h->ops->unlock(h->b);
		h->ops->unlock(h->a);
		h->done++;
	}
	return NULL;
}

/*
 * Run NTHREADS hammer threads on a (and b inside it).  Fails the test when
 * they have not all finished within WATCHDOG_S; the threads and locks are
 * then leaked on purpose, since lockup victims cannot be reclaimed.
 */
static void run_hammer(const struct lock_ops *ops, void *a, void *b, unsigned long iters,
		       bool use_trylock)
{
	struct hammer *h = calloc(NTHREADS, sizeof(*h));
	struct timespec deadline;

	assert_non_null(h);
	counter = 0;
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += WATCHDOG_S;
	for (int i = 0; i < NTHREADS; i++) {
		h[i] = (struct hammer){
			.ops = ops, .a = a, .b = b, .iters = iters, .use_trylock = use_trylock};
		if (pthread_create(&h[i].thread, NULL, hammer_thread, &h[i]) != 0)
			fail_msg("%s: cannot create thread %d", ops->name, i);
	}
	for (int i = 0; i < NTHREADS; i++) {
		int err = pthread_timedjoin_np(h[i].thread, NULL, &deadline);

		if (err == ETIMEDOUT)
			fail_msg("%s: lockup: thread %d did %lu of %lu acquisitions in %d s",
				 ops->name, i, h[i].done, iters, WATCHDOG_S);
		if (err)
			fail_msg("%s: cannot join thread %d: %s", ops->name, i, strerror(err));
	}
	for (int i = 0; i < NTHREADS; i++)
		if (h[i].done != iters)
			fail_msg("%s: thread %d did %lu of %lu acquisitions", ops->name, i,
				 h[i].done, iters);
	if (counter != NTHREADS * iters)
		fail_msg("%s: mutual exclusion violated: counter %lu, expected %lu", ops->name,
			 counter, NTHREADS * iters);
	free(h);
}

struct try_arg {
	const struct lock_ops *ops;
	void *lock;
	bool unlock_after; /* unlock again when the trylock succeeded */
	bool got;
};

static void *try_thread(void *arg)
{
	struct try_arg *t = arg;

	t->got = t->ops->trylock(t->lock);
	if (t->got && t->unlock_after)
		t->ops->unlock(t->lock);
	return NULL;
}

/* trylock from another thread; returns whether it took the lock */
static bool trylock_elsewhere(const struct lock_ops *ops, void *lock, bool unlock_after)
{
	struct try_arg t = {.ops = ops, .lock = lock, .unlock_after = unlock_after};
	pthread_t thread;

	if (pthread_create(&thread, NULL, try_thread, &t) != 0)
		fail_msg("%s: cannot create thread", ops->name);
	pthread_join(thread, NULL);
	return t.got;
}

static void test_single_thread(void **state)
{
	const struct lock_ops *ops = test_ops(state);
	void *lock = new_lock(ops);

	ops->lock(lock);
	if (trylock_elsewhere(ops, lock, true))
		fail_msg("%s: trylock from another thread took a held lock", ops->name);
	ops->unlock(lock);

	if (!trylock_elsewhere(ops, lock, true))
		fail_msg("%s: trylock from another thread failed on a free lock", ops->name);
	if (!ops->trylock(lock))
		fail_msg("%s: trylock failed on a free lock", ops->name);
	if (trylock_elsewhere(ops, lock, true))
		fail_msg("%s: trylock from another thread took a trylocked lock", ops->name);
	ops->unlock(lock);

	for (int i = 0; i < 1000; i++) {
		ops->lock(lock);
		ops->unlock(lock);
		if (!ops->trylock(lock))
			fail_msg("%s: trylock failed on a free lock (round %d)", ops->name, i);
		ops->unlock(lock);
	}
	if (!trylock_elsewhere(ops, lock, true))
		fail_msg("%s: lock not free after the lock/unlock rounds", ops->name);
	lock_free(ops, lock);
}

static void test_mutual_exclusion(void **state)
{
	const struct lock_ops *ops = test_ops(state);
	void *lock = new_lock(ops);

	run_hammer(ops, lock, NULL, iters_for(ops), false);
	lock_free(ops, lock);
}

static void test_mutual_exclusion_trylock(void **state)
{
	const struct lock_ops *ops = test_ops(state);
	void *lock = new_lock(ops);

	run_hammer(ops, lock, NULL, iters_for(ops), true);
	lock_free(ops, lock);
}

static void test_nesting(void **state)
{
	const struct lock_ops *ops = test_ops(state);
	void *locks[LB_MAX_NESTED];

	for (int i = 0; i < LB_MAX_NESTED; i++)
		locks[i] = new_lock(ops);

	/* A then B, unlock B then A; then unlock in acquisition order */
	ops->lock(locks[0]);
	ops->lock(locks[1]);
	if (trylock_elsewhere(ops, locks[1], true))
		fail_msg("%s: nested lock B not held", ops->name);
	ops->unlock(locks[1]);
	if (trylock_elsewhere(ops, locks[0], true))
		fail_msg("%s: outer lock A not held after unlocking B", ops->name);
	ops->unlock(locks[0]);
	ops->lock(locks[0]);
	ops->lock(locks[1]);
	ops->unlock(locks[0]);
	if (trylock_elsewhere(ops, locks[1], true))
		fail_msg("%s: lock B not held after unlocking A first", ops->name);
	ops->unlock(locks[1]);

	/* every node of a thread's pool in use at once, trylock included */
	for (int i = 0; i < LB_MAX_NESTED; i++) {
		if (i & 1)
			ops->lock(locks[i]);
		else if (!ops->trylock(locks[i]))
			fail_msg("%s: trylock of free nested lock %d failed", ops->name, i);
	}
	for (int i = 0; i < LB_MAX_NESTED; i++)
		if (trylock_elsewhere(ops, locks[i], true))
			fail_msg("%s: nested lock %d of %d not held", ops->name, i, LB_MAX_NESTED);
	for (int i = 0; i < LB_MAX_NESTED; i++)
		ops->unlock(locks[(i * 3) % LB_MAX_NESTED]); /* 3 is coprime to 8: a shuffle */
	for (int i = 0; i < LB_MAX_NESTED; i++)
		if (!trylock_elsewhere(ops, locks[i], true))
			fail_msg("%s: nested lock %d not free after unlock", ops->name, i);

	/* contended: everyone takes A then B */
	run_hammer(ops, locks[0], locks[1], iters_for(ops) / 2, false);

	for (int i = 0; i < LB_MAX_NESTED; i++)
		lock_free(ops, locks[i]);
}

static void test_no_starvation(void **state)
{
	const struct lock_ops *ops = test_ops(state);
	void *lock = new_lock(ops);

	/* run_hammer checks that every thread completed its count in time */
	run_hammer(ops, lock, NULL, ITERS_STARVATION, false);
	lock_free(ops, lock);
}

static void test_registry(void **state)
{
	const struct lock_ops *const *all = lock_all();
	int n = 0;

	assert_non_null(all);
	assert_null(lock_find("nonexistent"));
	assert_null(lock_find(""));
	for (int i = 0; all[i]; i++, n++) {
		const struct lock_ops *ops = all[i];

		assert_non_null(ops->name);
		if (lock_find(ops->name) != ops)
			fail_msg("%s: lock_find does not return it", ops->name);
		for (int j = 0; j < i; j++)
			if (strcmp(all[j]->name, ops->name) == 0)
				fail_msg("%s: name listed twice", ops->name);
		if (!ops->description || !ops->description[0])
			fail_msg("%s: no description", ops->name);
		if (ops->size == 0 || !ops->init || !ops->lock || !ops->trylock || !ops->unlock ||
		    !ops->destroy)
			fail_msg("%s: incomplete lock_ops", ops->name);
	}
	assert_string_equal(all[0]->name, "pthread");
	assert_true(n >= 12);
	for (int i = 0; i < 12; i++)
		if (all[i]->test_only)
			fail_msg("%s: a benchmark lock flagged test_only", all[i]->name);
#ifdef LB_TEST_LOCKS
	const struct lock_ops *broken = lock_find("broken-lostwake");

	assert_non_null(broken);
	assert_true(broken->test_only);
#endif
}

/* Locks that promise every waiter eventually gets the lock. */
static bool promises_no_starvation(const struct lock_ops *ops)
{
	return strcmp(ops->name, "kmutex") == 0 || strcmp(ops->name, "parking") == 0;
}

static bool always(const struct lock_ops *ops)
{
	return true;
}

struct property {
	const char *name;
	CMUnitTestFunction fn;
	bool (*applies)(const struct lock_ops *ops);
};

static const struct property properties[] = {
	{"single_thread", test_single_thread, always},
	{"mutual_exclusion", test_mutual_exclusion, always},
	{"mutual_exclusion_trylock", test_mutual_exclusion_trylock, always},
	/* needed by the queue locks (per-thread nodes), cheap for the others */
	{"nesting", test_nesting, always},
	{"no_starvation", test_no_starvation, promises_no_starvation},
};

int main(void)
{
	const struct lock_ops *const *all = lock_all();
	size_t nprops = sizeof(properties) / sizeof(properties[0]);
	size_t nlocks = 0, n = 0;
	struct CMUnitTest *tests;
	int failed;

	while (all[nlocks])
		nlocks++;
	tests = calloc(1 + nlocks * nprops, sizeof(*tests));
	if (!tests)
		return 1;
	tests[n++] = (struct CMUnitTest){.name = "registry", .test_func = test_registry};
	for (size_t p = 0; p < nprops; p++) {
		for (size_t l = 0; l < nlocks; l++) {
			const struct lock_ops *ops = all[l];
			char *name;

			if (ops->test_only || !properties[p].applies(ops))
				continue;
			if (asprintf(&name, "%s/%s", properties[p].name, ops->name) < 0)
				return 1;
			tests[n++] = (struct CMUnitTest){.name = name,
							 .test_func = properties[p].fn,
							 .initial_state = (void *)ops};
		}
	}
	failed = _cmocka_run_group_tests("locks", tests, n, NULL, NULL);
	for (size_t i = 1; i < n; i++)
		free((char *)tests[i].name);
	free(tests);
	return failed;
}
