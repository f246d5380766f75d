/*
 * args.c - option values: integers, lists, a command's options (args.h).
 */
#include "args.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"

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

int lb_opts_parse(const struct opt_table *t, int argc, char **argv)
{
	char *name = argv[0];
	int rc;

	argv[0] = (char *)t->prog; /* read, never written */
	rc = opts_parse(t, argc, argv);
	argv[0] = name;
	return rc;
}
