/*
 * results.c - POST /api/v1/jobs/{id}/results: an agent's document checked
 * against the job it holds, stored with its runs, samples and lockups, and
 * the job judged once the wanted rounds are in (compare, confirm, more
 * rounds or done, its verdict and reply).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "config.h"
#include "db.h"
#include "jobs.h"
#include "metrics.h"
#include "plan.h"
#include "reports.h"
#include "result.h"
#include "verdicts.h"

struct results_ctx {
	long long id;
	struct auth_agent *agent;
	const char *key;
	/* stored as jsonb: the body as it came when it is the document, else the
	 * wrapped form's document printed compact */
	const char *doc_text;
	const json_t *doc; /* and as parsed: a replay is compared with it */
	const struct lb_result *res;
	json_t *runs, *samples, *lockups; /* jsonb_to_recordset inputs */
	char claim[16];                   /* the job's claim count when posted (its lease) */
	/* out */
	int status;
	char msg[512];
	bool duplicate;
	json_t *progress;
	const char *verdict; /* the job's, when this result finished it (for /metrics) */
};

/*
 * The job's confirm_from (0 while it has none), its most rounds (its
 * plan's, else the --max-rounds it was made with, else ours) and its step
 * (the --min-rounds it was made with, else ours); -1 on a database failure.
 */
static int job_confirm_from(PGconn *c, const char *idbuf, int *max_rounds, int *min_rounds,
                            int *planned)
{
	const char *q[1] = {idbuf};
	PGresult *res = db_exec(c,
	                        "SELECT coalesce(confirm_from, 0), max_rounds, "
	                        "coalesce((plan->>'rounds')::int, 0), min_rounds "
	                        "FROM jobs WHERE id = $1",
	                        1, q);
	int v;

	if (!res || PQntuples(res) != 1) {
		PQclear(res);
		return -1;
	}
	v = atoi(PQgetvalue(res, 0, 0));
	*max_rounds = PQgetisnull(res, 0, 1) ? srv_cfg.max_rounds : atoi(PQgetvalue(res, 0, 1));
	*planned = atoi(PQgetvalue(res, 0, 2));
	*min_rounds = PQgetisnull(res, 0, 3) ? srv_cfg.min_rounds : atoi(PQgetvalue(res, 0, 3));
	PQclear(res);
	return v;
}

/* A kernel job's debug pass: base-debug or patched-debug, judged before the rounds. */
static bool debug_variant(const char *variant)
{
	return !strcmp(variant, "base-debug") || !strcmp(variant, "patched-debug");
}

/*
 * After a document is stored and the wanted rounds are in: compare, then
 * ask for more rounds, ask for a confirmation, or finish.
 *
 * A change found (a deciding regression or improvement) is never the answer
 * at once: the job asks for as many rounds again as found it, and the
 * comparison of all of them counts the change only where the new rounds, on
 * their own, find it again (compare_opts.confirm_from).  As many again: the
 * confirmation then has the power the finding had (a change found late is
 * a small one), where a fixed --min-rounds confirmed 10 of 31 real 5%
 * slowdowns found on this machine (make bench-verdicts).  After that the job finishes
 * whatever the rows say.  Inconclusive rows without a finding ask for
 * --min-rounds more up to --max-rounds, as before, or, in a planned job
 * that looked first at --min-rounds (plan_job), for the rounds its plan
 * asks for; a lockup finishes the job at once.
 */
/* Mark the job done with cmp's verdict and its submission's reports. */
static int results_finish(PGconn *c, struct results_ctx *x, long long submission,
                          const struct comparison *cmp)
{
	char idbuf[24];
	int rc;

	snprintf(idbuf, sizeof(idbuf), "%lld", x->id);
	const char *q[2] = {idbuf, verdicts_job_word(c, x->id, cmp)};
	rc = db_run(c,
	            "UPDATE jobs SET state = 'done', verdict = $2, lease_expires = NULL, "
	            "updated = now() WHERE id = $1",
	            2, q);
	if (rc == DB_OK)
		rc = reports_job_done(c, submission);
	if (rc == DB_OK)
		x->verdict = q[1];
	return rc;
}

