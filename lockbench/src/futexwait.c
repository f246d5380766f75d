/*
 * futexwait.c - futex(2) waits and wakes, and the start gate of a point's threads (futexwait.h).
 */
#include "futexwait.h"

#include "clock.h"

#include <linux/futex.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <unistd.h>

long lb_futex_wait(_Atomic int *word, int expected)
{
	return syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, expected, NULL, NULL, 0);
}

long lb_futex_wake(_Atomic int *word, int count)
{
	return syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, count, NULL, NULL, 0);
}

long lb_futex_wait_shared(_Atomic int *word, int expected)
{
	return syscall(SYS_futex, word, FUTEX_WAIT, expected, NULL, NULL, 0);
}

long lb_futex_wake_shared(_Atomic int *word, int count)
{
	return syscall(SYS_futex, word, FUTEX_WAKE, count, NULL, NULL, 0);
}

long lb_futex_wait_ns(_Atomic int *word, int expected, uint64_t ns, bool shared)
{
	struct timespec ts = lb_ns_timespec(ns);
	return syscall(SYS_futex, word, shared ? FUTEX_WAIT : FUTEX_WAIT_PRIVATE, expected, &ts,
	               NULL, 0);
}

int lb_wait_reaches(_Atomic int *word, int target, int ms, int *last)
{
	uint64_t deadline = lb_now_ns() + (uint64_t)ms * 1000000;
	int k;

	while ((k = atomic_load(word)) < target) {
		uint64_t now = lb_now_ns();
		if (now >= deadline) {
			if (last)
				*last = k;
			return -1;
		}
		lb_futex_wait_ns(word, k, deadline - now, false);
	}
	return 0;
}

void lb_gate_init(struct lb_gate *g)
{
	pthread_mutex_init(&g->mu, NULL);
	pthread_cond_init(&g->cv, NULL);
	g->open = 0;
}

void lb_gate_wait(struct lb_gate *g)
{
	pthread_mutex_lock(&g->mu);
	while (!g->open)
		pthread_cond_wait(&g->cv, &g->mu);
	pthread_mutex_unlock(&g->mu);
}

void lb_gate_open(struct lb_gate *g)
{
	pthread_mutex_lock(&g->mu);
	g->open = 1;
	pthread_cond_broadcast(&g->cv);
	pthread_mutex_unlock(&g->mu);
}

void lb_gate_destroy(struct lb_gate *g)
{
	pthread_cond_destroy(&g->cv);
	pthread_mutex_destroy(&g->mu);
}
