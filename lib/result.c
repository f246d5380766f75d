/*
 * result.c - the lockbench-result/1 document: building it, strict JSON
 * validation, atomic writes.  docs/result-schema.md is the prose version of
 * what result_from_json accepts.
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
#include "strutil.h"

#define DUMP_FLAGS (JSON_INDENT(1) | JSON_SORT_KEYS | JSON_REAL_PRECISION(10))
/* A result document of a whole suite is a few MB at most. */
#define LOAD_MAX ((size_t)256 << 20)

void result_init(struct lb_result *r)
{
	memset(r, 0, sizeof(*r));
}

static void metric_release(struct lb_metric *m)
{
	free(m->name);
	free(m->unit);
	free(m->samples);
	free(m->per_thread);
	free(m->disturb);
	free(m->instrument);
}

static void lockup_free(struct lb_lockup *l)
{
	if (!l)
		return;
	free(l->kind);
	free(l->message);
	free(l->stacks);
	free(l);
}

static void run_release(struct lb_run *run)
{
	free(run->workload);
	free(run->lock);
	for (size_t i = 0; i < run->nparams; i++) {
		free(run->params[i].name);
		free(run->params[i].str);
	}
	free(run->params);
	for (size_t i = 0; i < run->nmetrics; i++)
		metric_release(&run->metrics[i]);
	free(run->metrics);
	lockup_free(run->lockup);
}

void result_release(struct lb_result *r)
{
	free(r->image);
	free(r->suite);
	free(r->variant);
	free(r->started);
	free(r->machine.hostname);
	free(r->machine.model);
	free(r->machine.kernel);
	free(r->machine.guest_thresholds);
	for (size_t i = 0; i < r->nruns; i++)
		run_release(&r->runs[i]);
	free(r->runs);
	for (size_t i = 0; i < r->ncontrols; i++)
		free(r->controls[i]);
	free(r->controls);
	for (size_t i = 0; i < r->nsplats; i++) {
		free(r->splats[i].key);
		free(r->splats[i].message);
		free(r->splats[i].lines);
		free(r->splats[i].boot);
	}
	free(r->splats);
	result_init(r);
}

void result_add_splat(struct lb_result *r, const char *key, const char *message, const char *lines,
                      const char *boot)
{
	r->splats = strutil_xreallocarray(r->splats, r->nsplats + 1, sizeof(*r->splats));
	struct lb_splat *s = &r->splats[r->nsplats++];
	s->key = strutil_xstrdup(key);
	s->message = strutil_xstrdup(message ? message : "");
	s->lines = strutil_xstrdup(lines);
	s->boot = strutil_xstrdup(boot);
}

bool result_has_splat(const struct lb_result *r, const char *key)
{
	for (size_t i = 0; i < r->nsplats; i++)
		if (strcmp(r->splats[i].key, key) == 0)
			return true;
	return false;
}

bool result_is_control(const struct lb_result *r, const char *lock)
{
	for (size_t i = 0; i < r->ncontrols; i++)
		if (strcmp(r->controls[i], lock) == 0)
			return true;
	return false;
}

void result_add_control(struct lb_result *r, const char *lock)
{
	if (result_is_control(r, lock))
		return;
	r->controls = strutil_xreallocarray(r->controls, r->ncontrols + 1, sizeof(*r->controls));
	r->controls[r->ncontrols++] = strutil_xstrdup(lock);
}

static void set_str(char **dst, const char *s)
{
	char *d = strutil_xstrdup(s);
	free(*dst);
	*dst = d;
}

/* "model name\t: Intel(R) ..." from /proc/cpuinfo, or NULL. */
static char *cpu_model(void)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[1024];
	char *model = NULL;

	if (!f)
		return NULL;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "model name", 10) != 0)
			continue;
		char *colon = strchr(line, ':');
		if (!colon)
			continue;
		char *s = colon + 1;
		while (*s == ' ' || *s == '\t')
			s++;
		size_t n = strlen(s);
		while (n && (s[n - 1] == '\n' || s[n - 1] == ' ' || s[n - 1] == '\t'))
			s[--n] = '\0';
		if (n)
			model = strutil_xstrdup(s);
		break;
	}
	fclose(f);
	return model;
}

