/*
 * misc.c - trees, /healthz and /metrics; the read-only views the dashboard
 * needs: agents, a submission's stored results, history of a metric.
 */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api.h"
#include "config.h"
#include "db.h"
#include "intake.h"
#include "url.h"

enum handler_rc api_tree_list(struct http_request *req)
{
	return api_reply_sql(
	    req,
	    "SELECT json_build_object('trees', coalesce(json_agg(json_build_object('id', id, "
	    "'name', name, 'url', url_public(url), 'branch', branch, 'kind', kind, 'created', "
	    "created, 'track', track, 'since', track_since, 'head', track_head, 'suites', "
	    "track_suites, 'checked', track_checked, 'error', track_error, 'list', list, "
	    "'segment', track_segment, 'rewrites', (SELECT coalesce(json_agg(json_build_object("
	    "'branch', w.branch, 'old_head', w.old_head, 'new_head', w.new_head, 'merge_base', "
	    "w.merge_base, 'segment', w.segment, 'at', w.at) ORDER BY w.at), '[]') FROM "
	    "track_rewrites w WHERE w.tree_id = trees.id)) ORDER BY id), '[]')) FROM trees",
	    0, NULL, "trees");
}

bool api_tree_name_ok(const char *s)
{
	size_t n = strlen(s), i;

	if (n == 0 || n > 64 || !isalnum((unsigned char)s[0]))
		return false;
	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '.' && s[i] != '_' && s[i] != '-')
			return false;
	return true;
}

/* A local path or file:// URL: only with --allow-local-trees. */
static bool misc_tree_local(const char *url)
{
	return url[0] == '/' || strncasecmp(url, "file://", 7) == 0;
}

/* A list address: one addr-spec ("linux-locks@example.org"), nothing a header could carry more in.
 */
static bool misc_list_ok(const char *s)
{
	const char *at = strchr(s, '@');
	size_t n = strlen(s), i;

	if (n < 3 || n > 254 || !at || at == s || !at[1] || strchr(at + 1, '@'))
		return false;
	for (i = 0; i < n; i++)
		if ((unsigned char)s[i] <= ' ' || (unsigned char)s[i] >= 0x7f ||
		    strchr("<>,;:\"()[]\\", s[i]))
			return false;
	return true;
}

/* A JSON list of suite names as a text[] literal "{a,b}" into out; 0 or -1. */
static int misc_suites_literal(json_t *list, char *out, size_t len)
{
	size_t i, used = 1, n = json_is_array(list) ? json_array_size(list) : 0;

	if (n == 0 || n > 16)
		return -1;
	snprintf(out, len, "{");
	for (i = 0; i < n; i++) {
		const char *s = json_string_value(json_array_get(list, i)), *q;

		if (!s || !*s || strlen(s) > 32)
			return -1;
		for (q = s; *q; q++)
			if (!islower((unsigned char)*q) && !isdigit((unsigned char)*q) && *q != '-')
				return -1;
		used += (size_t)snprintf(out + used, len - used, "%s%s", i ? "," : "", s);
		if (used + 2 >= len)
			return -1;
	}
	snprintf(out + used, len - used, "}");
	return 0;
}

enum handler_rc api_tree_create(struct http_request *req)
{
	const char *name, *url, *branch = "master", *kind = "native", *since = NULL, *list = NULL;
	char err[256], suites[512] = "{smoke}";
	int track = 0;
	json_t *doc, *jsuites = NULL;
	json_error_t jerr;
	PGconn *c;
	PGresult *res;
	enum handler_rc rc;