static int results_evaluate(PGconn *c, struct results_ctx *x, long long submission, int wanted)
{
	char idbuf[24], next[16], from[16];
	struct comparison cmp;
	char err[256];
	int rc, confirm_from, max_rounds, min_rounds, planned;
	bool confirm = false, more = false;

	snprintf(idbuf, sizeof(idbuf), "%lld", x->id);
	if ((confirm_from = job_confirm_from(c, idbuf, &max_rounds, &min_rounds, &planned)) < 0)
		return db_failure();
	comparison_init(&cmp);
	rc = verdicts_compute(c, x->id, confirm_from, &cmp, err, sizeof(err));
	if (rc == -3) {
		/* the documents do not compare (different suites, no common point) */
		comparison_release(&cmp);
		x->status = 422;
		snprintf(x->msg, sizeof(x->msg), "cannot compare the rounds: %s", err);
		return DB_ABORT;
	}
	if (rc != 0) {
		comparison_release(&cmp);
		return rc < 0 ? rc : DB_OK;
	}
	if (confirm_from == 0) {
		confirm = verdicts_found_change(&cmp);
		more = !confirm && verdicts_want_more(&cmp) && wanted < max_rounds;
	}
	rc = verdicts_store(c, x->id, &cmp, !confirm && !more);
	snprintf(next, sizeof(next), "%d", plan_next_look(planned, wanted, max_rounds, min_rounds));
	snprintf(from, sizeof(from), "%d", wanted);
	if (rc == DB_OK && confirm) {
		const char *q[2] = {idbuf, from};

		rc = db_run(c,
		            "UPDATE jobs SET confirm_from = $2::int, rounds_wanted = 2 * $2::int, "
		            "updated = now() WHERE id = $1",
		            2, q);
	} else if (rc == DB_OK && more) {
		const char *q[2] = {idbuf, next};

		rc = db_run(
		    c, "UPDATE jobs SET rounds_wanted = $2::int, updated = now() WHERE id = $1", 2,
		    q);
	} else if (rc == DB_OK) {
		rc = results_finish(c, x, submission, &cmp);
	}
	comparison_release(&cmp);
	return rc;
}

/*
 * A kernel job's debug pass (docs/api.md): once base-debug and
 * patched-debug are in, a splat only the patched kernel printed, or a
 * lockup, ends the job with that verdict and no measuring round; else the
 * rounds go on.  Returns DB_OK or a db_tx code.
 */
static int results_debug(PGconn *c, struct results_ctx *x, long long submission)
{
	struct comparison cmp;
	enum verdict v;
	char err[256];
	int rc;

	comparison_init(&cmp);
	rc = verdicts_compute_debug(c, x->id, &cmp, err, sizeof(err));
	if (rc < 0 && rc != -3) {
		comparison_release(&cmp);
		return rc;
	}
	v = rc == 0 ? comparison_overall(&cmp) : VERDICT_NO_CHANGE;
	rc = DB_OK;
	if (v == VERDICT_SPLAT || v == VERDICT_LOCKUP) {
		rc = verdicts_store(c, x->id, &cmp, true);
		if (rc == DB_OK)
			rc = results_finish(c, x, submission, &cmp);
	}
	comparison_release(&cmp);
	return rc;
}

/*
 * Lock the job's row and read what results_judge needs.  Returns the
 * result (the caller PQclears it; no row when there is no such job), or
 * NULL as db_exec does.
 */
static PGresult *results_lock_job(PGconn *c, const struct results_ctx *x, const char *idbuf,
                                  const char *agent)
{
	char ours[16];
	const char *p[5] = {idbuf, x->key, x->res->suite, agent, ours};

	snprintf(ours, sizeof(ours), "%d", srv_cfg.max_rounds);

	/*
	 * The job row lock orders concurrent posts for one job; the same
	 * statement reads what results_judge checks.  The most rounds a job
	 * may ask for: what it was made with (a server with another
	 * --max-rounds may have made it), ours for an older job.
	 */
	return db_exec(c,
	               "SELECT state, claimed_by, submission_id, lease_expires < now(), "
	               "suite = $3, (SELECT job_id FROM results WHERE idempotency_key = $2), "
	               "rounds_wanted, (SELECT agent_id IS NOT DISTINCT FROM $4::bigint "
	               "FROM results WHERE idempotency_key = $2), (SELECT document::text "
	               "FROM results WHERE idempotency_key = $2), claims, "
	               "greatest(coalesce(max_rounds, $5::int), coalesce(min_rounds, 0)) "
	               "FROM jobs WHERE id = $1 FOR UPDATE",
	               5, p);
}