void result_fill_machine(struct lb_result *r)
{
	struct utsname u;
	char started[32];
	time_t now = time(NULL);
	struct tm tm;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	char *model = cpu_model();

	if (uname(&u) == 0) {
		set_str(&r->machine.hostname, u.nodename);
		set_str(&r->machine.kernel, u.release);
	} else {
		set_str(&r->machine.hostname, "unknown");
		set_str(&r->machine.kernel, "unknown");
	}
	r->machine.cpus = cpus >= 1 && cpus <= INT_MAX ? (int)cpus : 1;
	free(r->machine.model);
	r->machine.model = model ? model : strutil_xstrdup("unknown");
	gmtime_r(&now, &tm);
	strftime(started, sizeof(started), "%Y-%m-%dT%H:%M:%SZ", &tm);
	set_str(&r->started, started);
}

struct lb_run *result_add_run(struct lb_result *r, const char *workload, const char *lock)
{
	struct lb_run *run;

	r->runs = strutil_xreallocarray(r->runs, r->nruns + 1, sizeof(*r->runs));
	run = &r->runs[r->nruns++];
	memset(run, 0, sizeof(*run));
	run->workload = strutil_xstrdup(workload);
	run->lock = strutil_xstrdup(lock);
	return run;
}

static struct lb_param *param_slot(struct lb_run *run, const char *name)
{
	struct lb_param *p;

	for (size_t i = 0; i < run->nparams; i++) {
		if (strcmp(run->params[i].name, name) == 0) {
			p = &run->params[i];
			free(p->str);
			p->str = NULL;
			return p;
		}
	}
	run->params = strutil_xreallocarray(run->params, run->nparams + 1, sizeof(*run->params));
	p = &run->params[run->nparams++];
	memset(p, 0, sizeof(*p));
	p->name = strutil_xstrdup(name);
	return p;
}

void run_set_param_num(struct lb_run *run, const char *name, long long value)
{
	struct lb_param *p = param_slot(run, name);
	p->is_num = true;
	p->num = value;
}

void run_set_param_str(struct lb_run *run, const char *name, const char *value)
{
	struct lb_param *p = param_slot(run, name);
	p->is_num = false;
	p->num = 0;
	p->str = strutil_xstrdup(value ? value : "");
}

struct lb_metric *run_add_metric(struct lb_run *run, const char *name, const char *unit,
                                 bool higher_better, double value)
{
	struct lb_metric *m = NULL;

	for (size_t i = 0; i < run->nmetrics; i++)
		if (strcmp(run->metrics[i].name, name) == 0)
			m = &run->metrics[i];
	if (!m) {
		run->metrics =
		    strutil_xreallocarray(run->metrics, run->nmetrics + 1, sizeof(*run->metrics));
		m = &run->metrics[run->nmetrics++];
		memset(m, 0, sizeof(*m));
		m->name = strutil_xstrdup(name);
	}
	set_str(&m->unit, unit ? unit : "");
	m->higher_better = higher_better;
	m->value = value;
	return m;
}

void metric_add_sample(struct lb_metric *m, double value)
{
	m->samples = strutil_xreallocarray(m->samples, m->nsamples + 1, sizeof(double));
	m->samples[m->nsamples++] = value;
}

void metric_set_per_thread(struct lb_metric *m, const double *values, size_t n)
{
	free(m->per_thread);
	m->per_thread = NULL;
	m->nper_thread = 0;
	if (!n)
		return;
	m->per_thread = strutil_xreallocarray(NULL, n, sizeof(double));
	memcpy(m->per_thread, values, n * sizeof(double));
	m->nper_thread = n;
}

void metric_set_disturbance(struct lb_metric *m, const struct lb_disturb *d, size_t n, int repeated,
                            double limit_pct)
{
	free(m->disturb);
	m->disturb = n ? strutil_xreallocarray(NULL, n, sizeof(*d)) : NULL;
	if (n)
		memcpy(m->disturb, d, n * sizeof(*d));
	m->ndisturb = n;
	m->repeated = repeated;
	m->disturb_limit_pct = limit_pct;
}

void metric_set_instrument(struct lb_metric *m, const char *instrument)
{
	set_str(&m->instrument, instrument);
}

