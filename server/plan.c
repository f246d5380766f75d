/*
 * plan.c - noise profiles of machine classes and the rounds planned from
 * them (plan.h).
 */
#include "plan.h"

#include <gsl/gsl_cdf.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "config.h"
#include "db.h"

/* the largest profile a post may carry, in bytes and points */
#define NOISE_MAX_BODY   (1024 * 1024)
#define NOISE_MAX_POINTS 4096

double plan_mde(double sd, int n, double alpha)
{
	double df = (double)n - 1;

	if (n < 2 || !(sd >= 0))
		return INFINITY;
	return (gsl_cdf_tdist_Qinv(alpha / 2, df) + gsl_cdf_tdist_Qinv(0.2, df)) * sd /
	       sqrt((double)n);
}

/* "hot kmutex threads=2 ops_per_sec": how the plan names a row to people */
static void plan_row_name(char *out, size_t len, const char *workload, const char *lock,
                          const char *params, const char *metric)
{
	snprintf(out, len, "%s %s%s%s %s", workload, lock, *params ? " " : "", params, metric);
}

/* The target MDE of a row: the contended one where its margin is the contended one. */
static double plan_target(double margin)
{
	return margin > COMPARE_MARGIN_LATENCY ? srv_cfg.plan_mde_contended
	                                       : srv_cfg.plan_mde_latency;
}

/*
 * The plan of one profile (rows of noise_profiles: workload, lock,
 * params_key, metric, users, sd, rounds, round_seconds, measured): a new
 * JSON object, *first and *cap set to the rounds to ask for first and the
 * job's limit.
 */
static json_t *plan_build(PGresult *prof, int *first, int *cap)
{
	json_t *plan, *rows, *notes;
	double round_s = 0;
	int n = PQntuples(prof), resolvable_need = 0;

	for (int i = 0; i < n; i++)
		round_s = fmax(round_s, strtod(PQgetvalue(prof, i, 7), NULL));
	*cap = srv_cfg.max_rounds;
	if (round_s > 0 && (double)srv_cfg.plan_budget / round_s < *cap)
		*cap = (int)((double)srv_cfg.plan_budget / round_s);
	if (*cap < COMPARE_MIN_PAIRS)
		*cap = COMPARE_MIN_PAIRS; /* fewer rounds cannot test at all */
	rows = json_array();
	notes = json_array();
	for (int i = 0; i < n; i++) {
		const char *wl = PQgetvalue(prof, i, 0), *lock = PQgetvalue(prof, i, 1),
		           *params = PQgetvalue(prof, i, 2), *metric = PQgetvalue(prof, i, 3);
		long long users = strtoll(PQgetvalue(prof, i, 4), NULL, 10);
		double sd = strtod(PQgetvalue(prof, i, 5), NULL);
		double margin = compare_row_margin(metric, users, NULL),
		       target = plan_target(margin);
		double mde_max = plan_mde(sd, *cap, srv_cfg.alpha);
		bool resolvable = mde_max <= margin;
		int need = 0;
		char name[512];

		if (!compare_row_is_headline(wl, metric) || !strcmp(metric, "lockup"))
			continue;
		for (int k = COMPARE_MIN_PAIRS; k <= *cap && !need; k++)
			if (plan_mde(sd, k, srv_cfg.alpha) <= target)
				need = k;
		if (resolvable && need > resolvable_need)
			resolvable_need = need;
		if (resolvable && !need)
			resolvable_need = *cap; /* inside its margin only at the limit */
		json_array_append_new(
		    rows,
		    json_pack("{s:s, s:s, s:s, s:s, s:I, s:f, s:f, s:f, s:o, s:f, s:b}", "workload",
		              wl, "lock", lock, "params", params, "metric", metric, "users",
		              (json_int_t)users, "sd", sd, "target", target, "margin", margin,
		              "rounds", need ? json_integer(need) : json_null(), "mde_at_max",
		              isfinite(mde_max) ? mde_max : 0.0, "resolvable", resolvable));
		if (!resolvable) {
			plan_row_name(name, sizeof(name), wl, lock, params, metric);
			json_array_append_new(
			    notes,
			    json_sprintf("this machine cannot resolve less than %.1f%% on %s "
			                 "(margin +-%g%%, at %d rounds)",
			                 mde_max * 100, name, margin * 100, *cap));
		}
	}
	*first = resolvable_need ? resolvable_need
	                         : (srv_cfg.min_rounds < *cap ? srv_cfg.min_rounds : *cap);
	if (*first < COMPARE_MIN_PAIRS)
		*first = COMPARE_MIN_PAIRS;
	plan = json_pack("{s:i, s:i, s:f, s:i, s:f, s:f, s:s, s:o, s:o}", "rounds", *first,
	                 "max_rounds", *cap, "round_seconds", round_s, "budget_seconds",
	                 srv_cfg.plan_budget, "target_latency", srv_cfg.plan_mde_latency,
	                 "target_contended", srv_cfg.plan_mde_contended, "measured",
	                 n ? PQgetvalue(prof, 0, 8) : "", "rows", rows, "unresolvable", notes);
	return plan;
}

