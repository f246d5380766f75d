/*
 * result.c - the lockbench-result/1 document in memory: building it, the
 * machine it ran on, lookups.  Its JSON form, written atomically, is
 * result_json.c; reading it back under strict validation is
 * result_parse.c.
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