const char *metric_instrument(const struct lb_metric *m)
{
	return m->instrument ? m->instrument : LB_INSTRUMENT_TIMED;
}

void run_clear_metrics(struct lb_run *run)
{
	for (size_t i = 0; i < run->nmetrics; i++)
		metric_release(&run->metrics[i]);
	free(run->metrics);
	run->metrics = NULL;
	run->nmetrics = 0;
}

void run_set_lockup(struct lb_run *run, const char *kind, const char *message, const char *stacks)
{
	struct lb_lockup *l = strutil_xcalloc(1, sizeof(*l));

	l->kind = strutil_xstrdup(kind ? kind : "stall");
	l->message = strutil_xstrdup(message ? message : "");
	l->stacks = strutil_xstrdup(stacks);
	lockup_free(run->lockup);
	run->lockup = l;
}

const struct lb_param *run_param(const struct lb_run *run, const char *name)
{
	for (size_t i = 0; i < run->nparams; i++)
		if (strcmp(run->params[i].name, name) == 0)
			return &run->params[i];
	return NULL;
}

const struct lb_metric *run_metric(const struct lb_run *run, const char *name)
{
	for (size_t i = 0; i < run->nmetrics; i++)
		if (strcmp(run->metrics[i].name, name) == 0)
			return &run->metrics[i];
	return NULL;
}

static int param_cmp(const void *a, const void *b)
{
	const struct lb_param *const *pa = a;
	const struct lb_param *const *pb = b;
	return strcmp((*pa)->name, (*pb)->name);
}

char *run_params_key(const struct lb_run *run)
{
	struct strutil_buf sb = STRUTIL_BUF_INIT;
	const struct lb_param **sorted;

	if (!run->nparams)
		return strutil_xstrdup("");
	sorted = strutil_xreallocarray(NULL, run->nparams, sizeof(*sorted));
	for (size_t i = 0; i < run->nparams; i++)
		sorted[i] = &run->params[i];
	qsort(sorted, run->nparams, sizeof(*sorted), param_cmp);
	for (size_t i = 0; i < run->nparams; i++) {
		const struct lb_param *p = sorted[i];
		if (p->is_num)
			strutil_buf_addf(&sb, "%s%s=%lld", i ? "," : "", p->name, p->num);
		else
			strutil_buf_addf(&sb, "%s%s=%s", i ? "," : "", p->name,
			                 p->str ? p->str : "");
	}
	free(sorted);
	return strutil_buf_detach(&sb);
}

/* ---- to JSON ---- */

/* Sets key to a new value; a NULL value (jansson refused it) is an error. */
static int put(json_t *obj, const char *key, json_t *value)
{
	if (!value)
		return -1;
	return json_object_set_new(obj, key, value);
}

static json_t *num_array(const double *x, size_t n, const char *path, char *err, size_t errlen)
{
	json_t *a = json_array();
	for (size_t i = 0; i < n; i++) {
		if (!isfinite(x[i])) {
			strutil_errf(err, errlen, "%s[%zu]: not a finite number", path, i);
			json_decref(a);
			return NULL;
		}
		json_array_append_new(a, json_real(x[i]));
	}
	return a;
}

/* The fields of struct lb_disturb, in the JSON's names. */
static const struct {
	const char *name;
	size_t off;
	double max;
} disturb_fields[] = {
    {"steal_pct", offsetof(struct lb_disturb, steal_pct), 100},
    {"delay_pct", offsetof(struct lb_disturb, delay_pct), 100},
    {"lost_pct", offsetof(struct lb_disturb, lost_pct), 100},
    {"nivcsw", offsetof(struct lb_disturb, nivcsw), 1e9},
    {"migrations", offsetof(struct lb_disturb, migrations), 1e9},
};
#define NDISTURB_FIELDS (sizeof(disturb_fields) / sizeof(disturb_fields[0]))
/* Caps of the validator: repetitions per metric, entries per metric. */
#define DISTURB_REPEATED_MAX 100000
#define DISTURB_ENTRIES_MAX  100000

static double *disturb_field(struct lb_disturb *d, size_t field)
{
	return (double *)((char *)d + disturb_fields[field].off);
}

