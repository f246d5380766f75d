/*
 * verdicts.c - comparisons of a job's rounds, stored and read back.
 */
#include "verdicts.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "db.h"
#include "plan.h"
#include "result.h"

int verdicts_rank(const char *v)
{
	static const char *order[] = {"no-change", "improvement", "inconclusive", "regression",
	                              "splat",     "lockup",      "crash"};
	int i;

	for (i = 0; v && i < 7; i++)
		if (strcmp(v, order[i]) == 0)
			return i;
	return -1;
}

static void free_results(struct lb_result *r, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		result_release(&r[i]);
	free(r);
}

int verdicts_looks(int min_rounds, int max_rounds)
{
	int step = min_rounds > 0 ? min_rounds : 1;

	/* a look every min_rounds up to max_rounds, and one for a confirmation */
	return (max_rounds + step - 1) / step + 1;
}

/* verdicts_compute of the variants side[0] (base) and side[1] (patched). */
static int compute_sides(PGconn *c, long long job_id, int confirm_from, const char *const side[2],
                         struct comparison *out, char *err, size_t errlen)
{
	char idbuf[24];
	const char *p[3] = {idbuf, side[0], side[1]};
	struct lb_result *base = NULL, *patched = NULL;
	size_t nbase = 0, npatched = 0;
	struct compare_opts opts = COMPARE_OPTS_DEFAULT;
	PGresult *res, *plan;
	int i, n, rc = -3;
	const char *plan_text;

	snprintf(idbuf, sizeof(idbuf), "%lld", job_id);
	plan =
	    db_exec(c, "SELECT plan::text, max_rounds, min_rounds FROM jobs WHERE id = $1", 1, p);
	if (!plan)
		return db_failure();
	res = db_exec(c,
	              "SELECT variant, document::text FROM results WHERE job_id = $1 AND "
	              "variant IN ($2, $3) ORDER BY round, variant",
	              3, p);
	if (!res) {
		PQclear(plan);
		return db_failure();
	}
	n = PQntuples(res);
	base = calloc((size_t)n + 1, sizeof(*base));
	patched = calloc((size_t)n + 1, sizeof(*patched));
	if (!base || !patched) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	for (i = 0; i < n; i++) {
		bool is_base = strcmp(PQgetvalue(res, i, 0), side[0]) == 0;
		struct lb_result *r = is_base ? &base[nbase] : &patched[npatched];
		const char *text = PQgetvalue(res, i, 1);

		result_init(r);
		if (result_load_buffer(text, strlen(text), r, err, errlen) != 0) {
			result_release(r);
			goto out;
		}
		if (is_base)
			nbase++;
		else
			npatched++;
	}
	if (!nbase || !npatched) {
		rc = 1;
		goto out;
	}
	opts.alpha = srv_cfg.alpha;
	opts.min_effect = srv_cfg.min_effect;
	opts.confirm_from = confirm_from;
	/* the limits the job was made with (NULL before they were kept: ours) */
	bool one = PQntuples(plan) == 1;
	int minr =
	    one && !PQgetisnull(plan, 0, 2) ? atoi(PQgetvalue(plan, 0, 2)) : srv_cfg.min_rounds;
	int maxr =
	    one && !PQgetisnull(plan, 0, 1) ? atoi(PQgetvalue(plan, 0, 1)) : srv_cfg.max_rounds;
	opts.looks = verdicts_looks(minr, maxr);
	/*
	 * A row needs the rounds the job asks for first, at most the default
	 * and never fewer than a paired test can use (COMPARE_MIN_PAIRS): a
	 * server asking for fewer gets "too few rounds to test", not a test.
	 */
	if (minr < (int)opts.min_samples)
		opts.min_samples = minr > COMPARE_MIN_PAIRS ? (size_t)minr : COMPARE_MIN_PAIRS;
	/* a planned job may look more often, and tests from its first rounds */
	plan_text = one ? db_value(plan, 0, 0) : NULL;
	plan_compare_opts(plan_text, minr, &opts);
	if (compare_results(base, nbase, patched, npatched, &opts, out, err, errlen) != 0)
		goto out;
	plan_mark_rows(plan_text, out);
	/* and the rows the job's own rounds say it cannot resolve by its limit */
	plan_mark_futile(out, maxr);
	rc = 0;
out:
	PQclear(plan);
	PQclear(res);
	free_results(base, nbase);
	free_results(patched, npatched);
	return rc;
}

