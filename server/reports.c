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
#include "db.h"
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
		/* aim7, perf and text say the lockups in words already */
		sentences = fmt == REPORT_LKP ? report_lockup_sentences(cmp) : NULL;
		if (sentences && *sentences)
			fprintf(f, "\n%s%s", sentences,
			        sentences[strlen(sentences) - 1] == '\n' ? "" : "\n");
		free(sentences);
	}
	verdicts_free(v, n);
	if (fclose(f) != 0) {
		free(*out);
		*out = NULL;
		return DB_FAIL;
	}
	return DB_OK;
}

/* A header value on one line: CR and LF become spaces. */
static void header_line(FILE *f, const char *name, const char *value)
{
	const char *p;
	bool ascii = true;

	if (!value)
		return;
	for (p = value; *p; p++)
		if ((unsigned char)*p >= 0x80)
			ascii = false;
	fprintf(f, "%s: ", name);
	if (ascii) {
		for (p = value; *p; p++)
			fputc(*p == '\r' || *p == '\n' ? ' ' : *p, f);
	} else {
		/* RFC 2047: =?UTF-8?B?...?= */
		static const char b64[] =
		    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
		size_t n = strlen(value), i;
		const unsigned char *u = (const unsigned char *)value;

		fputs("=?UTF-8?B?", f);
		for (i = 0; i < n; i += 3) {
			unsigned v = (unsigned)u[i] << 16 |
			             (i + 1 < n ? (unsigned)u[i + 1] << 8 : 0) |
			             (i + 2 < n ? u[i + 2] : 0);

			fputc(b64[(v >> 18) & 63], f);
			fputc(b64[(v >> 12) & 63], f);
			fputc(i + 1 < n ? b64[(v >> 6) & 63] : '=', f);
			fputc(i + 2 < n ? b64[v & 63] : '=', f);
		}
		fputs("?=", f);
	}
	fputc('\n', f);
}

/*
 * The reply mail of a finished submission in *out (new string).  Returns 0,
 * a db_tx code, or DB_ABORT with *status and msg when there is none yet.
 */
