/*
 * clock.c - clocks, busy work and sleeping until a time (clock.h).
 */
#include "clock.h"

#include <errno.h>

void lb_spin_ns(uint64_t ns)
{
	uint64_t end = lb_now_ns() + ns;
	while (lb_now_ns() < end)
		lb_work(16);
}

long long lb_realtime_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

void lb_sleep_until(clockid_t clock, uint64_t ns)
{
	struct timespec ts = lb_ns_timespec(ns);
	while (clock_nanosleep(clock, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}