/*
 * Equal JSON values, a number equal to a number of the same value: jsonb
 * prints 1e16 back as the integer 10000000000000000.
 */
static bool results_json_same(const json_t *a, const json_t *b)
{
	const char *key;
	json_t *v;
	size_t i;

	if (json_is_number(a) && json_is_number(b))
		return json_number_value(a) == json_number_value(b);
	if (json_typeof(a) != json_typeof(b))
		return false;
	switch (json_typeof(a)) {
	case JSON_OBJECT:
		if (json_object_size(a) != json_object_size(b))
			return false;
		json_object_foreach((json_t *)a, key, v)
		{
			const json_t *w = json_object_get(b, key);

			if (!w || !results_json_same(v, w))
				return false;
		}
		return true;
	case JSON_ARRAY:
		if (json_array_size(a) != json_array_size(b))
			return false;
		json_array_foreach(a, i, v)
		{
			if (!results_json_same(v, json_array_get(b, i)))
				return false;
		}
		return true;
	default:
		return json_equal(a, b);
	}
}

/*
 * Whether doc is the stored document (jsonb's text): the same values,
 * whatever the bytes or the form (bare or wrapped) of either post.
 */
static bool results_same_document(const json_t *doc, const char *stored)
{
	json_t *old = stored ? json_loads(stored, 0, NULL) : NULL;
	bool same = old && results_json_same(old, doc);

	json_decref(old);
	return same;
}

/*
 * Whether the post may be stored, from results_lock_job's row; sets
 * x->claim and *submission.  Returns DB_OK (x->duplicate set when it is a
 * replay of a stored document), or DB_ABORT with x->status and x->msg.
 */
static int results_judge(struct results_ctx *x, const PGresult *res, const char *idbuf,
                         long long *submission)
{
	const char *owner, *key_job;
	bool same_agent;
	int rc = DB_ABORT, most;

	if (PQntuples(res) != 1) {
		x->status = 404;
		snprintf(x->msg, sizeof(x->msg), "no job %lld", x->id);
		return DB_ABORT;
	}
	/* the job's --max-rounds, and as many again when a change found is confirmed */
	most = atoi(PQgetvalue(res, 0, 10));
	if (x->res->round >= 2 * most) {
		x->status = 422;
		snprintf(x->msg, sizeof(x->msg), "round: 0 to %d", 2 * most - 1);
		return DB_ABORT;
	}
	owner = db_value(res, 0, 1);
	key_job = db_value(res, 0, 5);
	/*
	 * Under a key another agent used for this job (it lost the lease),
	 * the post is a new document: the checks below apply and the old
	 * half is discarded with its round.
	 */
	same_agent = key_job && PQgetvalue(res, 0, 7)[0] == 't';
	*submission = strtoll(PQgetvalue(res, 0, 2), NULL, 10);
	snprintf(x->claim, sizeof(x->claim), "%s", PQgetvalue(res, 0, 9));
	if (key_job && strcmp(key_job, idbuf) != 0) {
		x->status = 409;
		snprintf(x->msg, sizeof(x->msg), "idempotency key already used for another job");
	} else if (key_job && same_agent && !results_same_document(x->doc, db_value(res, 0, 8))) {
		/* a replay is the same document: another one under its key is refused */
		x->status = 409;
		snprintf(x->msg, sizeof(x->msg),
		         "idempotency key already used for another document of this job");
	} else if (key_job && same_agent) {
		/* a replay of a stored document answers as the first post did */
		x->duplicate = true;
		rc = DB_OK;

	} else if (owner && strtoll(owner, NULL, 10) != x->agent->id) {
		x->status = 403;
		snprintf(x->msg, sizeof(x->msg), "job %lld is leased to another agent", x->id);
	} else if (strcmp(PQgetvalue(res, 0, 0), "running") != 0 || !owner ||
	           (db_value(res, 0, 3) && PQgetvalue(res, 0, 3)[0] == 't')) {
		x->status = 409;
		snprintf(x->msg, sizeof(x->msg), "job %lld is %s: the lease is gone", x->id,
		         PQgetvalue(res, 0, 0));
	} else if (PQgetvalue(res, 0, 4)[0] != 't') {
		x->status = 422;
		snprintf(x->msg, sizeof(x->msg), "suite '%s' is not the suite of job %lld",
		         x->res->suite, x->id);
	} else if (x->res->round >= atoi(PQgetvalue(res, 0, 6))) {
		/*
		 * A round the job has not asked for yet: stored now, it would
		 * count among rounds the server has not decided to run, and a
		 * confirmation must stand on rounds run after the finding.
		 */
		x->status = 409;
		snprintf(x->msg, sizeof(x->msg),
		         "round %d is not wanted: job %lld wants rounds 0-%d", x->res->round, x->id,
		         atoi(PQgetvalue(res, 0, 6)) - 1);
	} else {
		rc = DB_OK;
	}
	return rc;
}

