/*
 * cpus.c - online CPUs, CPU lists, pinning (cpus.h).
 */
#include "cpus.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int lb_online_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (int)n : 1;
}

int lb_cpus_parse(const char *list, void *set, char *err, size_t errlen)
{
	const char *p = list;
	cpu_set_t *cs = set;

	if (cs)
		CPU_ZERO(cs);
	if (!*p) {
		snprintf(err, errlen, "--cpus: empty list");
		return -1;
	}
	while (*p) {
		char *end;
		long lo = strtol(p, &end, 10), hi;
		if (end == p || *p < '0' || *p > '9' || lo > 1023)
			goto bad;
		hi = lo;
		if (*end == '-') {
			p = end + 1;
			hi = strtol(p, &end, 10);
			if (end == p || *p < '0' || *p > '9' || hi < lo || hi > 1023)
				goto bad;
		}
		for (long c = lo; cs && c <= hi; c++)
			CPU_SET((int)c, cs);
		if (*end == ',' && end[1])
			end++;
		else if (*end)
			goto bad;
		p = end;
	}
	return 0;
bad:
	snprintf(err, errlen, "--cpus: '%s' is not a list of CPUs like 0,1 or 0-3", list);
	return -1;
}

int lb_cpus_pin(const char *list, char *err, size_t errlen)
{
	cpu_set_t cs;

	if (lb_cpus_parse(list, &cs, err, errlen))
		return -1;
	if (sched_setaffinity(0, sizeof(cs), &cs)) {
		snprintf(err, errlen, "--cpus %s: %s", list, strerror(errno));
		return -1;
	}
	return 0;
}