/* {"repeated": N, "limit_pct": x, "steal_pct": [...], ...} */
static json_t *disturbance_to_json(const struct lb_metric *m, size_t idx, char *err, size_t errlen)
{
	json_t *o = json_object();
	char path[600];

	put(o, "repeated", json_integer(m->repeated));
	put(o, "limit_pct", json_real(isfinite(m->disturb_limit_pct) ? m->disturb_limit_pct : 0));
	for (size_t f = 0; f < NDISTURB_FIELDS; f++) {
		double *x = strutil_xreallocarray(NULL, m->ndisturb, sizeof(double));
		for (size_t i = 0; i < m->ndisturb; i++)
			x[i] = *disturb_field(&m->disturb[i], f);
		snprintf(path, sizeof(path), "runs[%zu].disturbance.%s.%s", idx, m->name,
		         disturb_fields[f].name);
		json_t *a = num_array(x, m->ndisturb, path, err, errlen);
		free(x);
		if (!a) {
			json_decref(o);
			return NULL;
		}
		put(o, disturb_fields[f].name, a);
	}
	return o;
}

static json_t *run_to_json(const struct lb_run *run, size_t idx, char *err, size_t errlen)
{
	json_t *o = json_object(), *params = json_object(), *metrics = json_object();
	json_t *units = json_object(), *better = json_object(), *samples = json_object();
	json_t *per_thread = json_object(), *disturbance = json_object(),
	       *instrument = json_object();
	char path[512];

	if (!run->workload || !run->lock) {
		strutil_errf(err, errlen, "runs[%zu].%s: not set", idx,
		             run->workload ? "lock" : "workload");
		goto fail;
	}
	put(o, "workload", json_string(run->workload));
	put(o, "lock", json_string(run->lock));
	for (size_t i = 0; i < run->nparams; i++) {
		const struct lb_param *p = &run->params[i];
		if (p->is_num)
			put(params, p->name, json_integer(p->num));
		else
			put(params, p->name, json_string(p->str ? p->str : ""));
	}
	for (size_t i = 0; i < run->nmetrics; i++) {
		const struct lb_metric *m = &run->metrics[i];
		if (!isfinite(m->value)) {
			strutil_errf(err, errlen, "runs[%zu].metrics.%s: not a finite number", idx,
			             m->name);
			goto fail;
		}
		put(metrics, m->name, json_real(m->value));
		put(units, m->name, json_string(m->unit ? m->unit : ""));
		put(better, m->name, json_string(m->higher_better ? "higher" : "lower"));
		if (m->nsamples) {
			snprintf(path, sizeof(path), "runs[%zu].samples.%s", idx, m->name);
			json_t *a = num_array(m->samples, m->nsamples, path, err, errlen);
			if (!a)
				goto fail;
			put(samples, m->name, a);
		}
		if (m->nper_thread) {
			snprintf(path, sizeof(path), "runs[%zu].per_thread.%s", idx, m->name);
			json_t *a = num_array(m->per_thread, m->nper_thread, path, err, errlen);
			if (!a)
				goto fail;
			put(per_thread, m->name, a);
		}
		if (m->ndisturb) {
			json_t *d = disturbance_to_json(m, idx, err, errlen);
			if (!d)
				goto fail;
			put(disturbance, m->name, d);
		}
		if (m->instrument)
			put(instrument, m->name, json_string(m->instrument));
	}
	/* optional keys: written only when some metric has them */
	if (json_object_size(disturbance))
		put(o, "disturbance", json_incref(disturbance));
	if (json_object_size(instrument))
		put(o, "instrument", json_incref(instrument));
	json_decref(disturbance);
	json_decref(instrument);
	disturbance = instrument = NULL;
	put(o, "params", params);
	put(o, "metrics", metrics);
	put(o, "units", units);
	put(o, "better", better);
	put(o, "samples", samples);
	put(o, "per_thread", per_thread);
	if (run->lockup) {
		json_t *l = json_object();
		put(l, "kind", json_string(run->lockup->kind ? run->lockup->kind : "stall"));
		put(l, "message", json_string(run->lockup->message ? run->lockup->message : ""));
		put(l, "stacks",
		    run->lockup->stacks ? json_string(run->lockup->stacks) : json_null());
		put(o, "lockup", l);
	} else {
		put(o, "lockup", json_null());
	}
	return o;
fail:
	json_decref(o);
	json_decref(params);
	json_decref(metrics);
	json_decref(units);
	json_decref(better);
	json_decref(samples);
	json_decref(per_thread);
	json_decref(disturbance);
	json_decref(instrument);
	return NULL;
}