int verdicts_compute(PGconn *c, long long job_id, int confirm_from, struct comparison *out,
                     char *err, size_t errlen)
{
	static const char *const side[2] = {"base", "patched"};

	return compute_sides(c, job_id, confirm_from, side, out, err, errlen);
}

int verdicts_compute_variant(PGconn *c, long long job_id, const char *variant,
                             struct comparison *out, char *err, size_t errlen)
{
	const char *const side[2] = {"base", variant};

	return compute_sides(c, job_id, 0, side, out, err, errlen);
}

int verdicts_compute_debug(PGconn *c, long long job_id, struct comparison *out, char *err,
                           size_t errlen)
{
	static const char *const side[2] = {"base-debug", "patched-debug"};

	return compute_sides(c, job_id, 0, side, out, err, errlen);
}

/*
 * The splats of the job's debug pass into cmp (a loaded comparison keeps
 * none: they live in the documents), so a reply quotes the kernel's words.
 */
static void debug_splats(PGconn *c, long long job_id, struct comparison *cmp)
{
	struct comparison d;
	char err[256];

	comparison_init(&d);
	if (cmp->nsplats == 0 && verdicts_compute_debug(c, job_id, &d, err, sizeof(err)) == 0) {
		cmp->splats = d.splats;
		cmp->nsplats = d.nsplats;
		d.splats = NULL;
		d.nsplats = 0;
	}
	comparison_release(&d);
}

bool verdicts_want_more(const struct comparison *cmp)
{
	/*
	 * descriptive metrics (fairness, CoV), controls and rows this machine
	 * cannot resolve never buy more rounds (compare_row_wants_rounds)
	 */
	return comparison_wants_rounds(cmp);
}

bool verdicts_found_change(const struct comparison *cmp)
{
	return comparison_found_change(cmp);
}

/* JSON has no NaN or infinity: such statistics are stored as 0. */
static json_t *json_finite(double v)
{
	return json_real(isfinite(v) ? v : 0.0);
}

static json_t *summary_json(const char *prefix, const struct stats_summary *s, json_t *o)
{
	char key[32];

	snprintf(key, sizeof(key), "%s_n", prefix);
	json_object_set_new(o, key, json_integer((json_int_t)s->n));
	snprintf(key, sizeof(key), "%s_mean", prefix);
	json_object_set_new(o, key, json_finite(s->mean));
	snprintf(key, sizeof(key), "%s_stddev", prefix);
	json_object_set_new(o, key, json_finite(s->stddev));
	snprintf(key, sizeof(key), "%s_min", prefix);
	json_object_set_new(o, key, json_finite(s->min));
	snprintf(key, sizeof(key), "%s_max", prefix);
	json_object_set_new(o, key, json_finite(s->max));
	return o;
}

/* The comparison's machine as stored in comparisons.machine (NULL: no memory). */
static json_t *machine_json(const struct comparison *cmp)
{
	json_t *machine = json_pack("{s:s?, s:i, s:s?, s:s?}", "hostname", cmp->machine.hostname,
	                            "cpus", cmp->machine.cpus, "model", cmp->machine.model,
	                            "kernel", cmp->machine.kernel);

	/* an emulated kernel run: the guest kernel's lockup thresholds, for the reply */
	if (machine && cmp->machine.guest_thresholds)
		json_object_set_new(machine, "guest_thresholds",
		                    json_string(cmp->machine.guest_thresholds));
	/* one image both sides ran: the rows are an A/A (compare.h, identical_code) */
	if (machine && cmp->identical_code && cmp->image) {
		json_object_set_new(machine, "image", json_string(cmp->image));
		json_object_set_new(machine, "identical_code", json_true());
	}
	return machine;
}