/*
 * The first look of a job planned for rounds: a plan past --min-rounds
 * keeps the first look at --min-rounds, so that a change large enough to be
 * found there is confirmed as in an unplanned job (on the 2-vCPU VM a
 * kmutex plan of 16 rounds saw a regression first at 16 and confirmed it at
 * 32); the planned rounds are the next look (results_evaluate).
 */
static int plan_first_look(int rounds)
{
	return rounds > srv_cfg.min_rounds && srv_cfg.min_rounds >= COMPARE_MIN_PAIRS
	           ? srv_cfg.min_rounds
	           : rounds;
}

int plan_next_look(int planned, int wanted, int cap)
{
	int step = srv_cfg.min_rounds > 0 ? srv_cfg.min_rounds : 1;
	int w = planned > wanted ? planned : wanted + step;

	return w < cap ? w : cap;
}

int plan_looks(const char *plan_text)
{
	json_t *plan = plan_text ? json_loads(plan_text, 0, NULL) : NULL;
	int rounds = (int)json_integer_value(json_object_get(plan, "rounds"));
	int cap = (int)json_integer_value(json_object_get(plan, "max_rounds"));
	int looks = 1;

	json_decref(plan);
	if (rounds <= 0 || cap <= 0)
		return 0;
	for (int w = plan_first_look(rounds); w < cap; looks++)
		w = plan_next_look(rounds, w, cap);
	return looks + 1; /* and a confirmation */
}

int plan_job(PGconn *c, long long job_id)
{
	char idbuf[24], first_s[16], cap_s[16];
	PGresult *job = NULL, *prof = NULL;
	json_t *plan = NULL;
	char *text = NULL;
	int first, cap, rc = DB_OK;

	snprintf(idbuf, sizeof(idbuf), "%lld", job_id);
	{
		const char *p[1] = {idbuf};

		job = db_exec(c,
		              "SELECT j.machine_class, j.suite FROM jobs j WHERE j.id = $1 AND "
		              "j.plan IS NULL AND NOT EXISTS (SELECT 1 FROM results r WHERE "
		              "r.job_id = j.id)",
		              1, p);
	}
	if (!job) {
		rc = db_failure();
		goto out;
	}
	if (PQntuples(job) != 1)
		goto out; /* planned already, or rounds are in: the plan stands */
	{
		const char *p[2] = {PQgetvalue(job, 0, 0), PQgetvalue(job, 0, 1)};

		prof = db_exec(c,
		               "SELECT workload, lock, params_key, metric, users, sd, rounds, "
		               "round_seconds, to_char(max(measured) OVER () AT TIME ZONE 'UTC', "
		               "'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') FROM noise_profiles WHERE "
		               "machine_class = $1 AND suite = $2 ORDER BY workload, lock, "
		               "params_key, metric",
		               2, p);
	}
	if (!prof) {
		rc = db_failure();
		goto out;
	}
	if (PQntuples(prof) == 0)
		goto out; /* no profile: the server's defaults */
	plan = plan_build(prof, &first, &cap);
	text = plan ? json_dumps(plan, JSON_COMPACT) : NULL;
	if (!text) {
		rc = DB_FAIL;
		goto out;
	}
	snprintf(first_s, sizeof(first_s), "%d", plan_first_look(first));
	snprintf(cap_s, sizeof(cap_s), "%d", cap);
	{
		const char *p[4] = {idbuf, text, first_s, cap_s};

		rc = db_run(c,
		            "UPDATE jobs SET plan = $2::jsonb, rounds_wanted = $3::int, "
		            "max_rounds = $4::int WHERE id = $1",
		            4, p);
	}
out:
	PQclear(job);
	PQclear(prof);
	json_decref(plan);
	free(text);
	return rc;
}