/* result_to_json with a reason when the model cannot be written. */
static json_t *build_json(const struct lb_result *r, char *err, size_t errlen)
{
	json_t *doc = json_object(), *machine = json_object(), *runs = json_array();
	static const char *const names[] = {
	    "suite", "variant", "started", "machine.hostname", "machine.model", "machine.kernel"};
	const char *values[] = {r->suite,         r->variant,       r->started, r->machine.hostname,
	                        r->machine.model, r->machine.kernel};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!values[i]) {
			strutil_errf(err, errlen, "%s: not set", names[i]);
			goto fail;
		}
	}
	put(doc, "schema", json_string(LB_SCHEMA));
	put(doc, "suite", json_string(r->suite));
	put(doc, "variant", json_string(r->variant));
	put(doc, "round", json_integer(r->round));
	put(doc, "started", json_string(r->started));
	put(machine, "hostname", json_string(r->machine.hostname));
	put(machine, "cpus", json_integer(r->machine.cpus));
	put(machine, "model", json_string(r->machine.model));
	put(machine, "kernel", json_string(r->machine.kernel));
	if (r->machine.guest_thresholds)
		put(machine, "guest_thresholds", json_string(r->machine.guest_thresholds));
	put(doc, "machine", machine);
	machine = NULL;
	for (size_t i = 0; i < r->nruns; i++) {
		json_t *run = run_to_json(&r->runs[i], i, err, errlen);
		if (!run)
			goto fail;
		json_array_append_new(runs, run);
	}
	put(doc, "runs", runs);
	if (r->image)
		put(doc, "image", json_string(r->image));
	if (r->ncontrols) {
		json_t *controls = json_array();

		for (size_t i = 0; i < r->ncontrols; i++)
			json_array_append_new(controls, json_string(r->controls[i]));
		put(doc, "controls", controls);
	}
	if (r->nsplats) {
		json_t *splats = json_array();

		for (size_t i = 0; i < r->nsplats; i++) {
			const struct lb_splat *sp = &r->splats[i];
			json_t *o = json_object();
			if (!sp->key || !*sp->key) {
				strutil_errf(err, errlen,
				             "splats[%zu].key: expected a non-empty string", i);
				json_decref(o);
				json_decref(splats);
				goto fail;
			}
			put(o, "key", json_string(sp->key));
			put(o, "message", json_string(sp->message ? sp->message : ""));
			if (sp->lines)
				put(o, "lines", json_string(sp->lines));
			if (sp->boot)
				put(o, "boot", json_string(sp->boot));
			json_array_append_new(splats, o);
		}
		put(doc, "splats", splats);
	}
	return doc;
fail:
	json_decref(machine);
	json_decref(runs);
	json_decref(doc);
	return NULL;
}

json_t *result_to_json(const struct lb_result *r)
{
	return build_json(r, NULL, 0);
}

/* ---- strict validation ---- */

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

