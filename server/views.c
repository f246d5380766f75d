/*
 * views.c - the read-only views the dashboard needs: GET /api/v1/agents,
 * GET /api/v1/submissions/{id}/results and GET /api/v1/history, each one
 * query whose JSON PostgreSQL builds (api_reply_sql).  Agents register and
 * post results through jobs.c and results.c; submissions are submissions.c
 * and submissions_read.c.
 */
#include "api.h"

enum handler_rc api_agent_list(struct http_request *req)
{
	return api_reply_sql(
	    req,
	    "SELECT json_build_object('agents', coalesce(json_agg(json_build_object("
	    " 'id', a.id, 'name', a.name, 'machine_class', a.machine_class,"
	    " 'created', a.created, 'last_seen', a.last_seen,"
	    " 'machine', (SELECT r.document->'machine' FROM results r WHERE r.agent_id = a.id"
	    "   ORDER BY r.id DESC LIMIT 1),"
	    " 'job', (SELECT json_build_object('id', j.id, 'submission_id', j.submission_id,"
	    "   'subject', s.subject, 'suite', j.suite, 'state', j.state, 'rounds', "
	    "   j.rounds_wanted, 'rounds_complete', (SELECT count(*) FROM (SELECT round FROM "
	    "   results r WHERE r.job_id = j.id AND variant IN ('base', 'patched') GROUP BY round"
	    "   HAVING count(DISTINCT variant) = 2) z), 'lease_expires', j.lease_expires,"
	    "   'activity', j.activity, 'activity_at', j.activity_at)"
	    "   FROM jobs j JOIN submissions s ON s.id = j.submission_id"
	    "   WHERE j.claimed_by = a.id AND j.state = 'running' ORDER BY j.id DESC LIMIT 1)"
	    ") ORDER BY a.id), '[]')) FROM agents a WHERE a.role = 'agent'",
	    0, NULL, "agents");
}

enum handler_rc api_submission_results(struct http_request *req, long long id)
{
	return api_reply_sql_id(
	    req,
	    "SELECT CASE WHEN NOT EXISTS (SELECT 1 FROM submissions WHERE id = $1) THEN NULL"
	    " ELSE json_build_object('submission', $1::bigint, 'results', (SELECT"
	    " coalesce(json_agg(json_build_object('id', r.id, 'job', r.job_id, 'agent', "
	    " r.agent_id, 'variant', r.variant, 'round', r.round, 'received', r.received,"
	    " 'document', r.document) ORDER BY r.job_id, r.round, r.id), '[]')"
	    " FROM results r JOIN jobs j ON j.id = r.job_id WHERE j.submission_id = $1)) END",
	    id, "submission");
}

enum handler_rc api_history(struct http_request *req)
{
	const char *workload = http_query(req, "workload");
	const char *lock = http_query(req, "lock");
	const char *metric = http_query(req, "metric");
	const char *tree = http_query(req, "tree");
	const char *users = http_query(req, "users");
	const char *limit = http_query(req, "limit");
	char ubuf[24], lbuf[24] = "1000";
	const char *p[6];

	if (!workload && !lock && !metric)
		return api_reply_sql(
		    req,
		    "SELECT json_build_object('series', (SELECT coalesce(json_agg(x ORDER BY "
		    " x.workload, x.lock, x.metric), '[]') FROM (SELECT v.workload, v.lock, "
		    " v.metric, min(v.unit) AS unit, array_agg(DISTINCT v.users ORDER BY v.users) "
		    " AS users, count(DISTINCT s.id) AS submissions FROM verdicts v JOIN "
		    " comparisons c ON c.id = v.comparison_id JOIN jobs j ON j.id = c.job_id JOIN "
		    " submissions s ON s.id = j.submission_id WHERE s.state = 'done' AND c.final "
		    " GROUP BY 1, 2, 3) x),"
		    " 'trees', (SELECT coalesce(json_agg(y ORDER BY y.name NULLS FIRST), '[]') FROM"
		    " (SELECT t.name, t.branch, count(*) AS submissions FROM submissions s LEFT "
		    " JOIN trees t ON t.id = s.tree_id WHERE s.state = 'done' GROUP BY 1, 2) y))",
		    0, NULL, "history");
	if (!workload || !lock || !metric)
		return http_reply_error(
		    req, 400, "invalid",
		    "history wants workload, lock and metric (or none of them)");
	if (users && !api_query_int(users, 1LL << 40, ubuf, sizeof(ubuf)))
		return http_reply_error(req, 400, "invalid", "users: a number of threads or users");
	if (limit && !api_query_int(limit, 10000, lbuf, sizeof(lbuf)))
		return http_reply_error(req, 400, "invalid", "limit: 1 to 10000");
	p[0] = workload;
	p[1] = lock;
	p[2] = metric;
	p[3] = tree; /* "" selects the submissions without a tree */
	p[4] = users ? ubuf : NULL;
	p[5] = lbuf;
	return api_reply_sql(
	    req,
	    "SELECT json_build_object('workload', $1::text, 'lock', $2::text, 'metric', $3::text,"
	    " 'points', coalesce(json_agg(x ORDER BY x.time, x.submission, x.users), '[]')) FROM"
	    " (SELECT s.id AS submission, s.subject, c.created AS time, t.name AS tree, "
	    " t.branch, c.machine->>'hostname' AS hostname, j.machine_class, c.suite, v.users,"
	    " v.params_key AS params, v.unit, CASE WHEN v.higher_better THEN 'higher' ELSE "
	    " 'lower' END AS better,"
	    " json_build_object('n', v.base_n, 'mean', v.base_mean, 'stddev', v.base_stddev) "
	    " AS base, json_build_object('n', v.patched_n, 'mean', v.patched_mean, 'stddev', "
	    " v.patched_stddev) AS patched, v.change, v.verdict"
	    " FROM verdicts v JOIN comparisons c ON c.id = v.comparison_id JOIN jobs j ON "
	    " j.id = c.job_id JOIN submissions s ON s.id = j.submission_id LEFT JOIN trees t ON"
	    " t.id = s.tree_id WHERE s.state = 'done' AND c.final AND v.workload = $1 AND "
	    " v.lock = $2 AND v.metric = $3 AND ($4::text IS NULL OR coalesce(t.name, '') = $4)"
	    " AND ($5::bigint IS NULL OR v.users = $5) ORDER BY c.created DESC, s.id DESC"
	    " LIMIT $6::int) x",
	    6, p, "history");
}