/*
 * Store the document in one statement: discard the halves of this round,
 * and a document under this key, stored under another claim of the job;
 * insert the results row and its runs, samples and lockups (x->runs,
 * x->samples, x->lockups) under it.  Returns DB_OK, DB_ABORT (409 in
 * x->status and x->msg) when the job has this round of this variant
 * already, DB_FAIL when out of memory, or db_failure().
 *
 * A round's base and patched are one lease's: a half posted under an
 * earlier claim of the job (by another agent, or by this one before it
 * restarted) is discarded, and this lease runs the round whole
 * (next_round points at it again).  Two machines' halves would pair one
 * machine's speed against another's; two leases' halves, a machine's state
 * then against its state now.  The insert reads the count of what the
 * delete returned, so the delete has run when the insert checks its
 * conflicts (a row this transaction deleted is no conflict); the rows read
 * the new id from the insert, so none is written when it wrote nothing.
 */
static int results_store(PGconn *c, struct results_ctx *x, const char *idbuf, const char *agent,
                         const char *round)
{
	char *runs = json_dumps(x->runs, JSON_COMPACT);
	char *samples = json_dumps(x->samples, JSON_COMPACT);
	char *lockups = json_dumps(x->lockups, JSON_COMPACT);
	const char *p[10] = {idbuf,       agent,    x->key, round,   x->res->variant,
	                     x->doc_text, x->claim, runs,   samples, lockups};
	PGresult *res = NULL;
	int rc = DB_FAIL;

	if (!runs || !samples || !lockups)
		goto out; /* no memory: DB_FAIL, a 500 */
	res =
	    db_exec(c,
	            "WITH d AS (DELETE FROM results WHERE job_id = $1::bigint AND ((round = "
	            "$4::int AND variant IN ('base', 'patched', 'base-debug', 'patched-debug')) "
	            "OR idempotency_key = $3::text) AND claim IS DISTINCT FROM $7::int "
	            "RETURNING 1), "
	            "r AS (INSERT INTO results (job_id, agent_id, idempotency_key, round, "
	            "variant, document, claim) SELECT $1::bigint, $2::bigint, $3::text, $4::int, "
	            "$5::text, $6::jsonb, $7::int FROM (SELECT count(*) FROM d) AS z ON CONFLICT "
	            "(job_id, variant, round) DO NOTHING RETURNING id), "
	            "ru AS (INSERT INTO runs (result_id, idx, workload, lock, params_key, "
	            "locked_up) SELECT r.id, x.* FROM r, jsonb_to_recordset($8::jsonb) AS x(idx "
	            "int, workload text, lock text, params_key text, locked_up boolean)), "
	            "sa AS (INSERT INTO samples (result_id, run_idx, metric, unit, higher_better, "
	            "value, samples) SELECT r.id, x.* FROM r, jsonb_to_recordset($9::jsonb) AS "
	            "x(run_idx int, metric text, unit text, higher_better boolean, value float8, "
	            "samples float8[])), "
	            "lo AS (INSERT INTO lockups (job_id, result_id, variant, round, workload, "
	            "lock, "
	            "params_key, kind, message, stacks) SELECT $1::bigint, r.id, x.variant, "
	            "$4::int, x.workload, x.lock, x.params_key, x.kind, x.message, x.stacks FROM "
	            "r, jsonb_to_recordset($10::jsonb) AS x(variant text, workload text, lock "
	            "text, params_key text, kind text, message text, stacks text)) "
	            "SELECT id FROM r",
	            10, p);
	if (!res) {
		rc = db_failure();
	} else if (PQntuples(res) == 0) {
		x->status = 409;
		snprintf(x->msg, sizeof(x->msg),
		         "round %d of '%s' is already stored for job %lld under another "
		         "idempotency key",
		         x->res->round, x->res->variant, x->id);
		rc = DB_ABORT;
	} else {
		rc = DB_OK;
	}
out:
	PQclear(res);
	free(runs);
	free(samples);
	free(lockups);
	return rc;
}

