/*
 * util.h - small helpers every lockbench file uses: clocks, busy work,
 * futex(2), list parsing.
 */
#ifndef LOCKBENCH_UTIL_H
#define LOCKBENCH_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

static inline uint64_t lb_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Burn about loops iterations of work the compiler cannot remove. */
static inline void lb_work(unsigned loops)
{
	for (unsigned i = 0; i < loops; i++)
		__asm__ volatile("" ::: "memory");
}

/* Spin (not sleep) for ns nanoseconds: a lock hold that keeps the CPU. */
void lb_spin_ns(uint64_t ns);

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

/* The largest thread count --threads (and --writers) accept. */
#define LB_THREADS_MAX 4096

/*
 * Split "a,b,c" into a new NULL-terminated array of new strings (free with
 * lb_free_list), the count in *n.  An empty list or an empty element ("a,,b",
 * a leading or trailing comma) is refused: NULL with a reason in err.
 */
char **lb_split_list(const char *s, const char *what, int *n, char *err, size_t errlen);
void lb_free_list(char **v);

/*
 * Parse "1,2,4,8" into a new array of ints from min to max (caller frees).
 * Returns the count, or -1 with a reason in err.
 */
int lb_parse_int_list(const char *s, long long min, long long max, int **out, const char *what,
                      char *err, size_t errlen);

/*
 * Parse a non-negative integer option value; returns 0 or -1 with a reason.
 * min/max bound the value.
 */
int lb_parse_int(const char *s, long long min, long long max, long long *out, const char *what,
                 char *err, size_t errlen);

int lb_online_cpus(void);

/*
 * A CPU list "0,1" or "0-3,6": check it (every CPU from 0 to 1023; set may
 * be NULL) and fill *set.  Returns 0 or -1 with a reason in err.
 */
int lb_cpus_parse(const char *list, void *set, char *err, size_t errlen);
/* Pin the calling thread (and what it starts later) to the CPUs of list. */
int lb_cpus_pin(const char *list, char *err, size_t errlen);
/* CLOCK_REALTIME in ns since the epoch. */
long long lb_realtime_ns(void);
/*
 * Sleep until clock (CLOCK_MONOTONIC: lb_now_ns; CLOCK_REALTIME: ns since
 * the epoch) reaches ns; at once when past.
 */
void lb_sleep_until(clockid_t clock, uint64_t ns);

/*
 * snprintf that refuses to truncate: paths and command lines must be whole.
 * On truncation it says so on stderr and exits 1.
 */
void lb_pathf(char *out, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
bool lb_is_file(const char *path);
bool lb_is_dir(const char *path);
/* The folder this program lives in (build/), "." when unknown. */
void lb_exe_dir(char *out, size_t len);

/*
 * A start gate: threads wait until the coordinator opens it.  Unlike a
 * barrier it can be opened whatever number of threads were created.
 */
#include <pthread.h>
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