static int reports_reply(PGconn *c, long long submission, enum report_format fmt, char **out,
                         char **subject_out, char **msgid_out, int *status, char *msg,
                         size_t msglen)
{
	char idbuf[24];
	const char *p[1] = {idbuf};
	PGresult *s = NULL, *head = NULL, *jobs = NULL;
	char *table = NULL, *mail = NULL, *subject = NULL;
	size_t len = 0, subject_len = 0;
	const char *state, *sub_subject, *msgid, *verdict;
	FILE *f = NULL, *sf = NULL;
	bool tested = true, done;
	int rc = DB_FAIL;

	*out = NULL;
	snprintf(idbuf, sizeof(idbuf), "%lld", submission);
	s = db_exec(c,
	            "SELECT state, subject, reply_to_msgid, notify, reason, verdict, "
	            "array_to_string(suites, ', '), to_char(updated AT TIME ZONE 'UTC', "
	            "'Dy, DD Mon YYYY HH24:MI:SS \"+0000\"'), source, url, git_url, git_ref "
	            "FROM submissions WHERE id = $1",
	            1, p);
	if (!s)
		return db_failure();
	if (PQntuples(s) != 1) {
		*status = 404;
		snprintf(msg, msglen, "no submission %lld", submission);
		rc = DB_ABORT;
		goto out;
	}
	state = PQgetvalue(s, 0, 0);
	sub_subject = PQgetvalue(s, 0, 1);
	msgid = db_value(s, 0, 2);
	verdict = db_value(s, 0, 5);
	done = strcmp(state, "done") == 0;
	if (!done && strcmp(state, "failed") != 0) {
		*status = 409;
		snprintf(msg, msglen, "submission %lld is %s: no reply before it is finished",
		         submission, state);
		rc = DB_ABORT;
		goto out;
	}
	head = db_exec(c,
	               "SELECT author, date, body, (SELECT count(*) FROM patches WHERE "
	               "submission_id = $1 AND NOT is_cover) FROM patches WHERE submission_id = $1 "
	               "ORDER BY seq LIMIT 1",
	               1, p);
	jobs = db_exec(c,
	               "SELECT count(*) FILTER (WHERE state <> 'done'), count(*) FILTER (WHERE "
	               "verdict IN ('regression', 'lockup')), count(*), count(*) FILTER (WHERE "
	               "suite <> 'build') FROM jobs WHERE submission_id = $1",
	               1, p);
	if (!head || !jobs) {
		rc = db_failure();
		goto out;
	}
	/*
	 * Tested-by: every suite ran, nothing regressed or locked up, not
	 * build-only, and the numbers came to a conclusion: an inconclusive
	 * comparison is not a test the submitter can quote.
	 */
	tested = done && atoi(PQgetvalue(jobs, 0, 0)) == 0 && atoi(PQgetvalue(jobs, 0, 1)) == 0 &&
	         atoi(PQgetvalue(jobs, 0, 2)) > 0 && atoi(PQgetvalue(jobs, 0, 3)) > 0 && verdict &&
	         (strcmp(verdict, "no-change") == 0 || strcmp(verdict, "improvement") == 0);
	if (done) {
		rc = reports_render(c, submission, fmt, &table);
		if (rc != DB_OK)
			goto out;
	}

	sf = open_memstream(&subject, &subject_len);
	if (!sf)
		goto out;
	fprintf(sf, "%s%s", strncasecmp(sub_subject, "re:", 3) == 0 ? "" : "Re: ", sub_subject);
	fclose(sf);
	sf = NULL;

	f = open_memstream(&mail, &len);
	if (!f)
		goto out;
	header_line(f, "From", "locklab <locklab@localhost>");
	if (db_value(s, 0, 3))
		header_line(f, "To", db_value(s, 0, 3));
	else if (PQntuples(head) == 1)
		header_line(f, "To", PQgetvalue(head, 0, 0));
	header_line(f, "Subject", subject);
	header_line(f, "Date", PQgetvalue(s, 0, 7));
	fprintf(f, "Message-ID: <locklab-submission-%lld@localhost>\n", submission);
	if (msgid) {
		header_line(f, "In-Reply-To", msgid);
		header_line(f, "References", msgid);
	}
	fprintf(f, "MIME-Version: 1.0\nContent-Type: text/plain; charset=utf-8\n"
	           "Content-Transfer-Encoding: 8bit\n\n");
	if (PQntuples(head) == 1) {
		const char *body = PQgetvalue(head, 0, 2);
		int lines = 0;

		fprintf(f, "On %s, %s wrote:\n",
		        *PQgetvalue(head, 0, 1) ? PQgetvalue(head, 0, 1) : "an unknown date",
		        PQgetvalue(head, 0, 0));
		while (*body && lines < 6) {
			const char *nl = strchr(body, '\n');
			size_t n = nl ? (size_t)(nl - body) : strlen(body);

			fprintf(f, ">%s%.*s\n", n ? " " : "", (int)n, body);
			lines++;
			body += n + (nl ? 1 : 0);
		}
		if (*body)
			fprintf(f, "> [...]\n");
		fputc('\n', f);
	} else {
		fprintf(f, "Tested %s %s.\n\n", db_value(s, 0, 10) ? db_value(s, 0, 10) : "",
		        db_value(s, 0, 11) ? db_value(s, 0, 11) : "");
	}
	if (!done) {
		fprintf(f, "locklab could not test this: %s\n",
		        db_value(s, 0, 4) ? db_value(s, 0, 4) : "the job failed");
		tested = false;
	} else {
		fprintf(f,
		        "locklab ran the %s suite(s) with and without the %s, in interleaved "
		        "rounds.\n\n",
		        PQgetvalue(s, 0, 6),
		        PQntuples(head) == 1 && atoi(PQgetvalue(head, 0, 3)) > 1 ? "series"
		                                                                 : "patch");
		fputs(table ? table : "", f);
		fprintf(f, "\nVerdict: %s.\n", verdict ? verdict : "none");
	}
	if (tested)
		fprintf(f, "\nTested-by: locklab <locklab@localhost>\n");
	if (fclose(f) != 0) {
		f = NULL;
		goto out;
	}
	f = NULL;
	*out = mail;
	mail = NULL;
	if (subject_out) {
		*subject_out = subject;
		subject = NULL;
	}
	if (msgid_out)
		*msgid_out = msgid ? strdup(msgid) : NULL;
	rc = DB_OK;
out:
	if (f)
		fclose(f);
	free(mail);
	free(table);
	free(subject);
	PQclear(s);
	PQclear(head);
	PQclear(jobs);
	return rc;
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
	            "'no-change', 'improvement', 'inconclusive', 'regression', 'lockup'], verdict) "
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
	{
		char *mail = NULL, *subject = NULL, *msgid = NULL;
		int status = 0;
		char msg[128];

		rc = reports_reply(c, submission, REPORT_TEXT, &mail, &subject, &msgid, &status,
		                   msg, sizeof(msg));
		if (rc == DB_OK) {
			const char *q[4] = {idbuf, subject, msgid, mail};

			rc = db_run(c,
			            "INSERT INTO outbox (submission_id, recipients, subject, "
			            "in_reply_to, message) SELECT $1, coalesce(s.notify, (SELECT "
			            "author FROM patches WHERE submission_id = s.id ORDER BY seq "
			            "LIMIT 1)), $2, $3, $4 FROM submissions s WHERE s.id = $1",
			            4, q);
		}
		free(mail);
		free(subject);
		free(msgid);
		if (rc == DB_ABORT)
			rc = DB_FAIL;
	}
	return rc;
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
	enum report_format fmt;
	PGconn *c = db_conn();
	char *mail = NULL;
	char msg[256];
	int status = 500, rc;
	enum handler_rc hrc;

	if (report_parse_query(req, &fmt) != 0)
		return http_reply_error(req, 400, "invalid", "format: aim7, perf, lkp or text");
	if (!c)
		return http_reply_error(req, 503, "database", "database unavailable");
	if (db_run(c, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", 0, NULL) != DB_OK)
		return http_reply_error(req, 503, "database", "query failed");
	rc = reports_reply(c, id, fmt, &mail, NULL, NULL, &status, msg, sizeof(msg));
	db_run(c, "COMMIT", 0, NULL);
	if (rc == DB_ABORT)
		return http_reply_error(req, (unsigned)status,
		                        status == 404 ? "not-found" : "not-ready", "%s", msg);
	if (rc != DB_OK)
		return http_reply_error(req, 503, "database", "cannot build the reply");
	hrc = http_reply(req, 200, "message/rfc822", mail, strlen(mail));
	free(mail);
	return hrc;
}
