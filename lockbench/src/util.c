#include "util.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

void lb_spin_ns(uint64_t ns)
{
	uint64_t end = lb_now_ns() + ns;
	while (lb_now_ns() < end)
		lb_work(16);
}

long lb_futex_wait(_Atomic int *word, int expected)
{
	return syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, expected, NULL, NULL, 0);
}

long lb_futex_wake(_Atomic int *word, int count)
{
	return syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, count, NULL, NULL, 0);
}

int lb_parse_int(const char *s, long long min, long long max, long long *out, const char *what,
                 char *err, size_t errlen)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (!*s || *end || errno) {
		snprintf(err, errlen, "%s: '%s' is not a whole number", what, s);
		return -1;
	}
	if (v < min || v > max) {
		snprintf(err, errlen, "%s: %lld is out of range (%lld to %lld)", what, v, min, max);
		return -1;
	}
	*out = v;
	return 0;
}

int lb_parse_int_list(const char *s, int **out, const char *what, char *err, size_t errlen)
{
	char *copy = strdup(s), *save = NULL, *tok;
	int *vals = NULL, n = 0, cap = 0, rc = -1;

	if (!copy) {
		snprintf(err, errlen, "%s: out of memory", what);
		return -1;
	}
	if (!*s) {
		snprintf(err, errlen, "%s: empty list", what);
		goto out;
	}
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		long long v;
		if (lb_parse_int(tok, 1, 4096, &v, what, err, errlen) < 0)
			goto out;
		if (n == cap) {
			int *nv;
			cap = cap ? cap * 2 : 8;
			nv = realloc(vals, cap * sizeof(*vals));
			if (!nv) {
				snprintf(err, errlen, "%s: out of memory", what);
				goto out;
			}
			vals = nv;
		}
		vals[n++] = (int)v;
	}
	if (n == 0) {
		snprintf(err, errlen, "%s: empty list", what);
		goto out;
	}
	*out = vals;
	vals = NULL;
	rc = n;
out:
	free(vals);
	free(copy);
	return rc;
}

int lb_online_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (int)n : 1;
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