void plan_mark_rows(const char *plan_text, struct comparison *cmp)
{
	json_t *plan = plan_text ? json_loads(plan_text, 0, NULL) : NULL;
	json_t *rows = json_object_get(plan, "rows"), *o;
	size_t i;

	json_array_foreach(rows, i, o)
	{
		const char *wl = NULL, *lock = NULL, *params = NULL, *metric = NULL;
		double mde = 0;
		int resolvable = 1;

		if (json_unpack(o, "{s:s, s:s, s:s, s:s, s:F, s:b}", "workload", &wl, "lock", &lock,
		                "params", &params, "metric", &metric, "mde_at_max", &mde,
		                "resolvable", &resolvable) != 0 ||
		    resolvable)
			continue;
		for (size_t k = 0; k < cmp->nrows; k++) {
			struct compare_row *r = &cmp->rows[k];

			if (!strcmp(r->workload, wl) && !strcmp(r->lock, lock) &&
			    !strcmp(r->params_key ? r->params_key : "", params) &&
			    !strcmp(r->metric, metric))
				r->unresolvable = mde > 0 ? mde : INFINITY;
		}
	}
	json_decref(plan);
}

int plan_first_rounds(const char *plan_text)
{
	json_t *plan = plan_text ? json_loads(plan_text, 0, NULL) : NULL;
	int n = (int)json_integer_value(json_object_get(plan, "rounds"));

	json_decref(plan);
	return n;
}

/* A name of a suite point: 1 to 200 bytes of printable ASCII, no spaces. */
static bool noise_name_ok(const char *s, bool may_be_empty)
{
	size_t n = strlen(s);

	if ((n == 0 && !may_be_empty) || n > 200)
		return false;
	for (size_t i = 0; i < n; i++)
		if (s[i] <= ' ' || s[i] > '~')
			return false;
	return true;
}

/*
 * The points of a posted profile as the jsonb_to_recordset input of the
 * upsert; NULL with the reason in why.
 */
static json_t *noise_points(json_t *points, char *why, size_t len)
{
	json_t *out = json_array(), *o;
	json_error_t jerr;
	size_t i;

	if (!json_is_array(points) || json_array_size(points) == 0 ||
	    json_array_size(points) > NOISE_MAX_POINTS) {
		snprintf(why, len, "points: a list of 1 to %d suite points", NOISE_MAX_POINTS);
		goto bad;
	}
	json_array_foreach(points, i, o)
	{
		const char *wl, *lock, *params = "", *metric;
		json_int_t users = -1;
		double sd;

		if (json_unpack_ex(o, &jerr, JSON_STRICT, "{s:s, s:s, s?s, s:s, s?I, s:F}",
		                   "workload", &wl, "lock", &lock, "params", &params, "metric",
		                   &metric, "users", &users, "sd", &sd) != 0) {
			snprintf(why, len, "points[%zu]: %s", i, jerr.text);
			goto bad;
		}
		if (!noise_name_ok(wl, false) || !noise_name_ok(lock, false) ||
		    !noise_name_ok(params, true) || !noise_name_ok(metric, false)) {
			snprintf(why, len,
			         "points[%zu]: workload, lock and metric: 1 to 200 printable bytes "
			         "without spaces (params may be empty)",
			         i);
			goto bad;
		}
		if (!isfinite(sd) || sd < 0 || sd > 10) {
			snprintf(why, len, "points[%zu]: sd: a relative spread from 0 to 10", i);
			goto bad;
		}
		json_array_append_new(out, json_pack("{s:s, s:s, s:s, s:s, s:I, s:f}", "workload",
		                                     wl, "lock", lock, "params_key", params,
		                                     "metric", metric, "users", users, "sd", sd));
	}
	return out;
bad:
	json_decref(out);
	return NULL;
}

/* A posted profile: machine class, suite, rounds, round seconds, agent, points. */
struct noise_store {
	const char *p[6];
};

/*
 * Store a profile (db_tx body), then plan the jobs of its suite that its
 * agent holds and that have neither a plan nor a result: an agent measures
 * a suite's noise at the first job of that suite, after the claim that
 * would have planned it, so without this that first job ran on the
 * server's default rounds.
 */