/*
 * The job's progress into x->progress once the document is stored; when
 * the wanted rounds are all in, results_evaluate first and the progress
 * after it.  Returns DB_OK, DB_FAIL when the progress cannot be read, or
 * results_evaluate's code.
 */
static int results_progress(PGconn *c, struct results_ctx *x, long long submission)
{
	int wanted, complete, rc;

	if (debug_variant(x->res->variant)) {
		rc = results_debug(c, x, submission);
		if (rc != DB_OK)
			return rc;
		x->progress = jobs_progress(c, x->id);
		return x->progress ? DB_OK : DB_FAIL;
	}
	x->progress = jobs_progress(c, x->id);
	if (!x->progress)
		return DB_FAIL;
	wanted = (int)json_integer_value(json_object_get(x->progress, "rounds"));
	complete = (int)json_integer_value(json_object_get(x->progress, "rounds_complete"));
	if (complete < wanted)
		return DB_OK;
	rc = results_evaluate(c, x, submission, wanted);
	if (rc != DB_OK)
		return rc;
	json_decref(x->progress);
	x->progress = jobs_progress(c, x->id);
	return x->progress ? DB_OK : DB_FAIL;
}

/*
 * The transaction of a posted document: check it against the locked job,
 * answer a replay as the first post, else store it in place of another
 * claim's halves and look at the job's progress.
 */
static int results_body(PGconn *c, void *arg)
{
	struct results_ctx *x = arg;
	char idbuf[24], agent[24], round[16];
	long long submission = 0;
	PGresult *res;
	int rc;

	json_decref(x->progress);
	x->progress = NULL;
	x->duplicate = false;
	x->verdict = NULL;
	snprintf(idbuf, sizeof(idbuf), "%lld", x->id);
	snprintf(agent, sizeof(agent), "%lld", x->agent->id);
	snprintf(round, sizeof(round), "%d", x->res->round);

	res = results_lock_job(c, x, idbuf, agent);
	if (!res)
		return db_failure();
	rc = results_judge(x, res, idbuf, &submission);
	PQclear(res);
	if (rc != DB_OK)
		return rc;
	if (x->duplicate) {
		x->progress = jobs_progress(c, x->id);
		return x->progress ? DB_OK : DB_FAIL;
	}
	rc = results_store(c, x, idbuf, agent, round);
	if (rc != DB_OK)
		return rc;
	return results_progress(c, x, submission);
}

/* The rows of runs/samples/lockups for jsonb_to_recordset. */
static int results_rows(struct results_ctx *x)
{
	const struct lb_result *r = x->res;
	size_t i, k, s;

	x->runs = json_array();
	x->samples = json_array();
	x->lockups = json_array();
	if (!x->runs || !x->samples || !x->lockups)
		return -1;
	for (i = 0; i < r->nruns; i++) {
		const struct lb_run *run = &r->runs[i];
		char *key = run_params_key(run);

		if (!key)
			return -1;
		json_array_append_new(x->runs, json_pack("{s:I, s:s, s:s, s:s, s:b}", "idx",
		                                         (json_int_t)i, "workload", run->workload,
		                                         "lock", run->lock, "params_key", key,
		                                         "locked_up", run->lockup != NULL));
		for (k = 0; k < run->nmetrics; k++) {
			const struct lb_metric *m = &run->metrics[k];
			json_t *vals = json_array();

			for (s = 0; vals && s < m->nsamples; s++)
				json_array_append_new(vals, json_real(m->samples[s]));
			json_array_append_new(x->samples,
			                      json_pack("{s:I, s:s, s:s, s:b, s:f, s:o}", "run_idx",
			                                (json_int_t)i, "metric", m->name, "unit",
			                                m->unit ? m->unit : "", "higher_better",
			                                m->higher_better, "value", m->value,
			                                "samples", vals ? vals : json_array()));
		}
		if (run->lockup)
			json_array_append_new(
			    x->lockups,
			    json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s?}", "variant", r->variant,
			              "workload", run->workload, "lock", run->lock, "params_key",
			              key, "kind", run->lockup->kind ? run->lockup->kind : "",
			              "message", run->lockup->message ? run->lockup->message : "",
			              "stacks", run->lockup->stacks));
		free(key);
	}
	return 0;
}

