/*
 * futexwait.h - futex(2) waits and wakes, and the start gate of a point's threads (futexwait.c).
 */
#ifndef LOCKBENCH_FUTEXWAIT_H
#define LOCKBENCH_FUTEXWAIT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

long lb_futex_wait(_Atomic int *word, int expected);
long lb_futex_wake(_Atomic int *word, int count);
/* The same on a word that processes share (MAP_SHARED): not private futexes. */
long lb_futex_wait_shared(_Atomic int *word, int expected);
long lb_futex_wake_shared(_Atomic int *word, int count);
/* lb_futex_wait (lb_futex_wait_shared when shared) for at most ns nanoseconds. */
long lb_futex_wait_ns(_Atomic int *word, int expected, uint64_t ns, bool shared);
/*
 * Wait until *word >= target, woken through lb_futex_wake (threads of one
 * process), at most ms milliseconds: 0 when it got there, -1 when ms passed
 * first (the word as it was then in *last, if not NULL).
 */
int lb_wait_reaches(_Atomic int *word, int target, int ms, int *last);

/*
 * A start gate: threads wait until the coordinator opens it.  Unlike a
 * barrier it can be opened whatever number of threads were created.
 */
struct lb_gate {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int open;
};
void lb_gate_init(struct lb_gate *g);
void lb_gate_wait(struct lb_gate *g);
void lb_gate_open(struct lb_gate *g);
void lb_gate_destroy(struct lb_gate *g);

#endif
