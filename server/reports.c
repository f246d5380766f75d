/*
 * reports.c - GET .../report and .../reply, and what is kept when a
 * submission is finished.
 */
#include "reports.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api.h"
#include "bycommit.h"
#include "db.h"
#include "reply.h"
#include "report.h"
#include "verdicts.h"

static const char *const report_formats[] = {"aim7", "perf", "lkp", "text"};

/*
 * The tables of every stored comparison of submission in format fmt, as a
 * new string in *out.  Returns 0 or a db_tx code.
 */
static int reports_render(PGconn *c, long long submission, enum report_format fmt, char **out)
{
	struct stored_comparison *v = NULL;
	size_t n = 0, i, len = 0;
	FILE *f;
	int rc;

	*out = NULL;
	rc = verdicts_load(c, submission, &v, &n);
	if (rc != DB_OK)
		return rc;
	f = open_memstream(out, &len);
	if (!f) {
		verdicts_free(v, n);
		return DB_FAIL;
	}
	if (n == 0)
		fprintf(f, "no results yet\n");
	for (i = 0; i < n; i++) {
		const struct comparison *cmp = &v[i].cmp;
		char *sentences;

		if (i)
			fputc('\n', f);
		if (n > 1 || !v[i].final)
			fprintf(f, "job %lld, machine class %s%s:\n", v[i].job_id,
			        v[i].machine_class, v[i].final ? "" : " (more rounds running)");
		report_render(cmp, fmt, f);
		if (fmt == REPORT_TEXT) {
			/* where a change came in, when the job measured its prefixes */
			struct bycommit x;
			rc = bycommit_load(c, v[i].job_id, &x);
			if (rc == DB_OK)
				bycommit_print(f, cmp, &x, REPLY_MAX_COLUMNS);
			bycommit_release(&x);
			if (rc != DB_OK)
				break;
		}
		/* aim7, perf and text say the lockups in words already */
		sentences = fmt == REPORT_LKP ? report_lockup_sentences(cmp) : NULL;
		if (sentences && *sentences)
			fprintf(f, "\n%s%s", sentences,
			        sentences[strlen(sentences) - 1] == '\n' ? "" : "\n");
		free(sentences);
	}
	verdicts_free(v, n);
	if (fclose(f) != 0 || rc != DB_OK) {
		free(*out);
		*out = NULL;
		return rc != DB_OK ? rc : DB_FAIL;
	}
	return DB_OK;
}

int reports_job_done(PGconn *c, long long submission)
{
	char idbuf[24];
	const char *p[1] = {idbuf};
	PGresult *res;
	int rc, left;
	size_t i;

	snprintf(idbuf, sizeof(idbuf), "%lld", submission);
	res = db_exec(c, "SELECT state FROM submissions WHERE id = $1 FOR UPDATE", 1, p);
	if (!res)
		return db_failure();
	rc = PQntuples(res) == 1 && strcmp(PQgetvalue(res, 0, 0), "running") == 0;
	PQclear(res);
	if (!rc)
		return DB_OK; /* failed (or gone) already: nothing to finish */
	res = db_exec(c, "SELECT count(*) FROM jobs WHERE submission_id = $1 AND state <> 'done'",
	              1, p);
	if (!res)
		return db_failure();
	left = atoi(PQgetvalue(res, 0, 0));
	PQclear(res);
	if (left)
		return DB_OK;
	rc = db_run(c,
	            "UPDATE submissions SET state = 'done', updated = now(), verdict = (SELECT "
	            "verdict FROM jobs WHERE submission_id = $1 ORDER BY array_position(ARRAY["
	            "'no-change', 'improvement', 'inconclusive', 'regression', 'splat', 'lockup', "
	            "'crash'], verdict) "
	            "DESC NULLS LAST LIMIT 1) WHERE id = $1",
	            1, p);
	if (rc != DB_OK)
		return rc;
	for (i = 0; i < sizeof(report_formats) / sizeof(report_formats[0]); i++) {
		enum report_format fmt;
		char *text = NULL;

		if (report_format_parse(report_formats[i], &fmt) != 0)
			continue;
		rc = reports_render(c, submission, fmt, &text);
		if (rc == DB_OK) {
			const char *q[3] = {idbuf, report_formats[i], text};

			rc = db_run(
			    c,
			    "INSERT INTO reports (submission_id, format, body) VALUES ($1, "
			    "$2, $3) ON CONFLICT (submission_id, format) DO UPDATE SET body = "
			    "excluded.body, created = now()",
			    3, q);
		}
		free(text);
		if (rc != DB_OK)
			return rc;
	}
	return reply_queue(c, submission);
}

static int report_parse_query(struct http_request *req, enum report_format *fmt)
{
	const char *name = http_query(req, "format");
	size_t i;

	if (!name)
		name = "text";
	for (i = 0; i < sizeof(report_formats) / sizeof(report_formats[0]); i++)
		if (strcmp(name, report_formats[i]) == 0)
			return report_format_parse(name, fmt);
	return -1;
}

enum handler_rc api_submission_report(struct http_request *req, long long id)
{
	enum report_format fmt;
	PGconn *c = db_conn();
	PGresult *res;
	char idbuf[24];
	const char *p[1] = {idbuf};
	char *text = NULL;
	enum handler_rc rc;

	if (report_parse_query(req, &fmt) != 0)
		return http_reply_error(req, 400, "invalid", "format: aim7, perf, lkp or text");
	if (!c)
		return http_reply_error(req, 503, "database", "database unavailable");
	snprintf(idbuf, sizeof(idbuf), "%lld", id);
	res = db_exec(c, "SELECT 1 FROM submissions WHERE id = $1", 1, p);
	if (!res)
		return http_reply_error(req, 503, "database", "query failed");
	rc = PQntuples(res) == 1 ? HANDLER_OK : HANDLER_HANDLED;
	PQclear(res);
	if (rc != HANDLER_OK)
		return http_reply_error(req, 404, "not-found", "no submission %lld", id);
	/* one snapshot for the comparisons and their rows */
	if (db_run(c, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", 0, NULL) != DB_OK)
		return http_reply_error(req, 503, "database", "query failed");
	if (reports_render(c, id, fmt, &text) != DB_OK) {
		db_run(c, "ROLLBACK", 0, NULL);
		return http_reply_error(req, 503, "database", "cannot read the comparisons");
	}
	db_run(c, "COMMIT", 0, NULL);
	rc = http_reply(req, 200, "text/plain; charset=utf-8", text, strlen(text));
	free(text);
	return rc;
}

enum handler_rc api_submission_reply(struct http_request *req, long long id)
{
	PGconn *c = db_conn();
	char *mail = NULL;
	char msg[256];
	int status = 500, rc;
	enum handler_rc hrc;

	if (!c)
		return http_reply_error(req, 503, "database", "database unavailable");
	if (db_run(c, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", 0, NULL) != DB_OK)
		return http_reply_error(req, 503, "database", "query failed");
	rc = reply_get(c, id, &mail, &status, msg, sizeof(msg));
	db_run(c, "COMMIT", 0, NULL);
	if (rc == DB_ABORT)
		return http_reply_error(req, (unsigned)status,
		                        status == 404   ? "not-found"
		                        : status == 409 ? "not-ready"
		                                        : "no-recipient",
		                        "%s", msg);
	if (rc != DB_OK)
		return http_reply_error(req, 503, "database", "cannot build the reply");
	hrc = http_reply(req, 200, "message/rfc822", mail, strlen(mail));
	free(mail);
	return hrc;
}
