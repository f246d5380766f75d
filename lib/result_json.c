/*
 * result_json.c - a lockbench-result/1 document as JSON, and written to a
 * file atomically (result.h).
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
