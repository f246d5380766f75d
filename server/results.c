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
#include "ingest.h"
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
	const char *doc_text; /* the document as received, stored verbatim as jsonb */
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
	const char *p[5] = {idbuf, x->key, x->res->suite, agent, x->doc_text};

	/*
	 * The job row lock orders concurrent posts for one job; the same
	 * statement reads what results_judge checks.
	 */
	return db_exec(c,
	               "SELECT state, claimed_by, submission_id, lease_expires < now(), "
	               "suite = $3, (SELECT job_id FROM results WHERE idempotency_key = $2), "
	               "rounds_wanted, (SELECT agent_id IS NOT DISTINCT FROM $4::bigint "
	               "FROM results WHERE idempotency_key = $2), (SELECT document = "
	               "$5::jsonb FROM results WHERE idempotency_key = $2), claims "
	               "FROM jobs WHERE id = $1 FOR UPDATE",
	               5, p);
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
	int rc = DB_ABORT;

	if (PQntuples(res) != 1) {
		x->status = 404;
		snprintf(x->msg, sizeof(x->msg), "no job %lld", x->id);
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
	} else if (key_job && same_agent && PQgetvalue(res, 0, 8)[0] != 't') {
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
 * Discard the halves of this round, and a document under this key, stored
 * under another claim of the job.  Returns db_run's code.
 */
static int results_discard_halves(PGconn *c, const struct results_ctx *x, const char *idbuf,
                                  const char *round)
{
	/*
	 * A round's base and patched are one lease's: a half posted under
	 * an earlier claim of the job (by another agent, or by this one
	 * before it restarted) is discarded, and this lease runs the round
	 * whole (next_round points at it again).  Two machines' halves
	 * would pair one machine's speed against another's; two leases'
	 * halves, a machine's state then against its state now.
	 */
	const char *p[4] = {idbuf, round, x->claim, x->key};

	return db_run(c,
	              "DELETE FROM results WHERE job_id = $1 AND ((round = $2::int AND "
	              "variant IN ('base', 'patched', 'base-debug', 'patched-debug')) OR "
	              "idempotency_key = $4) AND "
	              "claim IS DISTINCT FROM $3::int",
	              4, p);
}

/*
 * Store the document as a results row; its id goes into rid.  Returns
 * DB_OK, DB_ABORT (409 in x->status and x->msg) when the job has this
 * round of this variant already, or db_failure().
 */
static int results_insert(PGconn *c, struct results_ctx *x, const char *idbuf, const char *agent,
                          const char *round, char *rid, size_t ridlen)
{
	PGresult *res;
	const char *p[7] = {idbuf, agent, x->key, round, x->res->variant, x->doc_text, x->claim};

	res = db_exec(c,
	              "INSERT INTO results (job_id, agent_id, idempotency_key, round, "
	              "variant, document, claim) VALUES ($1, $2, $3, $4, $5, $6::jsonb, "
	              "$7::int) ON "
	              "CONFLICT (job_id, variant, round) DO NOTHING RETURNING id",
	              7, p);
	if (!res)
		return db_failure();
	if (PQntuples(res) == 0) {
		PQclear(res);
		x->status = 409;
		snprintf(x->msg, sizeof(x->msg),
		         "round %d of '%s' is already stored for job %lld under another "
		         "idempotency key",
		         x->res->round, x->res->variant, x->id);
		return DB_ABORT;
	}
	snprintf(rid, ridlen, "%s", PQgetvalue(res, 0, 0));
	PQclear(res);
	return DB_OK;
}

/*
 * Store the document's runs, samples and lockups (x->runs, x->samples,
 * x->lockups) under results row rid.  Returns DB_OK, DB_FAIL when out of
 * memory, or db_run's code.
 */
static int results_insert_rows(PGconn *c, const struct results_ctx *x, const char *rid,
                               const char *idbuf, const char *round)
{
	char *runs = json_dumps(x->runs, JSON_COMPACT);
	char *samples = json_dumps(x->samples, JSON_COMPACT);
	char *lockups = json_dumps(x->lockups, JSON_COMPACT);
	const char *pr[2] = {rid, runs};
	const char *ps[2] = {rid, samples};
	const char *pl[4] = {rid, lockups, idbuf, round};
	int rc = DB_FAIL;

	if (runs && samples && lockups)
		rc = db_run(c,
		            "INSERT INTO runs (result_id, idx, workload, lock, params_key, "
		            "locked_up) SELECT $1::bigint, x.* FROM jsonb_to_recordset($2) AS "
		            "x(idx int, workload text, lock text, params_key text, locked_up "
		            "boolean)",
		            2, pr);
	if (rc == DB_OK)
		rc = db_run(c,
		            "INSERT INTO samples (result_id, run_idx, metric, unit, "
		            "higher_better, value, samples) SELECT $1::bigint, x.* FROM "
		            "jsonb_to_recordset($2) AS x(run_idx int, metric text, unit text, "
		            "higher_better boolean, value float8, samples float8[])",
		            2, ps);
	if (rc == DB_OK && json_array_size(x->lockups))
		rc = db_run(c,
		            "INSERT INTO lockups (job_id, result_id, variant, round, workload, "
		            "lock, params_key, kind, message, stacks) SELECT $3::bigint, "
		            "$1::bigint, x.variant, $4::int, x.workload, x.lock, x.params_key, "
		            "x.kind, x.message, x.stacks FROM jsonb_to_recordset($2) AS "
		            "x(variant text, workload text, lock text, params_key text, kind "
		            "text, message text, stacks text)",
		            4, pl);
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
	char idbuf[24], agent[24], round[16], rid[24];
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
	rc = results_discard_halves(c, x, idbuf, round);
	if (rc != DB_OK)
		return rc;
	rc = results_insert(c, x, idbuf, agent, round, rid, sizeof(rid));
	if (rc != DB_OK)
		return rc;
	rc = results_insert_rows(c, x, rid, idbuf, round);
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

/*
 * The most rounds a job may ask for: what it was made with (a server with
 * another --max-rounds may have made it), ours for an older job or a
 * missing one (refused later); -1 on a database failure.
 */
static int job_max_rounds(PGconn *c, long long id)
{
	char idbuf[24];
	const char *q[2] = {idbuf, NULL};
	char ours[16];
	snprintf(idbuf, sizeof(idbuf), "%lld", id);
	snprintf(ours, sizeof(ours), "%d", srv_cfg.max_rounds);
	q[1] = ours;
	PGresult *res = db_exec(c,
	                        "SELECT greatest(coalesce(max_rounds, $2::int), "
	                        "coalesce(min_rounds, 0)) FROM jobs WHERE id = $1",
	                        2, q);
	int v;
	if (!res)
		return -1;
	v = PQntuples(res) == 1 ? atoi(PQgetvalue(res, 0, 0)) : srv_cfg.max_rounds;
	PQclear(res);
	return v;
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
	if (result_from_json(doc, &res, err, sizeof(err)) != 0 ||
	    ingest_check_document(doc, err, sizeof(err)) != 0) {
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
	/* the job's --max-rounds, and as many again when a change found is confirmed */
	int most = job_max_rounds(c, id);
	if (most < 0) {
		rc = api_reply_db_error(req, "cannot read the job");
		goto out;
	}
	if (res.round < 0 || res.round >= 2 * most) {
		rc = http_reply_error(req, 422, "invalid-result", "round: 0 to %d", 2 * most - 1);
		goto out;
	}
	doc_text = json_dumps(doc, JSON_COMPACT);
	x.doc_text = doc_text;
	x.res = &res;
	if (!doc_text || results_rows(&x) != 0) {
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