/* Row i of a comparison as one record of verdicts_store's jsonb_to_recordset (NULL: no memory). */
static json_t *row_json(const struct compare_row *r, size_t i)
{
	json_t *o = json_pack(
	    "{s:I, s:s, s:s, s:s, s:s, s:s, s:I, s:b, s:o, s:o, s:o, s:o, s:o, s:s, s:i, "
	    "s:i, s:i, s:i, s:s?, s:s?, s:b, s:b, s:b, s:I}",
	    "idx", (json_int_t)i, "workload", r->workload, "lock", r->lock, "metric", r->metric,
	    "unit", r->unit ? r->unit : "", "params_key", r->params_key ? r->params_key : "",
	    "users", (json_int_t)r->users, "higher_better", r->higher_better, "change",
	    json_finite(r->change), "p", isfinite(r->p) ? json_real(r->p) : json_real(1.0), "q",
	    isfinite(r->q) ? json_real(r->q) : json_real(1.0), "change_lo",
	    json_finite(r->change_lo), "change_hi", json_finite(r->change_hi), "verdict",
	    verdict_name(r->verdict), "base_lockups", r->base_lockups, "patched_lockups",
	    r->patched_lockups, "base_runs", r->base_runs, "patched_runs", r->patched_runs,
	    "lockup_message", r->lockup_message, "lockup_stacks", r->lockup_stacks, "tested",
	    r->tested, "significant", r->significant, "control", r->control, "pairs",
	    (json_int_t)r->pairs);

	if (!o)
		return NULL;
	json_object_set_new(o, "measured_runs", json_integer(r->measured_runs));
	if (r->unresolvable > 0)
		json_object_set_new(o, "unresolvable", json_finite(r->unresolvable));
	/* the band no-change was judged against (sql/023) */
	if (r->margin > 0)
		json_object_set_new(o, "margin", json_finite(r->margin));
	/* past that band, as the report and the reply judged it (sql/024) */
	json_object_set_new(o, "moved", json_boolean(!r->control && compare_row_moved(r)));
	json_object_set_new(o, "duet_runs", json_integer(r->duet_runs));
	json_object_set_new(o, "lockstep_runs", json_integer(r->lockstep_runs));
	json_object_set_new(o, "disturb_runs", json_integer(r->disturb_runs));
	json_object_set_new(o, "repeated", json_integer(r->repeated));
	json_object_set_new(o, "disturb_limit_pct", json_finite(r->disturb_limit_pct));
	summary_json("base", &r->base, o);
	summary_json("patched", &r->patched, o);
	return o;
}

int verdicts_store(PGconn *c, long long job_id, const struct comparison *cmp, bool final)
{
	char idbuf[24], cid[24], br[16], pr[16];
	json_t *machine = NULL, *rows = NULL;
	char *mtext = NULL, *rtext = NULL;
	PGresult *res = NULL;
	int rc = DB_FAIL;
	size_t i;

	snprintf(idbuf, sizeof(idbuf), "%lld", job_id);
	snprintf(br, sizeof(br), "%d", cmp->base_rounds);
	snprintf(pr, sizeof(pr), "%d", cmp->patched_rounds);
	machine = machine_json(cmp);
	rows = json_array();
	if (!machine || !rows)
		goto out;
	for (i = 0; i < cmp->nrows; i++) {
		json_t *o = row_json(&cmp->rows[i], i);

		if (!o)
			goto out;
		json_array_append_new(rows, o);
	}
	mtext = json_dumps(machine, JSON_COMPACT);
	rtext = json_dumps(rows, JSON_COMPACT);
	if (!mtext || !rtext)
		goto out;
	{
		const char *p[1] = {idbuf};

		if ((rc = db_run(c, "DELETE FROM comparisons WHERE job_id = $1", 1, p)) != DB_OK)
			goto out;
	}
	{
		char alpha[32], effect[32], margin[32], minsamples[24], confirm[16];
		const char *p[12] = {idbuf,
		                     cmp->suite ? cmp->suite : "",
		                     mtext,
		                     br,
		                     pr,
		                     verdict_name(comparison_overall(cmp)),
		                     final ? "t" : "f",
		                     alpha,
		                     effect,
		                     margin,
		                     minsamples,
		                     confirm};

		snprintf(alpha, sizeof(alpha), "%.17g", cmp->opts.alpha);
		snprintf(effect, sizeof(effect), "%.17g", cmp->opts.min_effect);
		snprintf(margin, sizeof(margin), "%.17g", cmp->opts.equiv_margin);
		snprintf(minsamples, sizeof(minsamples), "%zu", cmp->opts.min_samples);
		snprintf(confirm, sizeof(confirm), "%d", cmp->opts.confirm_from);
		res =
		    db_exec(c,
		            "INSERT INTO comparisons (job_id, suite, machine, base_rounds, "
		            "patched_rounds, overall, final, alpha, min_effect, equiv_margin, "
		            "min_samples, confirm_from) VALUES ($1, $2, $3::jsonb, $4, $5, $6, $7, "
		            "$8, $9, $10, $11, $12) RETURNING id",
		            12, p);
		if (!res) {
			rc = db_failure();
			goto out;
		}
		snprintf(cid, sizeof(cid), "%s", PQgetvalue(res, 0, 0));
	}
	{
		const char *p[2] = {cid, rtext};

		rc = db_run(
		    c,
		    "INSERT INTO verdicts SELECT $1::bigint, x.* FROM jsonb_to_recordset($2) "
		    "AS x(idx int, workload text, lock text, metric text, unit text, "
		    "params_key text, users bigint, higher_better boolean, base_n int, "
		    "base_mean float8, base_stddev float8, base_min float8, base_max float8, "
		    "patched_n int, patched_mean float8, patched_stddev float8, "
		    "patched_min float8, patched_max float8, change float8, p float8, "
		    "q float8, change_lo float8, change_hi float8, verdict text, "
		    "base_lockups int, patched_lockups int, base_runs int, patched_runs int, "
		    "lockup_message text, lockup_stacks text, tested boolean, "
		    "significant boolean, control boolean, pairs int, measured_runs int, "
		    "duet_runs int, disturb_runs int, repeated int, disturb_limit_pct float8, "
		    "lockstep_runs int, unresolvable float8, margin float8, moved boolean)",
		    2, p);
	}
out:
	PQclear(res);
	json_decref(machine);
	json_decref(rows);
	free(mtext);
	free(rtext);
	return rc;
}

