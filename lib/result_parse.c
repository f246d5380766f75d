/*
 * result_parse.c - a lockbench-result/1 document read back from JSON under
 * strict validation (result.h).  docs/result-schema.md is the prose version
 * of what result_from_json accepts.
 */
#include "result.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "elfimage.h"
#include "result_internal.h"
#include "strutil.h"

#define DUMP_FLAGS (JSON_INDENT(1) | JSON_SORT_KEYS | JSON_REAL_PRECISION(10))
/* A result document of a whole suite is a few MB at most. */
#define LOAD_MAX ((size_t)256 << 20)

static int fail(char *err, size_t errlen, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int fail(char *err, size_t errlen, const char *path, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (path && *path)
		strutil_errf(err, errlen, "%s: %s", path, msg);
	else
		strutil_errf(err, errlen, "%s", msg);
	return -1;
}

static void join(char *dst, size_t n, const char *path, const char *key)
{
	if (path && *path)
		snprintf(dst, n, "%s.%s", path, key);
	else
		snprintf(dst, n, "%s", key);
}

/*
 * Every key of obj is in allowed, and every key of allowed is present except
 * those written with a leading '?' (optional).
 */
static int check_keys(const json_t *obj, const char *path, const char *const *allowed, char *err,
                      size_t errlen)
{
	const char *key;
	json_t *v;
	char p[512];

	json_object_foreach((json_t *)obj, key, v)
	{
		bool ok = false;
		for (size_t i = 0; allowed[i]; i++)
			if (strcmp(allowed[i] + (allowed[i][0] == '?'), key) == 0)
				ok = true;
		if (!ok) {
			join(p, sizeof(p), path, key);
			return fail(err, errlen, p, "unknown key");
		}
	}
	for (size_t i = 0; allowed[i]; i++) {
		if (allowed[i][0] != '?' && !json_object_get(obj, allowed[i])) {
			join(p, sizeof(p), path, allowed[i]);
			return fail(err, errlen, p, "missing");
		}
	}
	return 0;
}

/* A string of at most cap bytes at path, else -1 with err set. */
static int capped(const json_t *v, const char *path, size_t cap, char *err, size_t errlen)
{
	if (json_string_length(v) > cap)
		return fail(err, errlen, path, "a string of %zu bytes, over the %zu allowed",
		            json_string_length(v), cap);
	return 0;
}

/* A name (an object's key) of at most LB_MAX_KEY bytes in path, else -1 with err set. */
static int name_ok(const char *key, const char *path, char *err, size_t errlen)
{
	if (strlen(key) > LB_MAX_KEY)
		return fail(err, errlen, path, "a name of %zu bytes, over the %d allowed",
		            strlen(key), LB_MAX_KEY);
	return 0;
}

/* A number at path that reads back as itself from the server's store (result.h). */
static int number_ok(const json_t *v, const char *path, char *err, size_t errlen)
{
	double x = json_number_value(v);

	if (json_is_real(v) && fabs(x) >= LB_REAL_LIMIT)
		return fail(err, errlen, path,
		            "%.17g is out of range: magnitudes from 2^63 on are refused (stored "
		            "as jsonb, it would read back as an integer of %.0f digits, which is "
		            "not a number to jansson)",
		            x, floor(log10(fabs(x))) + 1);
	return 0;
}

/* obj.key, a string of at most cap bytes (0: LB_MAX_STRING, the machine's LB_MAX_MACHINE) */
static int get_str_cap(const json_t *obj, const char *path, const char *key, bool nonempty,
                       size_t cap, char **out, char *err, size_t errlen)
{
	json_t *v = json_object_get(obj, key);
	char p[512];

	join(p, sizeof(p), path, key);
	if (!json_is_string(v))
		return fail(err, errlen, p, "expected a string");
	if (nonempty && json_string_length(v) == 0)
		return fail(err, errlen, p, "expected a non-empty string");
	if (!cap)
		cap = strcmp(path, "machine") ? LB_MAX_STRING : LB_MAX_MACHINE;
	if (capped(v, p, cap, err, errlen))
		return -1;
	*out = strutil_xstrdup(json_string_value(v));
	return 0;
}

static int get_str(const json_t *obj, const char *path, const char *key, bool nonempty, char **out,
                   char *err, size_t errlen)
{
	return get_str_cap(obj, path, key, nonempty, 0, out, err, errlen);
}

static int get_int(const json_t *obj, const char *path, const char *key, int min, int *out,
                   char *err, size_t errlen)
{
	json_t *v = json_object_get(obj, key);
	char p[512];

	join(p, sizeof(p), path, key);
	if (!json_is_integer(v) || json_integer_value(v) < min || json_integer_value(v) > INT_MAX)
		return fail(err, errlen, p, "expected an integer >= %d", min);
	*out = (int)json_integer_value(v);
	return 0;
}

static bool variant_ok(const char *v)
{
	/* base-debug, patched-debug: a kernel job's debug pass (docs/api.md) */
	if (strcmp(v, "base") == 0 || strcmp(v, "patched") == 0 || strcmp(v, "base-debug") == 0 ||
	    strcmp(v, "patched-debug") == 0)
		return true;
	if (strncmp(v, "patch-", 6) != 0)
		return false;
	v += 6;
	if (*v < '1' || *v > '9')
		return false;
	size_t n = strspn(v, "0123456789");
	return v[n] == '\0' && n <= 6;
}

/* YYYY-MM-DDTHH:MM:SS[.fraction]Z */
static bool timestamp_ok(const char *s)
{
	static const char pat[] = "dddd-dd-ddTdd:dd:dd";
	size_t i;

	for (i = 0; pat[i]; i++) {
		if (pat[i] == 'd' ? (s[i] < '0' || s[i] > '9') : s[i] != pat[i])
			return false;
	}
	if (s[i] == '.') {
		size_t n = strspn(s + i + 1, "0123456789");
		if (!n)
			return false;
		i += 1 + n;
	}
	return s[i] == 'Z' && s[i + 1] == '\0';
}

static struct lb_metric *find_metric(struct lb_run *run, const char *name)
{
	return (struct lb_metric *)run_metric(run, name);
}

static int get_number_array(const json_t *a, const char *path, double **out, size_t *n, char *err,
                            size_t errlen)
{
	char p[600];
	size_t i;
	json_t *v;

	if (!json_is_array(a))
		return fail(err, errlen, path, "expected an array of numbers");
	if (json_array_size(a) == 0)
		return fail(err, errlen, path, "expected a non-empty array");
	*out = strutil_xreallocarray(NULL, json_array_size(a), sizeof(double));
	*n = json_array_size(a);
	json_array_foreach(a, i, v)
	{
		snprintf(p, sizeof(p), "%s[%zu]", path, i);
		if (!json_is_number(v))
			return fail(err, errlen, p, "expected a number");
		if (number_ok(v, p, err, errlen))
			return -1;
		(*out)[i] = json_number_value(v);
	}
	return 0;
}

/* One metric's disturbance object (see disturbance_to_json), every field capped. */
static int disturb_metric_from_json(const json_t *o, const char *p, struct lb_metric *m, char *err,
                                    size_t errlen)
{
	static const char *const keys[] = {"repeated", "limit_pct", "steal_pct",  "delay_pct",
	                                   "lost_pct", "nivcsw",    "migrations", NULL};
	char pk[700];
	json_t *lim;
	size_t n;

	if (!json_is_object(o))
		return fail(err, errlen, p, "expected an object");
	if (check_keys(o, p, keys, err, errlen) ||
	    get_int(o, p, "repeated", 0, &m->repeated, err, errlen))
		return -1;
	if (m->repeated > DISTURB_REPEATED_MAX) {
		snprintf(pk, sizeof(pk), "%s.repeated", p);
		return fail(err, errlen, pk, "more than %d", DISTURB_REPEATED_MAX);
	}
	lim = json_object_get(o, "limit_pct");
	if (!json_is_number(lim) || json_number_value(lim) < 0 || json_number_value(lim) > 100) {
		snprintf(pk, sizeof(pk), "%s.limit_pct", p);
		return fail(err, errlen, pk, "expected a number from 0 to 100");
	}
	m->disturb_limit_pct = json_number_value(lim);
	n = json_array_size(json_object_get(o, disturb_fields[0].name));
	if (n == 0 || n > DISTURB_ENTRIES_MAX) {
		snprintf(pk, sizeof(pk), "%s.%s", p, disturb_fields[0].name);
		return fail(err, errlen, pk, "expected an array of 1 to %d numbers",
		            DISTURB_ENTRIES_MAX);
	}
	m->disturb = strutil_xcalloc(n, sizeof(*m->disturb));
	m->ndisturb = n;
	for (size_t f = 0; f < NDISTURB_FIELDS; f++) {
		const json_t *a = json_object_get(o, disturb_fields[f].name);
		size_t i;
		json_t *v;

		snprintf(pk, sizeof(pk), "%s.%s", p, disturb_fields[f].name);
		if (!json_is_array(a) || json_array_size(a) != n)
			return fail(err, errlen, pk,
			            "expected an array of %zu numbers (one per sample)", n);
		json_array_foreach(a, i, v)
		{
			double x = json_number_value(v);
			if (!json_is_number(v) || !(x >= 0) || x > disturb_fields[f].max) {
				snprintf(pk, sizeof(pk), "%s.%s[%zu]", p, disturb_fields[f].name,
				         i);
				return fail(err, errlen, pk, "expected a number from 0 to %g",
				            disturb_fields[f].max);
			}
			*disturb_field(&m->disturb[i], f) = x;
		}
	}
	return 0;
}

/*
 * The optional object path.name = {metric: value}: every key must be a
 * metric of run; each value goes to per_metric with its path and metric.
 * 0, or -1 with err set.
 */
static int metric_map_from_json(const json_t *obj, const char *path, const char *name,
                                struct lb_run *run,
                                int (*per_metric)(const json_t *v, const char *p,
                                                  struct lb_metric *m, char *err, size_t errlen),
                                char *err, size_t errlen)
{
	char p[512], pk[600];
	const char *key;
	json_t *v;

	if (!obj)
		return 0;
	join(p, sizeof(p), path, name);
	if (!json_is_object(obj))
		return fail(err, errlen, p, "expected an object");
	json_object_foreach((json_t *)obj, key, v)
	{
		struct lb_metric *m = find_metric(run, key);
		snprintf(pk, sizeof(pk), "%s.%s", p, key);
		if (!m)
			return fail(err, errlen, pk, "not a metric of this run");
		if (per_metric(v, pk, m, err, errlen))
			return -1;
	}
	return 0;
}

/* "disturbance": {metric: {...}}: one entry per sample of the metric. */
static int disturbance_value(const json_t *v, const char *p, struct lb_metric *m, char *err,
                             size_t errlen)
{
	if (disturb_metric_from_json(v, p, m, err, errlen))
		return -1;
	if (m->nsamples && m->ndisturb != m->nsamples)
		return fail(err, errlen, p, "%zu entries for %zu samples (one per sample)",
		            m->ndisturb, m->nsamples);
	return 0;
}

/* "instrument": {metric: "timed" | "duet" | "lockstep" | "instructions"}. */
static int instrument_value(const json_t *v, const char *p, struct lb_metric *m, char *err,
                            size_t errlen)
{
	const char *s = json_string_value(v);

	if (!s || (strcmp(s, LB_INSTRUMENT_TIMED) && strcmp(s, LB_INSTRUMENT_DUET) &&
	           strcmp(s, LB_INSTRUMENT_LOCKSTEP) && strcmp(s, LB_INSTRUMENT_INSTRUCTIONS)))
		return fail(err, errlen, p,
		            "expected \"timed\", \"duet\", \"lockstep\" or \"instructions\"");
	metric_set_instrument(m, s);
	return 0;
}

/* "params": {name: integer | string} */
static int run_params_from_json(const json_t *o, const char *path, struct lb_run *run, char *err,
                                size_t errlen)
{
	char p[512], pk[600];
	const char *key;
	json_t *v, *obj;

	join(p, sizeof(p), path, "params");
	obj = json_object_get(o, "params");
	if (!json_is_object(obj))
		return fail(err, errlen, p, "expected an object");
	json_object_foreach(obj, key, v)
	{
		snprintf(pk, sizeof(pk), "%s.%s", p, key);
		if (!*key)
			return fail(err, errlen, p, "empty parameter name");
		if (name_ok(key, p, err, errlen))
			return -1;
		if (json_is_integer(v))
			run_set_param_num(run, key, json_integer_value(v));
		else if (json_is_string(v) && capped(v, pk, LB_MAX_STRING, err, errlen))
			return -1;
		else if (json_is_string(v))
			run_set_param_str(run, key, json_string_value(v));
		else
			return fail(err, errlen, pk, "expected an integer or a string");
	}

	return 0;
}

/* "metrics": {name: number} and "units": {name: string}, one each */
static int run_metrics_from_json(const json_t *o, const char *path, struct lb_run *run, char *err,
                                 size_t errlen)
{
	char p[512], pk[600];
	const char *key;
	json_t *v, *obj;

	join(p, sizeof(p), path, "metrics");
	obj = json_object_get(o, "metrics");
	if (!json_is_object(obj))
		return fail(err, errlen, p, "expected an object");
	json_object_foreach(obj, key, v)
	{
		snprintf(pk, sizeof(pk), "%s.%s", p, key);
		if (!*key)
			return fail(err, errlen, p, "empty metric name");
		if (name_ok(key, p, err, errlen))
			return -1;
		if (!json_is_number(v))
			return fail(err, errlen, pk, "expected a number");
		if (number_ok(v, pk, err, errlen))
			return -1;
		struct lb_metric *m = run_add_metric(run, key, "", true, json_number_value(v));
		free(m->unit);
		m->unit = NULL; /* NULL until units names it */
	}

	join(p, sizeof(p), path, "units");
	obj = json_object_get(o, "units");
	if (!json_is_object(obj))
		return fail(err, errlen, p, "expected an object");
	json_object_foreach(obj, key, v)
	{
		snprintf(pk, sizeof(pk), "%s.%s", p, key);
		struct lb_metric *m = find_metric(run, key);
		if (!m)
			return fail(err, errlen, pk, "not a metric of this run");
		if (!json_is_string(v))
			return fail(err, errlen, pk, "expected a string");
		if (capped(v, pk, LB_MAX_STRING, err, errlen))
			return -1;
		m->unit = strutil_xstrdup(json_string_value(v));
	}
	for (size_t i = 0; i < run->nmetrics; i++) {
		if (!run->metrics[i].unit) {
			snprintf(pk, sizeof(pk), "%s.%s", p, run->metrics[i].name);
			return fail(err, errlen, pk, "missing (every metric needs a unit)");
		}
	}

	return 0;
}

/* "better": {metric: "higher" | "lower"}, one per metric */
static int run_better_from_json(const json_t *o, const char *path, struct lb_run *run, char *err,
                                size_t errlen)
{
	char p[512], pk[600];
	const char *key;
	json_t *v, *obj;
	int rc = -1;

	join(p, sizeof(p), path, "better");
	obj = json_object_get(o, "better");
	if (!json_is_object(obj))
		return fail(err, errlen, p, "expected an object");
	bool *better_set = strutil_xcalloc(run->nmetrics ? run->nmetrics : 1, sizeof(bool));
	json_object_foreach(obj, key, v)
	{
		snprintf(pk, sizeof(pk), "%s.%s", p, key);
		struct lb_metric *m = find_metric(run, key);
		if (!m) {
			fail(err, errlen, pk, "not a metric of this run");
			goto out;
		}
		const char *s = json_string_value(v);
		if (!s || (strcmp(s, "higher") != 0 && strcmp(s, "lower") != 0)) {
			fail(err, errlen, pk, "expected \"higher\" or \"lower\"");
			goto out;
		}
		m->higher_better = strcmp(s, "higher") == 0;
		better_set[m - run->metrics] = true;
	}
	for (size_t i = 0; i < run->nmetrics; i++) {
		if (!better_set[i]) {
			snprintf(pk, sizeof(pk), "%s.%s", p, run->metrics[i].name);
			fail(err, errlen, pk, "missing (every metric needs a direction)");
			goto out;
		}
	}

	rc = 0;
out:
	free(better_set);
	return rc;
}

/* "samples" and "per_thread": {metric: [numbers]} */
static int run_samples_from_json(const json_t *o, const char *path, struct lb_run *run, char *err,
                                 size_t errlen)
{
	char p[512], pk[600];
	const char *key;
	json_t *v, *obj;

	for (int which = 0; which < 2; which++) {
		const char *name = which ? "per_thread" : "samples";
		join(p, sizeof(p), path, name);
		obj = json_object_get(o, name);
		if (!json_is_object(obj)) {
			fail(err, errlen, p, "expected an object");
			return -1;
		}
		json_object_foreach(obj, key, v)
		{
			snprintf(pk, sizeof(pk), "%s.%s", p, key);
			struct lb_metric *m = find_metric(run, key);
			if (!m) {
				fail(err, errlen, pk, "not a metric of this run");
				return -1;
			}
			if (which ? get_number_array(v, pk, &m->per_thread, &m->nper_thread, err,
			                             errlen)
			          : get_number_array(v, pk, &m->samples, &m->nsamples, err, errlen))
				return -1;
		}
	}

	return 0;
}

/* "lockup": null or {kind, message, stacks?} */
static int run_lockup_from_json(const json_t *o, const char *path, struct lb_run *run, char *err,
                                size_t errlen)
{
	char p[512], pk[600];
	json_t *obj;

	join(p, sizeof(p), path, "lockup");
	obj = json_object_get(o, "lockup");
	if (!json_is_null(obj)) {
		static const char *const lkeys[] = {"kind", "message", "stacks", NULL};
		static const char *const lkeys_opt[] = {"kind", "message", NULL};
		json_t *st;
		if (!json_is_object(obj)) {
			fail(err, errlen, p, "expected an object or null");
			return -1;
		}
		st = json_object_get(obj, "stacks");
		/* "stacks" may be left out: same as null */
		if (check_keys(obj, p, st ? lkeys : lkeys_opt, err, errlen))
			return -1;
		run->lockup = strutil_xcalloc(1, sizeof(*run->lockup));
		if (get_str(obj, p, "kind", true, &run->lockup->kind, err, errlen) ||
		    get_str(obj, p, "message", false, &run->lockup->message, err, errlen))
			return -1;
		if (st && !json_is_null(st)) {
			if (!json_is_string(st)) {
				snprintf(pk, sizeof(pk), "%s.stacks", p);
				fail(err, errlen, pk, "expected a string or null");
				return -1;
			}
			snprintf(pk, sizeof(pk), "%s.stacks", p);
			if (capped(st, pk, LB_MAX_STACKS, err, errlen))
				return -1;
			run->lockup->stacks = strutil_xstrdup(json_string_value(st));
		}
	}
	return 0;
}

static int run_from_json(const json_t *o, const char *path, struct lb_run *run, char *err,
                         size_t errlen)
{
	static const char *const keys[] = {"workload", "lock",         "params",      "metrics",
	                                   "units",    "better",       "samples",     "per_thread",
	                                   "lockup",   "?disturbance", "?instrument", NULL};

	if (!json_is_object(o))
		return fail(err, errlen, path, "expected an object");
	if (check_keys(o, path, keys, err, errlen))
		return -1;
	if (get_str(o, path, "workload", true, &run->workload, err, errlen) ||
	    get_str(o, path, "lock", true, &run->lock, err, errlen))
		return -1;
	if (run_params_from_json(o, path, run, err, errlen) ||
	    run_metrics_from_json(o, path, run, err, errlen) ||
	    run_better_from_json(o, path, run, err, errlen) ||
	    run_samples_from_json(o, path, run, err, errlen))
		return -1;
	if (metric_map_from_json(json_object_get(o, "disturbance"), path, "disturbance", run,
	                         disturbance_value, err, errlen) ||
	    metric_map_from_json(json_object_get(o, "instrument"), path, "instrument", run,
	                         instrument_value, err, errlen))
		return -1;
	return run_lockup_from_json(o, path, run, err, errlen);
}

/* "splats": [{key, message, lines?, boot?}, ...] */
static int splats_from_json(const json_t *arr, struct lb_result *out, char *err, size_t errlen)
{
	static const char *const keys[] = {"key", "message", "?lines", "?boot", NULL};
	json_t *v;
	size_t i;

	if (!json_is_array(arr))
		return fail(err, errlen, "splats", "expected an array of splat objects");
	json_array_foreach(arr, i, v)
	{
		char path[64], *key = NULL, *message = NULL, *lines = NULL, *boot = NULL;
		int rc = -1;

		snprintf(path, sizeof(path), "splats[%zu]", i);
		if (!json_is_object(v)) {
			fail(err, errlen, path, "expected an object");
			return -1;
		}
		if (check_keys(v, path, keys, err, errlen) ||
		    get_str(v, path, "key", true, &key, err, errlen) ||
		    get_str(v, path, "message", false, &message, err, errlen) ||
		    (json_object_get(v, "lines") &&
		     get_str_cap(v, path, "lines", false, LB_MAX_STACKS, &lines, err, errlen)) ||
		    (json_object_get(v, "boot") &&
		     get_str(v, path, "boot", false, &boot, err, errlen)))
			goto next;
		result_add_splat(out, key, message, lines, boot);
		rc = 0;
	next:
		free(key);
		free(message);
		free(lines);
		free(boot);
		if (rc)
			return -1;
	}
	return 0;
}

int result_from_json(const json_t *doc, struct lb_result *out, char *err, size_t errlen)
{
	static const char *const keys[] = {"schema",  "suite",   "variant", "round",
	                                   "started", "machine", "runs",    "?controls",
	                                   "?splats", "?image",  "?commit", NULL};
	static const char *const ckeys[] = {"label", "range", NULL};
	static const char *const mkeys[] = {"hostname",          "cpus", "model", "kernel",
	                                    "?guest_thresholds", NULL};
	json_t *v, *runs;
	size_t i;

	result_release(out);
	if (!json_is_object(doc))
		return fail(err, errlen, NULL, "document: expected a json object");
	v = json_object_get(doc, "schema");
	if (!v)
		return fail(err, errlen, "schema", "missing (not a %s document)", LB_SCHEMA);
	if (!json_is_string(v) || strcmp(json_string_value(v), LB_SCHEMA) != 0)
		return fail(err, errlen, "schema", "expected \"%s\"", LB_SCHEMA);
	if (check_keys(doc, "", keys, err, errlen))
		goto fail;
	if (get_str(doc, "", "suite", true, &out->suite, err, errlen) ||
	    get_str(doc, "", "variant", true, &out->variant, err, errlen))
		goto fail;
	if (!variant_ok(out->variant)) {
		fail(err, errlen, "variant",
		     "expected \"base\", \"patched\", \"patch-K\" (K >= 1), \"base-debug\" or "
		     "\"patched-debug\"");
		goto fail;
	}
	if (get_int(doc, "", "round", 0, &out->round, err, errlen) ||
	    get_str(doc, "", "started", true, &out->started, err, errlen))
		goto fail;
	if (!timestamp_ok(out->started)) {
		fail(err, errlen, "started", "expected a UTC time like \"2026-11-29T19:40:00Z\"");
		goto fail;
	}
	v = json_object_get(doc, "machine");
	if (!json_is_object(v)) {
		fail(err, errlen, "machine", "expected an object");
		goto fail;
	}
	if (check_keys(v, "machine", mkeys, err, errlen) ||
	    get_str(v, "machine", "hostname", false, &out->machine.hostname, err, errlen) ||
	    get_int(v, "machine", "cpus", 1, &out->machine.cpus, err, errlen) ||
	    get_str(v, "machine", "model", false, &out->machine.model, err, errlen) ||
	    get_str(v, "machine", "kernel", false, &out->machine.kernel, err, errlen) ||
	    (json_object_get(v, "guest_thresholds") &&
	     get_str(v, "machine", "guest_thresholds", true, &out->machine.guest_thresholds, err,
	             errlen)))
		goto fail;
	runs = json_object_get(doc, "runs");
	if (!json_is_array(runs)) {
		fail(err, errlen, "runs", "expected an array");
		goto fail;
	}
	json_array_foreach(runs, i, v)
	{
		char path[64];
		struct lb_run *run = result_add_run(out, NULL, NULL);
		snprintf(path, sizeof(path), "runs[%zu]", i);
		if (run_from_json(v, path, run, err, errlen))
			goto fail;
	}
	v = json_object_get(doc, "controls");
	if (v) {
		if (!json_is_array(v)) {
			fail(err, errlen, "controls", "expected an array of lock names");
			goto fail;
		}
		json_array_foreach(v, i, runs)
		{
			if (!json_is_string(runs) || !*json_string_value(runs) ||
			    strlen(json_string_value(runs)) > 64) {
				char path[64];

				snprintf(path, sizeof(path), "controls[%zu]", i);
				fail(err, errlen, path, "expected a lock name (1 to 64 bytes)");
				goto fail;
			}
			result_add_control(out, json_string_value(runs));
		}
	}
	v = json_object_get(doc, "splats");
	if (v && splats_from_json(v, out, err, errlen))
		goto fail;
	/* the commit of a pulled range the document measured: checked, kept only in the text */
	v = json_object_get(doc, "commit");
	if (v) {
		char *label = NULL;
		int range = 0;
		int rc = !json_is_object(v)
		             ? fail(err, errlen, "commit", "expected an object")
		             : check_keys(v, "commit", ckeys, err, errlen) ||
		                   get_str(v, "commit", "label", true, &label, err, errlen) ||
		                   get_int(v, "commit", "range", 1, &range, err, errlen);
		if (!rc && strlen(label) > 200)
			rc = fail(err, errlen, "commit.label", "longer than 200 bytes");
		free(label);
		if (rc)
			goto fail;
	}
	v = json_object_get(doc, "image");
	if (v) {
		if (!json_is_string(v) || !elfimage_valid(json_string_value(v))) {
			fail(err, errlen, "image",
			     "expected \"sha256:\" and 64 lower-case hex digits");
			goto fail;
		}
		out->image = strutil_xstrdup(json_string_value(v));
	}
	return 0;
fail:
	result_release(out);
	return -1;
}

int result_load_buffer(const char *buf, size_t len, struct lb_result *out, char *err, size_t errlen)
{
	json_error_t je;
	json_t *doc;
	int rc;

	result_release(out);
	doc = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je);
	if (!doc) {
		if (json_error_code(&je) == json_error_premature_end_of_input)
			strutil_errf(err, errlen,
			             "line %d column %d: truncated document (unexpected end of "
			             "input)",
			             je.line, je.column);
		else
			strutil_errf(err, errlen, "line %d column %d: %s", je.line, je.column,
			             je.text);
		return -1;
	}
	rc = result_from_json(doc, out, err, errlen);
	json_decref(doc);
	return rc;
}

int result_load_file(const char *path, struct lb_result *out, char *err, size_t errlen)
{
	FILE *f = NULL;
	char *buf = NULL;
	size_t len = 0, cap = 0;
	char why[512];
	int rc = -1;

	result_release(out);
	f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
	if (!f) {
		strutil_errf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	for (;;) {
		if (len == cap) {
			cap = cap ? cap * 2 : 65536;
			buf = strutil_xreallocarray(buf, cap, 1);
		}
		size_t n = fread(buf + len, 1, cap - len, f);
		len += n;
		if (n == 0)
			break;
		if (len > LOAD_MAX) {
			strutil_errf(err, errlen, "%s: larger than %zu bytes", path, LOAD_MAX);
			goto out;
		}
	}
	if (ferror(f)) {
		strutil_errf(err, errlen, "%s: %s", path, strerror(errno ? errno : EIO));
		goto out;
	}
	if (result_load_buffer(buf, len, out, why, sizeof(why)) == 0)
		rc = 0;
	else
		strutil_errf(err, errlen, "%s: %s", path, why);
out:
	if (f != stdin)
		fclose(f);
	free(buf);
	return rc;
}