	doc = http_body_json(req);
	if (!doc)
		return HANDLER_HANDLED;
	if (json_unpack_ex(doc, &jerr, JSON_STRICT, "{s:s, s:s, s?s, s?s, s?b, s?s, s?o, s?s}",
	                   "name", &name, "url", &url, "branch", &branch, "kind", &kind, "track",
	                   &track, "since", &since, "suites", &jsuites, "list", &list) != 0) {
		rc = http_reply_error(req, 400, "invalid", "%s", jerr.text);
		goto out;
	}
	if (list && !misc_list_ok(list)) {
		rc = http_reply_error(req, 400, "invalid",
		                      "list: one mail address (\"linux-locks@example.org\")");
		goto out;
	}
	if (since && !api_git_ref_ok(since)) {
		rc = http_reply_error(req, 400, "invalid", "since: a git revision");
		goto out;
	}
	if (jsuites && misc_suites_literal(jsuites, suites, sizeof(suites)) != 0) {
		rc = http_reply_error(
		    req, 400, "invalid",
		    "suites: a list of 1 to 16 suite names (smoke, quick, full, ...)");
		goto out;
	}
	if (strcmp(kind, "native") != 0 && strcmp(kind, "kernel") != 0) {
		rc = http_reply_error(req, 400, "invalid", "kind: native or kernel");
		goto out;
	}
	if (!api_tree_name_ok(name)) {
		rc = http_reply_error(req, 400, "invalid", "name: %s", API_TREE_NAME_RULE);
		goto out;
	}
	if (!api_git_ref_ok(branch)) {
		rc = http_reply_error(req, 400, "invalid", "branch: a git branch name");
		goto out;
	}
	if (misc_tree_local(url) && srv_cfg.allow_local_trees) {
		if (strlen(url) > URL_MAX) {
			rc =
			    http_reply_error(req, 400, "bad-url", "url: at most %d bytes", URL_MAX);
			goto out;
		}
	} else if (url_check(url, URL_HTTP | URL_GIT | URL_SSH, err, sizeof(err)) != 0) {
		rc = http_reply_error(
		    req, 400, "bad-url", "url: %s%s", err,
		    misc_tree_local(url) ? " (local trees need --allow-local-trees)" : "");
		goto out;
	}
	c = db_conn();
	if (!c) {
		rc = api_reply_db_error(req, "cannot store the tree");
		goto out;
	}
	{
		const char *p[8] = {name,  url,    branch, kind, track ? "t" : "f",
		                    since, suites, list};

		res = db_exec(c,
		              "INSERT INTO trees (name, url, branch, kind, track, track_since, "
		              "track_suites, list) VALUES ($1, $2, $3, $4, $5, $6, $7::text[], $8) "
		              "ON CONFLICT (name) DO NOTHING RETURNING id",
		              8, p);
	}
	if (!res) {
		rc = api_reply_db_error(req, "cannot store the tree");
		goto out;
	}
	if (PQntuples(res) == 0)
		rc = http_reply_error(req, 409, "conflict", "a tree named '%s' exists", name);
	else
		rc = http_reply_json(req, 201,
		                     json_pack("{s:I, s:s, s:s, s:s, s:s, s:b, s:s?, s:s?}", "id",
		                               (json_int_t)strtoll(PQgetvalue(res, 0, 0), NULL, 10),
		                               "name", name, "url", url, "branch", branch, "kind",
		                               kind, "track", track, "since", since, "list", list));
	PQclear(res);
out:
	json_decref(doc);
	return rc;
}

enum handler_rc api_healthz(struct http_request *req)
{
	PGresult *res = db_read("SELECT 1", 0, NULL);

	if (!res)
		return http_reply_json(req, 503,
		                       json_pack("{s:s, s:s, s:s, s:s}", "status", "unavailable",
		                                 "database", "unavailable", "error", "database",
		                                 "detail", "the database does not answer"));
	PQclear(res);
	return http_reply_json(req, 200, json_pack("{s:s, s:s}", "status", "ok", "database", "ok"));
}

enum handler_rc api_reply_db_error(struct http_request *req, const char *what)
{
	switch (db_last_fault()) {
	case DB_FAULT_DATA:
		return http_reply_error(req, 422, "invalid", "%s: the database refused a value: %s",
		                        what, db_last_primary());
	case DB_FAULT_DUPLICATE:
		return http_reply_error(req, 409, "conflict", "%s: %s", what, db_last_primary());
	case DB_FAULT_UNAVAILABLE:
		return http_reply_error(req, 503, "database",
		                        "%s: the database is unavailable, try again later", what);
	case DB_FAULT_INTERNAL:
		return http_reply_error(req, 500, "database",
		                        "%s: a database error (the server's log has it)", what);
	default:
		return http_reply_error(req, 500, "internal", "%s", what);
	}
}