static int get_str(const json_t *obj, const char *path, const char *key, bool nonempty, char **out,
                   char *err, size_t errlen)
{
	json_t *v = json_object_get(obj, key);
	char p[512];

	join(p, sizeof(p), path, key);
	if (!json_is_string(v))
		return fail(err, errlen, p, "expected a string");
	if (nonempty && json_string_length(v) == 0)
		return fail(err, errlen, p, "expected a non-empty string");
	*out = strutil_xstrdup(json_string_value(v));
	return 0;
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
	if (strcmp(v, "base") == 0 || strcmp(v, "patched") == 0)
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
		if (!json_is_number(v)) {
			snprintf(p, sizeof(p), "%s[%zu]", path, i);
			return fail(err, errlen, p, "expected a number");
		}
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

static int run_from_json(const json_t *o, const char *path, struct lb_run *run, char *err,
                         size_t errlen)
{
	static const char *const keys[] = {"workload", "lock",         "params",      "metrics",
	                                   "units",    "better",       "samples",     "per_thread",
	                                   "lockup",   "?disturbance", "?instrument", NULL};
	char p[512], pk[600];
	const char *key;
	json_t *v, *obj;
	bool *better_set = NULL;
	int rc = -1;

	if (!json_is_object(o))
		return fail(err, errlen, path, "expected an object");
	if (check_keys(o, path, keys, err, errlen))
		return -1;
	if (get_str(o, path, "workload", true, &run->workload, err, errlen) ||
	    get_str(o, path, "lock", true, &run->lock, err, errlen))
		return -1;

	join(p, sizeof(p), path, "params");
	obj = json_object_get(o, "params");
	if (!json_is_object(obj))
		return fail(err, errlen, p, "expected an object");
	json_object_foreach(obj, key, v)
	{
		snprintf(pk, sizeof(pk), "%s.%s", p, key);
		if (!*key)
			return fail(err, errlen, p, "empty parameter name");
		if (json_is_integer(v))
			run_set_param_num(run, key, json_integer_value(v));
		else if (json_is_string(v))
			run_set_param_str(run, key, json_string_value(v));
		else
			return fail(err, errlen, pk, "expected an integer or a string");
	}

	join(p, sizeof(p), path, "metrics");
	obj = json_object_get(o, "metrics");
	if (!json_is_object(obj))
		return fail(err, errlen, p, "expected an object");
	json_object_foreach(obj, key, v)
	{
		snprintf(pk, sizeof(pk), "%s.%s", p, key);
		if (!*key)
			return fail(err, errlen, p, "empty metric name");
		if (!json_is_number(v))
			return fail(err, errlen, pk, "expected a number");
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
		m->unit = strutil_xstrdup(json_string_value(v));
	}
	for (size_t i = 0; i < run->nmetrics; i++) {
		if (!run->metrics[i].unit) {
			snprintf(pk, sizeof(pk), "%s.%s", p, run->metrics[i].name);
			return fail(err, errlen, pk, "missing (every metric needs a unit)");
		}
	}

	join(p, sizeof(p), path, "better");
	obj = json_object_get(o, "better");
	if (!json_is_object(obj))
		return fail(err, errlen, p, "expected an object");
	better_set = strutil_xcalloc(run->nmetrics ? run->nmetrics : 1, sizeof(bool));
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

	for (int which = 0; which < 2; which++) {
		const char *name = which ? "per_thread" : "samples";
		join(p, sizeof(p), path, name);
		obj = json_object_get(o, name);
		if (!json_is_object(obj)) {
			fail(err, errlen, p, "expected an object");
			goto out;
		}
		json_object_foreach(obj, key, v)
		{
			snprintf(pk, sizeof(pk), "%s.%s", p, key);
			struct lb_metric *m = find_metric(run, key);
			if (!m) {
				fail(err, errlen, pk, "not a metric of this run");
				goto out;
			}
			if (which ? get_number_array(v, pk, &m->per_thread, &m->nper_thread, err,
			                             errlen)
			          : get_number_array(v, pk, &m->samples, &m->nsamples, err, errlen))
				goto out;
		}
	}

	if (metric_map_from_json(json_object_get(o, "disturbance"), path, "disturbance", run,
	                         disturbance_value, err, errlen) ||
	    metric_map_from_json(json_object_get(o, "instrument"), path, "instrument", run,
	                         instrument_value, err, errlen))
		goto out;

	join(p, sizeof(p), path, "lockup");
	obj = json_object_get(o, "lockup");
	if (!json_is_null(obj)) {
		static const char *const lkeys[] = {"kind", "message", "stacks", NULL};
		static const char *const lkeys_opt[] = {"kind", "message", NULL};
		json_t *st;
		if (!json_is_object(obj)) {
			fail(err, errlen, p, "expected an object or null");
			goto out;
		}
		st = json_object_get(obj, "stacks");
		/* "stacks" may be left out: same as null */
		if (check_keys(obj, p, st ? lkeys : lkeys_opt, err, errlen))
			goto out;
		run->lockup = strutil_xcalloc(1, sizeof(*run->lockup));
		if (get_str(obj, p, "kind", true, &run->lockup->kind, err, errlen) ||
		    get_str(obj, p, "message", false, &run->lockup->message, err, errlen))
			goto out;
		if (st && !json_is_null(st)) {
			if (!json_is_string(st)) {
				snprintf(pk, sizeof(pk), "%s.stacks", p);
				fail(err, errlen, pk, "expected a string or null");
				goto out;
			}
			run->lockup->stacks = strutil_xstrdup(json_string_value(st));
		}
	}
	rc = 0;
out:
	free(better_set);
	return rc;
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
		     get_str(v, path, "lines", false, &lines, err, errlen)) ||
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
	                                   "?splats", "?image",  NULL};
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
		     "expected \"base\", \"patched\" or \"patch-K\" (K >= 1)");
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

