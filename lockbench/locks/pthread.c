/*
 * pthread.c - glibc's mutexes, the baselines every table is read against.
 *
 * `pthread` is the default (PTHREAD_MUTEX_NORMAL) mutex: one CAS to lock,
 * futex sleep under contention (glibc's lowlevellock, Drepper's mutex #3).
 * `pthread-adaptive` is PTHREAD_MUTEX_ADAPTIVE_NP: glibc spins a bounded,
 * self-tuning number of trylocks before it sleeps.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "lock_internal.h"

static int mutex_init_type(void *lock, int type)
{
	pthread_mutexattr_t attr;
	int err;

	err = pthread_mutexattr_init(&attr);
	if (err)
		return err;
	err = pthread_mutexattr_settype(&attr, type);
	if (!err)
		err = pthread_mutex_init(lock, &attr);
	pthread_mutexattr_destroy(&attr);
	return err;
}

static int mutex_init_default(void *lock)
{
	return mutex_init_type(lock, PTHREAD_MUTEX_NORMAL);
}

static int mutex_init_adaptive(void *lock)
{
	return mutex_init_type(lock, PTHREAD_MUTEX_ADAPTIVE_NP);
}

static void mutex_lock(void *lock)
{
	int err = pthread_mutex_lock(lock);

	if (err) {
		fprintf(stderr, "lockbench: pthread_mutex_lock failed with error %d\n", err);
		abort();
	}
}

static bool mutex_trylock(void *lock)
{
	return pthread_mutex_trylock(lock) == 0;
}

static void mutex_unlock(void *lock)
{
	pthread_mutex_unlock(lock);
}

static void mutex_destroy(void *lock)
{
	pthread_mutex_destroy(lock);
}

const struct lock_ops lock_pthread_ops = {
    .name = "pthread",
    .description = "glibc default mutex (CAS, futex sleep)",
    .size = LB_LOCK_SIZE(pthread_mutex_t),
    .sleeps = true,
    .init = mutex_init_default,
    .lock = mutex_lock,
    .trylock = mutex_trylock,
    .unlock = mutex_unlock,
    .destroy = mutex_destroy,
};

const struct lock_ops lock_pthread_adaptive_ops = {
    .name = "pthread-adaptive",
    .description = "glibc PTHREAD_MUTEX_ADAPTIVE_NP (bounded spin, then futex sleep)",
    .size = LB_LOCK_SIZE(pthread_mutex_t),
    .sleeps = true,
    .init = mutex_init_adaptive,
    .lock = mutex_lock,
    .trylock = mutex_trylock,
    .unlock = mutex_unlock,
    .destroy = mutex_destroy,
};
