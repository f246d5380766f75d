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
/* cmocka needs these first */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lock.h"
#include "lock_internal.h" /* cpu_relax */

#define NTHREADS         4
#define ITERS_SLEEPING   20000
#define ITERS_SPINNING   400 /* fair spinlocks manage a few hundred/s oversubscribed */
#define ITERS_STARVATION 50000
#define STALL_S          20 /* no acquisition by any thread for this long: lockup */

/* One contended run; shared by its threads, leaked if they lock up. */
struct hammer_run {
	const struct lock_ops *ops;
	void *a;
	void *b; /* taken inside a when not NULL */
	unsigned long iters;
	bool use_trylock;
	unsigned long counter; /* protected by the lock under test; not atomic on purpose */
	atomic_bool stop;      /* set when the watchdog gives up */
	atomic_int finished;   /* threads that returned */
	struct hammer_thread {
		struct hammer_run *run;
		pthread_t thread;
		atomic_ulong done; /* acquisitions so far, read by the watchdog */
	} t[NTHREADS];
};

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
	struct hammer_thread *t = arg;
	struct hammer_run *r = t->run;
	const struct lock_ops *ops = r->ops;

	for (unsigned long i = 0; i < r->iters; i++) {
		unsigned long v;

		if (atomic_load_explicit(&r->stop, memory_order_relaxed))
			break;
		if (!(r->use_trylock && (i & 1) && ops->trylock(r->a)))
			ops->lock(r->a);
		if (r->b)
			ops->lock(r->b);
		/* read, wait a little, write: a second holder would lose an update */
		v = r->counter;
		for (int k = 0; k < 4; k++)
			cpu_relax();
		r->counter = v + 1;
		if (r->b)
			ops->unlock(r->b);
		ops->unlock(r->a);
		atomic_store_explicit(&t->done, i + 1, memory_order_relaxed);
	}
	atomic_fetch_add(&r->finished, 1);
	return NULL;
}

static unsigned long hammer_progress(struct hammer_run *r)
{
	unsigned long sum = 0;

	for (int i = 0; i < NTHREADS; i++)
		sum += atomic_load_explicit(&r->t[i].done, memory_order_relaxed);
	return sum;
}

/*
 * Run NTHREADS threads taking a (and b inside it) iters times each, then
 * check that each finished and that no increment of the counter was lost.
 * Fails the test when no thread acquires for STALL_S seconds; the run (its
 * threads, and the caller's locks) is then leaked on purpose, since
 * lockup victims cannot be reclaimed, and told to stop so that slow but
 * live threads do not run on into the next test.
 */
static void run_hammer(const struct lock_ops *ops, void *a, void *b, unsigned long iters,
                       bool use_trylock)
{
	struct hammer_run *r = calloc(1, sizeof(*r));
	unsigned long last = 0;
	int idle_ms = 0;

	assert_non_null(r);
	r->ops = ops;
	r->a = a;
	r->b = b;
	r->iters = iters;
	r->use_trylock = use_trylock;
	for (int i = 0; i < NTHREADS; i++) {
		r->t[i].run = r;
		if (pthread_create(&r->t[i].thread, NULL, hammer_thread, &r->t[i]) != 0)
			fail_msg("%s: cannot create thread %d", ops->name, i);
	}
	while (atomic_load(&r->finished) < NTHREADS) {
		unsigned long now;

		nanosleep(&(struct timespec){.tv_nsec = 10 * 1000 * 1000}, NULL);
		now = hammer_progress(r);
		idle_ms = now == last ? idle_ms + 10 : 0;
		last = now;
		if (idle_ms >= STALL_S * 1000) {
			atomic_store(&r->stop, true);
			fail_msg("%s: lockup: no acquisition for %d s, %lu of %lu done", ops->name,
			         STALL_S, now, NTHREADS * iters);
		}
	}
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(r->t[i].thread, NULL);
	for (int i = 0; i < NTHREADS; i++)
		if (atomic_load(&r->t[i].done) != iters)
			fail_msg("%s: thread %d did %lu of %lu acquisitions", ops->name, i,
			         atomic_load(&r->t[i].done), iters);
	if (r->counter != NTHREADS * iters)
		fail_msg("%s: mutual exclusion violated: counter %lu, expected %lu", ops->name,
		         r->counter, NTHREADS * iters);
	free(r);
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
