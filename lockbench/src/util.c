#include "util.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

long lb_futex_wait_shared(_Atomic int *word, int expected)
{
	return syscall(SYS_futex, word, FUTEX_WAIT, expected, NULL, NULL, 0);
}

long lb_futex_wake_shared(_Atomic int *word, int count)
{
	return syscall(SYS_futex, word, FUTEX_WAKE, count, NULL, NULL, 0);
}

static struct timespec ns_timespec(uint64_t ns)
{
	return (struct timespec){(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
}

long lb_futex_wait_ns(_Atomic int *word, int expected, uint64_t ns, bool shared)
{
	struct timespec ts = ns_timespec(ns);
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

char **lb_split_list(const char *s, const char *what, int *n, char *err, size_t errlen)
{
	size_t cap = 2;
	char **v;
	const char *p = s;

	*n = 0;
	if (!*s) {
		snprintf(err, errlen, "%s: empty list", what);
		return NULL;
	}
	for (const char *q = s; *q; q++)
		cap += *q == ',';
	v = calloc(cap, sizeof(*v));
	if (!v)
		goto oom;
	for (;;) {
		size_t len = strcspn(p, ",");

		if (len == 0) {
			snprintf(err, errlen, "%s: empty element in '%s'", what, s);
			lb_free_list(v);
			*n = 0;
			return NULL;
		}
		v[*n] = strndup(p, len);
		if (!v[*n])
			goto oom;
		(*n)++;
		if (!p[len])
			return v;
		p += len + 1;
	}
oom:
	snprintf(err, errlen, "%s: out of memory", what);
	lb_free_list(v);
	*n = 0;
	return NULL;
}

void lb_free_list(char **v)
{
	if (!v)
		return;
	for (char **p = v; *p; p++)
		free(*p);
	free(v);
}

int lb_parse_int_list(const char *s, long long min, long long max, int **out, const char *what,
                      char *err, size_t errlen)
{
	int n, i;
	char **tok = lb_split_list(s, what, &n, err, errlen);
	int *vals;

	if (!tok)
		return -1;
	vals = calloc((size_t)n, sizeof(*vals));
	if (!vals) {
		snprintf(err, errlen, "%s: out of memory", what);
		lb_free_list(tok);
		return -1;
	}
	for (i = 0; i < n; i++) {
		long long v;

		if (lb_parse_int(tok[i], min, max, &v, what, err, errlen) < 0) {
			free(vals);
			lb_free_list(tok);
			return -1;
		}
		vals[i] = (int)v;
	}
	lb_free_list(tok);
	*out = vals;
	return n;
}

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

long long lb_realtime_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

void lb_sleep_until(clockid_t clock, uint64_t ns)
{
	struct timespec ts = ns_timespec(ns);
	while (clock_nanosleep(clock, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
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

void lb_pathf(char *out, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(out, len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= len) {
		fprintf(stderr, "lockbench: name too long: %.60s...\n", out);
		exit(1);
	}
}

bool lb_is_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

bool lb_is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

void lb_exe_dir(char *out, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", out, len - 1);
	if (n <= 0) {
		lb_pathf(out, len, ".");
		return;
	}
	out[n] = 0;
	char *slash = strrchr(out, '/');
	if (slash && slash != out)
		*slash = 0;
}
