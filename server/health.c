/*
 * health.c - GET /healthz (does the database answer) and GET /metrics (the
 * Prometheus text: the build, HTTP, intake and server counters, whether the
 * database answers, jobs and submissions by state).  The counters
 * themselves are kept by http.c, conn.c, intake.c and metrics.c.
 */
#include <stdio.h>
#include <stdlib.h>

#include "api.h"
#include "db.h"
#include "intake.h"
#include "metrics.h"
#include "routes.h"
#include "submissions.h"
#include "version.h"

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
	fprintf(f,
	        "# HELP locklab_build_info The server's version.\n"
	        "# TYPE locklab_build_info gauge\n"
	        "locklab_build_info{version=\"%s\"} 1\n",
	        version_text());
	http_metrics(f);
	fprintf(f,
	        "# HELP locklab_mbox_parses Submitted mboxes being parsed (off the HTTP "
	        "threads).\n# TYPE locklab_mbox_parses gauge\nlocklab_mbox_parses %u\n",
	        submission_parses_active());
	metrics_print(f, routes_count(), routes_name);
	intake_metrics(f);
	fprintf(f, "# HELP locklab_database_up Whether the database answers (1) or not (0).\n"
	           "# TYPE locklab_database_up gauge\n");
	if (c)
		res = db_exec(c,
		              "SELECT s.state, count(j.id) FROM unnest(ARRAY['queued', 'running', "
		              "'done', 'failed']) s(state) LEFT JOIN jobs j ON j.state = s.state "
		              "GROUP BY s.state ORDER BY s.state",
		              0, NULL);
	fprintf(f, "locklab_database_up %d\n", res ? 1 : 0);
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