static int write_all(int fd, const char *s, size_t n)
{
	while (n) {
		ssize_t w = write(fd, s, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		s += w;
		n -= (size_t)w;
	}
	return 0;
}

int result_write_file(const struct lb_result *r, const char *path, char *err, size_t errlen)
{
	struct lb_result check;
	json_t *doc = NULL;
	char *text = NULL, *dir = NULL, *tmp = NULL;
	char why[512];
	int fd = -1, rc = -1;
	size_t n;

	result_init(&check);
	doc = build_json(r, why, sizeof(why));
	if (!doc || result_from_json(doc, &check, why, sizeof(why))) {
		/* never write what result_from_json would refuse to read */
		strutil_errf(err, errlen, "%s: invalid result document: %s", path, why);
		goto out;
	}
	text = json_dumps(doc, DUMP_FLAGS);
	if (!text) {
		strutil_errf(err, errlen, "%s: cannot encode the document", path);
		goto out;
	}
	n = strlen(text);

	if (strcmp(path, "-") == 0) {
		if (fwrite(text, 1, n, stdout) != n || fputc('\n', stdout) == EOF ||
		    fflush(stdout) != 0 || ferror(stdout)) {
			strutil_errf(err, errlen, "stdout: %s", strerror(errno ? errno : EIO));
			goto out;
		}
		rc = 0;
		goto out;
	}

	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	if (!*base) {
		strutil_errf(err, errlen, "%s: %s", path, strerror(EISDIR));
		goto out;
	}
	if (!slash)
		dir = strutil_xstrdup(".");
	else if (slash == path)
		dir = strutil_xstrdup("/");
	else
		dir = strndup(path, (size_t)(slash - path));
	if (!dir) {
		strutil_errf(err, errlen, "%s: %s", path, strerror(ENOMEM));
		goto out;
	}
	struct strutil_buf tb = STRUTIL_BUF_INIT;
	strutil_buf_addf(&tb, "%s/.%s.XXXXXX", dir, base);
	tmp = strutil_buf_detach(&tb);
	fd = mkstemp(tmp);
	if (fd < 0) {
		strutil_errf(err, errlen, "%s: %s", path, strerror(errno));
		free(tmp);
		tmp = NULL;
		goto out;
	}
	if (fchmod(fd, 0644) != 0 || write_all(fd, text, n) != 0 || write_all(fd, "\n", 1) != 0 ||
	    fsync(fd) != 0) {
		strutil_errf(err, errlen, "%s: %s", path, strerror(errno));
		goto out;
	}
	if (close(fd) != 0) {
		fd = -1;
		strutil_errf(err, errlen, "%s: %s", path, strerror(errno));
		goto out;
	}
	fd = -1;
	if (rename(tmp, path) != 0) {
		strutil_errf(err, errlen, "%s: %s", path, strerror(errno));
		goto out;
	}
	free(tmp);
	tmp = NULL;
	/* make the rename itself durable; failure here loses nothing already written */
	int dfd = open(dir, O_RDONLY | O_DIRECTORY);
	if (dfd >= 0) {
		fsync(dfd);
		close(dfd);
	}
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	if (tmp) {
		unlink(tmp);
		free(tmp);
	}
	free(dir);
	free(text);
	json_decref(doc);
	result_release(&check);
	return rc;
}
