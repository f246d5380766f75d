/*
 * cpus.h - online CPUs, CPU lists, pinning (cpus.c).
 */
#ifndef LOCKBENCH_CPUS_H
#define LOCKBENCH_CPUS_H

#include <stddef.h>

int lb_online_cpus(void);

/*
 * A CPU list "0,1" or "0-3,6": check it (every CPU from 0 to 1023; set may
 * be NULL) and fill *set.  Returns 0 or -1 with a reason in err.
 */
int lb_cpus_parse(const char *list, void *set, char *err, size_t errlen);
/* Pin the calling thread (and what it starts later) to the CPUs of list. */
int lb_cpus_pin(const char *list, char *err, size_t errlen);

#endif