enum handler_rc api_metrics(struct http_request *req)
{
	PGconn *c = db_conn();
	PGresult *res = NULL;
	char *text = NULL;
	size_t len = 0;
	FILE *f;
	enum handler_rc rc;
	int i;

	f = open_memstream(&text, &len);
	if (!f)
		return http_reply_error(req, 500, "internal", "out of memory");
	http_metrics(f);
	intake_metrics(f);
	fprintf(f, "# HELP locklab_up Whether the database answers.\n# TYPE locklab_up gauge\n");
	if (c)
		res = db_exec(c,
		              "SELECT s.state, count(j.id) FROM unnest(ARRAY['queued', 'running', "
		              "'done', 'failed']) s(state) LEFT JOIN jobs j ON j.state = s.state "
		              "GROUP BY s.state ORDER BY s.state",
		              0, NULL);
	fprintf(f, "locklab_up %d\n", res ? 1 : 0);
	if (res) {
		fprintf(f, "# HELP locklab_jobs Jobs by state.\n# TYPE locklab_jobs gauge\n");
		for (i = 0; i < PQntuples(res); i++)
			fprintf(f, "locklab_jobs{state=\"%s\"} %s\n", PQgetvalue(res, i, 0),
			        PQgetvalue(res, i, 1));
		PQclear(res);
		res = db_exec(c,
		              "SELECT coalesce(extract(epoch FROM now() - min(queued_at)), 0) FROM "
		              "jobs WHERE state = 'queued'",
		              0, NULL);
	}
	if (res) {
		fprintf(f,
		        "# HELP locklab_queue_oldest_seconds Age of the oldest queued job.\n"
		        "# TYPE locklab_queue_oldest_seconds gauge\n"
		        "locklab_queue_oldest_seconds %s\n",
		        PQgetvalue(res, 0, 0));
		PQclear(res);
		res = db_exec(c,
		              "SELECT s.state, count(x.id) FROM unnest(ARRAY['queued', 'running', "
		              "'done', 'failed']) s(state) LEFT JOIN submissions x ON x.state = "
		              "s.state GROUP BY s.state ORDER BY s.state",
		              0, NULL);
	}
	if (res) {
		fprintf(f, "# HELP locklab_submissions Submissions by state.\n"
		           "# TYPE locklab_submissions gauge\n");
		for (i = 0; i < PQntuples(res); i++)
			fprintf(f, "locklab_submissions{state=\"%s\"} %s\n", PQgetvalue(res, i, 0),
			        PQgetvalue(res, i, 1));
		PQclear(res);
	}
	if (fclose(f) != 0) {
		free(text);
		return http_reply_error(req, 500, "internal", "out of memory");
	}
	rc = http_reply(req, 200, "text/plain; version=0.0.4; charset=utf-8", text, len);
	free(text);
	return rc;
}

/*
 * Reply with the one JSON value sql selects (built by PostgreSQL); a NULL
 * value is a 404 naming what.
 */
enum handler_rc api_reply_sql(struct http_request *req, const char *sql, int n,
                              const char *const *p, const char *what)
{
	PGresult *res = db_read(sql, n, p);
	enum handler_rc rc;

	if (!res)
		return api_reply_db_error(req, "cannot read the database");
	if (PQntuples(res) != 1 || PQgetisnull(res, 0, 0))
		rc = http_reply_error(req, 404, "not-found", "no such %s", what);
	else
		rc = http_reply(req, 200, "application/json", PQgetvalue(res, 0, 0),
		                (size_t)PQgetlength(res, 0, 0));
	PQclear(res);
	return rc;
}

enum handler_rc api_reply_sql_id(struct http_request *req, const char *sql, long long id,
                                 const char *what)
{
	char idbuf[24];
	const char *p[1] = {idbuf};

	snprintf(idbuf, sizeof(idbuf), "%lld", id);
	return api_reply_sql(req, sql, 1, p, what);
}

bool api_query_int(const char *s, long long max, char *buf, size_t len)
{
	char *end;
	long long v;

	if (!s || !isdigit((unsigned char)*s))
		return false;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || *end || v < 1 || v > max)
		return false;
	snprintf(buf, len, "%lld", v);
	return true;
}

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
	    "   HAVING count(DISTINCT variant) = 2) z), 'lease_expires', j.lease_expires)"
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