static int noise_store_body(PGconn *c, void *arg)
{
	const struct noise_store *x = arg;
	PGresult *jobs;
	int rc;

	rc = db_run(c,
	            "INSERT INTO noise_profiles (machine_class, suite, workload, lock, "
	            "params_key, metric, users, sd, rounds, round_seconds, agent_id) SELECT "
	            "$1, $2, x.workload, x.lock, x.params_key, x.metric, x.users, x.sd, "
	            "$3::int, $4::float8, $5::bigint FROM jsonb_to_recordset($6::jsonb) AS "
	            "x(workload text, lock text, params_key text, metric text, users bigint, "
	            "sd float8) ON CONFLICT (machine_class, suite, workload, lock, params_key, "
	            "metric) DO UPDATE SET users = excluded.users, sd = excluded.sd, rounds = "
	            "excluded.rounds, round_seconds = excluded.round_seconds, agent_id = "
	            "excluded.agent_id, measured = now()",
	            6, x->p);
	if (rc != DB_OK)
		return rc;
	{
		const char *p[3] = {x->p[4], x->p[1], x->p[0]};

		jobs =
		    db_exec(c,
		            "SELECT id FROM jobs WHERE claimed_by = $1::bigint AND suite = $2 AND "
		            "machine_class = $3 AND state = 'running' AND plan IS NULL ORDER BY "
		            "id FOR UPDATE",
		            3, p);
	}
	if (!jobs)
		return db_failure();
	for (int i = 0; i < PQntuples(jobs) && rc == DB_OK; i++)
		rc = plan_job(c, strtoll(PQgetvalue(jobs, i, 0), NULL, 10));
	PQclear(jobs);
	return rc;
}

enum handler_rc api_noise_post(struct http_request *req)
{
	const char *suite;
	json_int_t rounds;
	double round_s;
	json_t *doc = NULL, *points = NULL, *rows = NULL;
	json_error_t jerr;
	char why[256], rounds_s[16], secs_s[32], agent_s[24], *text = NULL;
	enum handler_rc rc;

	if (req->body_len > NOISE_MAX_BODY)
		return http_reply_error(req, 413, "too-large",
		                        "a noise profile is at most %d bytes", NOISE_MAX_BODY);
	doc = http_body_json(req);
	if (!doc)
		return HANDLER_HANDLED;
	if (json_unpack_ex(doc, &jerr, JSON_STRICT, "{s:s, s:I, s:F, s:o}", "suite", &suite,
	                   "rounds", &rounds, "round_seconds", &round_s, "points", &points) != 0) {
		rc = http_reply_error(req, 400, "invalid", "%s", jerr.text);
		goto out;
	}
	if (!*suite || strlen(suite) > 32 || !noise_name_ok(suite, false)) {
		rc = http_reply_error(req, 400, "invalid", "suite: 1 to 32 bytes");
		goto out;
	}
	if (rounds < 2 || rounds > 1000) {
		rc = http_reply_error(req, 400, "invalid",
		                      "rounds: the paired A/A rounds measured, 2 to 1000");
		goto out;
	}
	if (!isfinite(round_s) || round_s < 0 || round_s > 86400) {
		rc = http_reply_error(req, 400, "invalid",
		                      "round_seconds: seconds one paired round took, 0 to 86400");
		goto out;
	}
	rows = noise_points(points, why, sizeof(why));
	if (!rows) {
		rc = http_reply_error(req, 400, "invalid", "%s", why);
		goto out;
	}
	text = json_dumps(rows, JSON_COMPACT);
	if (!text) {
		rc = api_reply_db_error(req, "cannot store the noise profile");
		goto out;
	}
	snprintf(rounds_s, sizeof(rounds_s), "%d", (int)rounds);
	snprintf(secs_s, sizeof(secs_s), "%.17g", round_s);
	snprintf(agent_s, sizeof(agent_s), "%lld", req->caller.id);
	{
		struct noise_store x = {
		    {req->caller.machine_class, suite, rounds_s, secs_s, agent_s, text}};

		if (db_tx(noise_store_body, &x) != DB_OK) {
			rc = api_reply_db_error(req, "cannot store the noise profile");
			goto out;
		}
	}
	rc = http_reply_json(req, 201,
	                     json_pack("{s:s, s:s, s:I, s:I}", "machine_class",
	                               req->caller.machine_class, "suite", suite, "rounds", rounds,
	                               "points", (json_int_t)json_array_size(rows)));
out:
	free(text);
	json_decref(rows);
	json_decref(doc);
	return rc;
}

enum handler_rc api_noise_get(struct http_request *req)
{
	const char *p[2] = {http_query(req, "machine_class"), http_query(req, "suite")};

	return api_reply_sql(
	    req,
	    "SELECT json_build_object('profiles', coalesce(json_agg(json_build_object("
	    "'machine_class', machine_class, 'suite', suite, 'workload', workload, 'lock', lock, "
	    "'params', params_key, 'metric', metric, 'users', users, 'sd', sd, 'rounds', rounds, "
	    "'round_seconds', round_seconds, 'agent', agent_id, 'measured', measured) ORDER BY "
	    "machine_class, suite, workload, lock, params_key, metric), '[]')) FROM "
	    "noise_profiles WHERE ($1::text IS NULL OR machine_class = $1) AND ($2::text IS NULL "
	    "OR suite = $2)",
	    2, p, "noise profile");
}