static enum verdict verdict_parse(const char *s)
{
	if (!strcmp(s, "improvement"))
		return VERDICT_IMPROVEMENT;
	if (!strcmp(s, "regression"))
		return VERDICT_REGRESSION;
	if (!strcmp(s, "inconclusive"))
		return VERDICT_INCONCLUSIVE;
	if (!strcmp(s, "lockup"))
		return VERDICT_LOCKUP;
	if (!strcmp(s, "splat"))
		return VERDICT_SPLAT;
	return VERDICT_NO_CHANGE;
}

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

void verdicts_free(struct stored_comparison *v, size_t n)
{
	size_t i;

	for (i = 0; v && i < n; i++) {
		free(v[i].machine_class);
		comparison_release(&v[i].cmp);
	}
	free(v);
}

/*
 * Row k of verdicts_load's verdicts query into r (strings copied), judged
 * against opts for its margin.
 */
static void row_from_db(PGresult *res, int k, const struct compare_opts *opts,
                        struct compare_row *r)
{
	r->workload = strdup(PQgetvalue(res, k, 1));
	r->lock = strdup(PQgetvalue(res, k, 2));
	r->metric = strdup(PQgetvalue(res, k, 3));
	r->unit = strdup(PQgetvalue(res, k, 4));
	r->params_key = strdup(PQgetvalue(res, k, 5));
	r->users = strtoll(PQgetvalue(res, k, 6), NULL, 10);
	r->higher_better = PQgetvalue(res, k, 7)[0] == 't';
	r->base.n = (size_t)atol(PQgetvalue(res, k, 8));
	r->base.mean = strtod(PQgetvalue(res, k, 9), NULL);
	r->base.stddev = strtod(PQgetvalue(res, k, 10), NULL);
	r->base.min = strtod(PQgetvalue(res, k, 11), NULL);
	r->base.max = strtod(PQgetvalue(res, k, 12), NULL);
	r->patched.n = (size_t)atol(PQgetvalue(res, k, 13));
	r->patched.mean = strtod(PQgetvalue(res, k, 14), NULL);
	r->patched.stddev = strtod(PQgetvalue(res, k, 15), NULL);
	r->patched.min = strtod(PQgetvalue(res, k, 16), NULL);
	r->patched.max = strtod(PQgetvalue(res, k, 17), NULL);
	r->change = strtod(PQgetvalue(res, k, 18), NULL);
	r->p = strtod(PQgetvalue(res, k, 19), NULL);
	r->q = strtod(PQgetvalue(res, k, 20), NULL);
	r->change_lo = strtod(PQgetvalue(res, k, 21), NULL);
	r->change_hi = strtod(PQgetvalue(res, k, 22), NULL);
	r->verdict = verdict_parse(PQgetvalue(res, k, 23));
	r->base_lockups = atoi(PQgetvalue(res, k, 24));
	r->patched_lockups = atoi(PQgetvalue(res, k, 25));
	r->base_runs = atoi(PQgetvalue(res, k, 26));
	r->patched_runs = atoi(PQgetvalue(res, k, 27));
	r->lockup_message = dup_or_null(db_value(res, k, 28));
	r->lockup_stacks = dup_or_null(db_value(res, k, 29));
	r->tested = PQgetvalue(res, k, 30)[0] == 't';
	r->headline = compare_row_is_headline(r->workload, r->metric);
	r->significant = PQgetvalue(res, k, 31)[0] == 't';
	r->control = PQgetvalue(res, k, 32)[0] == 't';
	r->pairs = (size_t)atol(PQgetvalue(res, k, 33));
	r->measured_runs = atoi(PQgetvalue(res, k, 34));
	r->duet_runs = atoi(PQgetvalue(res, k, 35));
	r->disturb_runs = atoi(PQgetvalue(res, k, 36));
	r->repeated = atoi(PQgetvalue(res, k, 37));
	r->disturb_limit_pct = strtod(PQgetvalue(res, k, 38), NULL);
	r->lockstep_runs = atoi(PQgetvalue(res, k, 39));
	r->unresolvable = strtod(PQgetvalue(res, k, 40), NULL);
	/*
	 * Not stored (no column): the server compares with
	 * COMPARE_TEST_LOG, which takes logs when every paired
	 * round's mean is > 0, as it is when every sample is;
	 * a row with a sample <= 0 is shown as raw differences
	 */
	r->log_ratio = r->pairs >= COMPARE_MIN_PAIRS && r->base.min > 0 && r->patched.min > 0;
	r->margin = compare_row_margin(r->metric, r->users, opts);
}

