/*
 * plan.c - noise profiles of machine classes and the rounds planned from
 * them (plan.h).
 */
#include "plan.h"

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

/* The settings a plan is made for: the server's options. */
static struct plan_settings plan_settings(void)
{
	return (struct plan_settings){
	    srv_cfg.alpha,       srv_cfg.min_rounds,       srv_cfg.max_rounds,
	    srv_cfg.plan_budget, srv_cfg.plan_mde_latency, srv_cfg.plan_mde_contended};
}

/*
 * The plan of one profile (rows of noise_profiles: workload, lock,
 * params_key, metric, users, sd, rounds, round_seconds, measured):
 * roundplan's, from the server's settings.
 */
static json_t *plan_of_profile(PGresult *prof, int *first, int *cap)
{
	int n = PQntuples(prof);
	struct profile_point *pts = calloc((size_t)n + 1, sizeof(*pts));
	struct plan_settings s = plan_settings();
	double round_s = 0;
	json_t *plan;

	if (!pts)
		return NULL;
	for (int i = 0; i < n; i++) {
		pts[i] = (struct profile_point){PQgetvalue(prof, i, 0),
		                                PQgetvalue(prof, i, 1),
		                                PQgetvalue(prof, i, 2),
		                                PQgetvalue(prof, i, 3),
		                                strtoll(PQgetvalue(prof, i, 4), NULL, 10),
		                                strtod(PQgetvalue(prof, i, 5), NULL)};
		round_s = fmax(round_s, strtod(PQgetvalue(prof, i, 7), NULL));
	}
	plan = plan_build(pts, (size_t)n, round_s, n ? PQgetvalue(prof, 0, 8) : "", &s, first, cap);
	free(pts);
	return plan;
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
	plan = plan_of_profile(prof, &first, &cap);
	text = plan ? json_dumps(plan, JSON_COMPACT) : NULL;
	if (!text) {
		rc = DB_FAIL;
		goto out;
	}
	snprintf(first_s, sizeof(first_s), "%d", plan_first_look(first, srv_cfg.min_rounds));
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
