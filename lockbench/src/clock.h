/*
 * clock.h - clocks, busy work and sleeping until a time (clock.c).
 */
#ifndef LOCKBENCH_CLOCK_H
#define LOCKBENCH_CLOCK_H

#include <stdint.h>
#include <time.h>

/* ns nanoseconds as a timespec */
static inline struct timespec lb_ns_timespec(uint64_t ns)
{
	return (struct timespec){(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
}

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

/* CLOCK_REALTIME in ns since the epoch. */
long long lb_realtime_ns(void);
/*
 * Sleep until clock (CLOCK_MONOTONIC: lb_now_ns; CLOCK_REALTIME: ns since
 * the epoch) reaches ns; at once when past.
 */
void lb_sleep_until(clockid_t clock, uint64_t ns);

#endif
