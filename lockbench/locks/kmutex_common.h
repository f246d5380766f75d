/*
 * kmutex_common.h - what the two kernel-mutex models share: the per-thread
 * "task" whose address is the owner, the FIFO wait list, and the way a
 * waiter sleeps and is woken.
 *
 * A waiter lives on the sleeping thread's stack, is linked on the lock's
 * wait_list under wait_lock, and sleeps on its own futex word `state`
 * (TASK_SLEEPING, set under wait_lock as set_current_state does).  The
 * waker sets TASK_RUNNING under wait_lock, while the waiter is certainly
 * still listed, and issues the FUTEX_WAKE: under wait_lock in the 2009 model
 * (wake_up_process), after dropping it in the 2016 model (wake_q); a late
 * FUTEX_WAKE on a waiter that has already left is harmless.
 */
#ifndef LOCKBENCH_KMUTEX_COMMON_H
#define LOCKBENCH_KMUTEX_COMMON_H

#include "lock_internal.h"

#define TASK_RUNNING  0u
#define TASK_SLEEPING 1u

/*
 * Stands in for task_struct: only its address matters (the owner word).
 * Cache-line aligned, so the low bits of the address are free for flags.
 */
struct kmutex_task {
	_Alignas(LB_CACHELINE) char unused;
};

struct kmutex_list {
	struct kmutex_list *next, *prev;
};

struct kmutex_waiter {
	struct kmutex_list list; /* first member: a list entry is the waiter */
	struct kmutex_task *task;
	atomic_uint state; /* futex word: TASK_SLEEPING or TASK_RUNNING */
};

static _Thread_local struct kmutex_task kmutex_current_task;

/* The kernel's `current`. */
static inline struct kmutex_task *kmutex_current(void)
{
	return &kmutex_current_task;
}

static inline void kmutex_list_init(struct kmutex_list *head)
{
	head->next = head;
	head->prev = head;
}

static inline bool kmutex_list_empty(const struct kmutex_list *head)
{
	return head->next == head;
}

static inline void kmutex_list_add_tail(struct kmutex_list *entry, struct kmutex_list *head)
{
	entry->prev = head->prev;
	entry->next = head;
	head->prev->next = entry;
	head->prev = entry;
}

static inline void kmutex_list_del(struct kmutex_list *entry)
{
	entry->prev->next = entry->next;
	entry->next->prev = entry->prev;
	entry->next = entry->prev = NULL;
}

/* The first waiter, or NULL; caller holds wait_lock. */
static inline struct kmutex_waiter *kmutex_first_waiter(struct kmutex_list *head)
{
	return kmutex_list_empty(head) ? NULL : (struct kmutex_waiter *)head->next;
}

/* set_current_state(): relaxed, wait_lock or a later lock operation orders it */
static inline void kmutex_set_state(struct kmutex_waiter *waiter, unsigned int state)
{
	atomic_store_explicit(&waiter->state, state, memory_order_relaxed);
}

/* schedule(): sleep until a waker has set TASK_RUNNING */
static inline void kmutex_schedule(struct kmutex_waiter *waiter)
{
	/* acquire: pairs with the release in kmutex_wake_mark */
	while (atomic_load_explicit(&waiter->state, memory_order_acquire) == TASK_SLEEPING)
		futex_wait(&waiter->state, TASK_SLEEPING);
}

/* The first half of wake_up_process(); caller holds wait_lock. */
static inline void kmutex_wake_mark(struct kmutex_waiter *waiter)
{
	atomic_store_explicit(&waiter->state, TASK_RUNNING, memory_order_release);
}

#endif
