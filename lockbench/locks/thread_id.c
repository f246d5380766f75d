/*
 * thread_id.c - small per-thread indices for locks that encode a thread in a
 * few bits of a lock word (qspinlock's tail) or keep per-thread nodes in a
 * static table (qspinlock's MCS nodes, the kmutex OSQ).  The kernel uses the
 * CPU number for this; userspace uses an index handed out on a thread's
 * first use and given back when the thread exits, so a long benchmark that
 * creates many short-lived threads never runs out.
 */
#include <pthread.h>
#include <stdint.h>

#include "lock_internal.h"

#define TID_UNSET (-2)
#define TID_NONE  (-1)

static pthread_once_t tid_once = PTHREAD_ONCE_INIT;
static pthread_key_t tid_key;
static bool tid_key_ok;
static pthread_mutex_t tid_mutex = PTHREAD_MUTEX_INITIALIZER;
static int tid_next;                 /* never handed out yet, under tid_mutex */
static int tid_free[LB_MAX_THREADS]; /* given back by exited threads */
static int tid_nr_free;              /* under tid_mutex */
static _Thread_local int tid = TID_UNSET;

/* Key destructor: runs when a thread that took an index exits. */
static void tid_release(void *value)
{
	pthread_mutex_lock(&tid_mutex);
	tid_free[tid_nr_free++] = (int)(uintptr_t)value - 1;
	pthread_mutex_unlock(&tid_mutex);
}

static void tid_key_create(void)
{
	tid_key_ok = pthread_key_create(&tid_key, tid_release) == 0;
}

static int tid_assign(void)
{
	int id = TID_NONE;

	pthread_once(&tid_once, tid_key_create);
	pthread_mutex_lock(&tid_mutex);
	if (tid_nr_free > 0)
		id = tid_free[--tid_nr_free];
	else if (tid_next < LB_MAX_THREADS)
		id = tid_next++;
	pthread_mutex_unlock(&tid_mutex);
	/* without the key the index is never given back, which is only a leak */
	if (id >= 0 && tid_key_ok)
		pthread_setspecific(tid_key, (void *)(uintptr_t)(id + 1));
	return id;
}

int lb_thread_id(void)
{
	if (__builtin_expect(tid == TID_UNSET, 0))
		tid = tid_assign();
	return tid;
}