enum handler_rc api_job_results(struct http_request *req, long long id)
{
	struct auth_agent agent;
	struct results_ctx x;
	struct lb_result res;
	json_t *body = NULL, *doc;
	json_error_t jerr;
	char err[512];
	char *doc_text = NULL;
	PGconn *c;
	enum handler_rc rc;
	int dbrc;

	memset(&x, 0, sizeof(x));
	result_init(&res);
	x.id = id;
	x.agent = &agent;
	rc = jobs_agent_request(req, &c, &agent);
	if (rc != HANDLER_OK)
		goto out;
	body = http_body_json(req);
	if (!body) {
		rc = HANDLER_HANDLED;
		goto out;
	}
	/* either the document itself or {"idempotency_key": k, "result": doc} */
	doc = body;
	x.key = http_header(req, "Idempotency-Key");
	if (json_object_get(body, "result")) {
		const char *k = NULL;

		if (json_unpack_ex(body, &jerr, JSON_STRICT, "{s:o, s?s}", "result", &doc,
		                   "idempotency_key", &k) != 0) {
			rc = http_reply_error(req, 400, "invalid", "%s", jerr.text);
			goto out;
		}
		if (k && x.key && strcmp(k, x.key) != 0) {
			rc = http_reply_error(req, 400, "invalid",
			                      "Idempotency-Key header and field differ");
			goto out;
		}
		if (k)
			x.key = k;
	}
	if (!x.key || !*x.key || strlen(x.key) > 200) {
		rc = http_reply_error(req, 400, "invalid",
		                      "an idempotency key (Idempotency-Key header or "
		                      "\"idempotency_key\") of 1 to 200 bytes is required");
		goto out;
	}
	if (result_from_json(doc, &res, err, sizeof(err)) != 0) {
		rc = http_reply_error(req, 422, "invalid-result", "%s", err);
		goto out;
	}
	if (strcmp(res.variant, "base") != 0 && strcmp(res.variant, "patched") != 0 &&
	    strncmp(res.variant, "patch-", 6) != 0 && !debug_variant(res.variant)) {
		rc = http_reply_error(
		    req, 422, "invalid-result",
		    "variant: base, patched, patch-K, base-debug or patched-debug");
		goto out;
	}
	if (debug_variant(res.variant) && res.round != 0) {
		rc = http_reply_error(req, 422, "invalid-result", "a debug pass (%s) is round 0",
		                      res.variant);
		goto out;
	}
	/* the body as it came when it is the document (no second text of it) */
	if (doc != body)
		doc_text = json_dumps(doc, JSON_COMPACT);
	x.doc_text = doc == body ? req->body : doc_text;
	x.doc = doc;
	x.res = &res;
	if (!x.doc_text || results_rows(&x) != 0) {
		rc = http_reply_error(req, 500, "internal", "out of memory");
		goto out;
	}
	dbrc = db_tx(results_body, &x);
	if (dbrc == DB_ABORT)
		rc = http_reply_error(req, (unsigned)x.status,
		                      x.status == 404   ? "not-found"
		                      : x.status == 403 ? "forbidden"
		                      : x.status == 422 ? "invalid-result"
		                                        : "conflict",
		                      "%s", x.msg);
	else if (dbrc != DB_OK)
		rc = api_reply_db_error(req, "cannot store the result");
	else {
		metrics_verdict(x.verdict);
		json_object_set_new(x.progress, "stored", json_boolean(!x.duplicate));
		json_object_set_new(x.progress, "duplicate", json_boolean(x.duplicate));
		rc = http_reply_json(req, x.duplicate ? 200 : 201, x.progress);
		x.progress = NULL;
	}
out:
	json_decref(x.progress);
	json_decref(x.runs);
	json_decref(x.samples);
	json_decref(x.lockups);
	json_decref(body);
	free(doc_text);
	result_release(&res);
	return rc;
}