/* The stored machine object, and the image both sides ran when they ran one. */
static void machine_from_json(const char *text, struct comparison *cmp)
{
	json_t *doc = json_loads(text, 0, NULL);
	const char *host = NULL, *model = NULL, *kernel = NULL, *image = NULL, *th = NULL;
	int cpus = 0, identical = 0;

	if (doc)
		json_unpack(doc, "{s?s, s?i, s?s, s?s, s?s, s?b, s?s}", "hostname", &host, "cpus",
		            &cpus, "model", &model, "kernel", &kernel, "image", &image,
		            "identical_code", &identical, "guest_thresholds", &th);
	cmp->machine.hostname = strdup(host ? host : "");
	cmp->machine.model = strdup(model ? model : "");
	cmp->machine.kernel = strdup(kernel ? kernel : "");
	cmp->machine.cpus = cpus;
	cmp->machine.guest_thresholds = th && *th ? strdup(th) : NULL;
	cmp->identical_code = identical && image;
	cmp->image = cmp->identical_code ? strdup(image) : NULL;
	json_decref(doc);
}

int verdicts_load(PGconn *c, long long submission_id, struct stored_comparison **out, size_t *n)
{
	char idbuf[24];
	const char *p[1] = {idbuf};
	PGresult *cres = NULL, *vres = NULL;
	struct stored_comparison *v = NULL;
	int nc, nv, i, k, rc = DB_FAIL;

	*out = NULL;
	*n = 0;
	snprintf(idbuf, sizeof(idbuf), "%lld", submission_id);
	cres =
	    db_exec(c,
	            "SELECT c.id, c.job_id, j.machine_class, c.final, c.suite, c.machine::text, "
	            "c.base_rounds, c.patched_rounds, c.alpha, c.min_effect, c.equiv_margin, "
	            "c.min_samples, c.confirm_from, j.plan::text FROM comparisons c JOIN jobs j ON "
	            "j.id = c.job_id WHERE j.submission_id = $1 ORDER BY c.job_id",
	            1, p);
	if (!cres)
		return db_failure();
	vres = db_exec(
	    c,
	    "SELECT v.comparison_id, v.workload, v.lock, v.metric, v.unit, v.params_key, "
	    "v.users, v.higher_better, v.base_n, v.base_mean, v.base_stddev, v.base_min, "
	    "v.base_max, v.patched_n, v.patched_mean, v.patched_stddev, v.patched_min, "
	    "v.patched_max, v.change, v.p, v.q, v.change_lo, v.change_hi, v.verdict, "
	    "v.base_lockups, v.patched_lockups, v.base_runs, v.patched_runs, "
	    "v.lockup_message, v.lockup_stacks, v.tested, v.significant, v.control, v.pairs, "
	    "v.measured_runs, v.duet_runs, v.disturb_runs, v.repeated, v.disturb_limit_pct, "
	    "v.lockstep_runs, coalesce(v.unresolvable, 0) "
	    "FROM verdicts v "
	    "JOIN comparisons c ON "
	    "c.id = v.comparison_id JOIN jobs j ON j.id = c.job_id WHERE "
	    "j.submission_id = $1 ORDER BY c.job_id, v.idx",
	    1, p);
	if (!vres) {
		rc = db_failure();
		goto out;
	}
	nc = PQntuples(cres);
	nv = PQntuples(vres);
	v = calloc((size_t)nc + 1, sizeof(*v));
	if (!v)
		goto out;
	for (i = 0; i < nc; i++) {
		struct comparison *cmp = &v[i].cmp;
		const char *cid = PQgetvalue(cres, i, 0);
		size_t nrows = 0;

		comparison_init(cmp);
		*n = (size_t)i + 1;
		v[i].job_id = strtoll(PQgetvalue(cres, i, 1), NULL, 10);
		v[i].machine_class = strdup(PQgetvalue(cres, i, 2));
		v[i].final = PQgetvalue(cres, i, 3)[0] == 't';
		cmp->suite = strdup(PQgetvalue(cres, i, 4));
		machine_from_json(PQgetvalue(cres, i, 5), cmp);
		cmp->base_rounds = atoi(PQgetvalue(cres, i, 6));
		cmp->patched_rounds = atoi(PQgetvalue(cres, i, 7));
		cmp->opts.alpha = strtod(PQgetvalue(cres, i, 8), NULL);
		cmp->opts.min_effect = strtod(PQgetvalue(cres, i, 9), NULL);
		cmp->opts.equiv_margin = strtod(PQgetvalue(cres, i, 10), NULL);
		cmp->opts.min_samples = (size_t)atol(PQgetvalue(cres, i, 11));
		cmp->opts.confirm_from = atoi(PQgetvalue(cres, i, 12));
		cmp->opts.looks = verdicts_looks(srv_cfg.min_rounds, srv_cfg.max_rounds);
		for (k = 0; k < nv; k++)
			nrows += strcmp(PQgetvalue(vres, k, 0), cid) == 0;
		cmp->rows = calloc(nrows + 1, sizeof(*cmp->rows));
		if (!cmp->rows)
			goto out;
		for (k = 0; k < nv; k++) {
			if (strcmp(PQgetvalue(vres, k, 0), cid) != 0)
				continue;
			row_from_db(vres, k, &cmp->opts, &cmp->rows[cmp->nrows++]);
		}
		plan_mark_rows(db_value(cres, i, 13), cmp);
		compare_notes_escalate(cmp);
		debug_splats(c, v[i].job_id, cmp);
	}
	*out = v;
	v = NULL;
	rc = DB_OK;
out:
	if (v) {
		verdicts_free(v, *n);
		*n = 0;
	}
	PQclear(cres);
	PQclear(vres);
	return rc;
}

/*
 * Whether job's lockups are a crash: every one is the patched side's and of
 * kind "crash" (a benchmark point or lockbench itself died by a signal or
 * with a sanitizer's report), and there is at least one.  The base side ran
 * those points clean: it has no lockup at all.  1, 0, -1 on a database error.
 */
static int verdicts_is_crash(PGconn *c, long long job_id)
{
	char idbuf[24];
	const char *p[1] = {idbuf};
	PGresult *res;
	int rc;

	snprintf(idbuf, sizeof(idbuf), "%lld", job_id);
	res = db_exec(c,
	              "SELECT count(*) FILTER (WHERE variant = 'patched' AND kind = 'crash'), "
	              "count(*) FILTER (WHERE variant <> 'patched' OR kind <> 'crash') FROM "
	              "lockups WHERE job_id = $1",
	              1, p);
	if (!res)
		return -1;
	rc = atoi(PQgetvalue(res, 0, 0)) > 0 && atoi(PQgetvalue(res, 0, 1)) == 0;
	PQclear(res);
	return rc;
}

const char *verdicts_job_word(PGconn *c, long long job_id, const struct comparison *cmp)
{
	enum verdict v = comparison_overall(cmp);

	if (v == VERDICT_LOCKUP && verdicts_is_crash(c, job_id) == 1)
		return "crash";
	return verdict_name(v);
}
