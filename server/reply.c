/*
 * reply.c - the reply mail of a finished submission (reply.h): what it is
 * built from, the body in the kernel test robot's manner, the headers
 * through mail.c, a row of the outbox.  What the body says is
 * reply_finding.c, its table and stacks reply_table.c.
 */
#include "reply.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bycommit.h"
#include "config.h"
#include "db.h"
#include "mail.h"
#include "outbox.h"
#include "reply_internal.h"
#include "verdicts.h"

static void reply_data_release(struct reply_data *d)
{
	PQclear(d->sub);
	PQclear(d->head);
	PQclear(d->jobs);
	PQclear(d->reviewers);
	PQclear(d->commits);
	for (size_t i = 0; d->pre && i < d->ncmps; i++)
		bycommit_release(&d->pre[i]);
	free(d->pre);
	verdicts_free(d->cmps, d->ncmps);
	memset(d, 0, sizeof(*d));
}

/* Columns of s as a terminal shows them: UTF-8 continuation bytes take none. */

static const char *reply_identity(void)
{
	return srv_cfg.tested_by && *srv_cfg.tested_by ? srv_cfg.tested_by : srv_cfg.mail_from;
}

static void reply_link(char *buf, size_t len, long long id)
{
	if (srv_cfg.public_url && *srv_cfg.public_url)
		snprintf(buf, len, "%s/#/submissions/%lld", srv_cfg.public_url, id);
	else
		snprintf(buf, len, "http://%s/#/submissions/%lld", srv_cfg.listen, id);
}

/* The body of d's reply; new string or NULL. */
static char *reply_body(const struct reply_data *d)
{
	const char *verdict = db_value(d->sub, 0, 5);
	bool tested = reply_tested(d);
	char *body = NULL, link[512];
	size_t len = 0;
	FILE *f = open_memstream(&body, &len);

	if (!f)
		return NULL;
	reply_link(link, sizeof(link), d->id);
	reply_finding(f, d, tested);
	reply_paragraphs(f, d, reply_unresolvable);
	reply_paragraphs(f, d, reply_notes);
	fputc('\n', f);
	reply_what(f, d);
	for (size_t i = 0; d->done && i < d->ncmps; i++) {
		fputc('\n', f);
		reply_table(f, &d->cmps[i]);
		if (d->pre)
			bycommit_print(f, &d->cmps[i].cmp, &d->pre[i], REPLY_MAX_COLUMNS);
		reply_stacks(f, &d->cmps[i].cmp);
		reply_splat(f, &d->cmps[i].cmp);
	}
	fprintf(f, "\ndetails: %s\n", link);
	if (tested) {
		fprintf(f, "\nTested-by: %s\n", reply_identity());
	} else if (d->done && verdict &&
	           (strcmp(verdict, "regression") == 0 || strcmp(verdict, "lockup") == 0 ||
	            strcmp(verdict, "splat") == 0 || strcmp(verdict, "crash") == 0)) {
		fputc('\n', f);
		reply_wrap(
		    f,
		    "If you fix the issue in a separate patch (not just a new version of this "
		    "one), kindly add these tags:",
		    0, 0);
		fprintf(f, "| Reported-by: %s\n| Closes: %s\n", reply_identity(), link);
	}
	if (fclose(f) != 0) {
		free(body);
		return NULL;
	}
	return body;
}

/* Load what the reply says.  DB_ABORT with *status/msg when there is none to make. */
static int reply_load(PGconn *c, long long id, struct reply_data *d, int *status, char *msg,
                      size_t msglen)
{
	char idbuf[24];
	const char *p[1] = {idbuf};
	const char *state;

	memset(d, 0, sizeof(*d));
	d->id = id;
	snprintf(idbuf, sizeof(idbuf), "%lld", id);
	d->sub =
	    db_exec(c,
	            "SELECT s.state, s.subject, s.reply_to_msgid, s.notify, s.reason, s.verdict, "
	            "array_to_string(s.suites, ', '), s.source, s.url, s.git_url, s.git_ref, "
	            "s.git_base, t.name, t.branch, t.kind FROM submissions s LEFT JOIN trees t ON "
	            "t.id = s.tree_id WHERE s.id = $1",
	            1, p);
	if (!d->sub)
		return db_failure();
	if (PQntuples(d->sub) != 1) {
		*status = 404;
		snprintf(msg, msglen, "no submission %lld", id);
		return DB_ABORT;
	}
	state = PQgetvalue(d->sub, 0, 0);
	d->done = strcmp(state, "done") == 0;
	if (!d->done && strcmp(state, "failed") != 0) {
		*status = 409;
		snprintf(msg, msglen, "submission %lld is %s: no reply before it is finished", id,
		         state);
		return DB_ABORT;
	}
	d->head =
	    db_exec(c,
	            "SELECT author, subject, message_id, mail_references, mail_to, mail_cc, "
	            "(SELECT count(*) FROM patches WHERE submission_id = $1 AND NOT is_cover) "
	            "FROM patches WHERE submission_id = $1 ORDER BY seq LIMIT 1",
	            1, p);
	d->jobs = db_exec(c,
	                  "SELECT count(*) FILTER (WHERE state <> 'done'), count(*) FILTER (WHERE "
	                  "verdict IN ('regression', 'lockup')), count(*), count(*) FILTER (WHERE "
	                  "suite <> 'build') FROM jobs WHERE submission_id = $1",
	                  1, p);
	/*
	 * the reviewers: Reviewed-by and Acked-by trailers in the patches and
	 * in the list's replies to them (mail_trailers)
	 */
	d->reviewers =
	    db_exec(c,
	            "SELECT string_agg(DISTINCT who, ', ') FROM (SELECT m[2] AS who FROM patches, "
	            "regexp_matches(body, '^(Reviewed-by|Acked-by):[ \\t]*(.+?)[ \\t]*$', "
	            "'gn') m WHERE submission_id = $1 UNION SELECT t.who FROM patches p JOIN "
	            "mail_trailers t ON t.target = p.message_id WHERE p.submission_id = $1 AND "
	            "t.kind IN ('Reviewed-by', 'Acked-by')) r",
	            1, p);
	/* the pulled commits each variant was: patch-1 ... patched */
	d->commits = db_exec(
	    c,
	    "SELECT variant, label, range FROM (SELECT DISTINCT ON (r.variant) r.variant, "
	    "r.document->'commit'->>'label' AS label, r.document->'commit'->>'range' AS range "
	    "FROM results r JOIN jobs j ON j.id = r.job_id WHERE j.submission_id = $1 AND "
	    "r.document ? 'commit' ORDER BY r.variant, r.id) c ORDER BY variant = 'patched', "
	    "length(variant), variant",
	    1, p);
	if (!d->head || !d->jobs || !d->reviewers || !d->commits)
		return db_failure();
	if (!d->done)
		return DB_OK;
	int rc = verdicts_load(c, id, &d->cmps, &d->ncmps);
	if (rc != DB_OK)
		return rc;
	d->pre = calloc(d->ncmps ? d->ncmps : 1, sizeof(*d->pre));
	if (!d->pre)
		return DB_FAIL;
	for (size_t i = 0; i < d->ncmps && rc == DB_OK; i++)
		rc = bycommit_load(c, d->cmps[i].job_id, &d->pre[i]);
	return rc;
}

/*
 * The mail of d: To the notify address when given (alone), else the
 * author with the list and reviewers in Cc.  New message in *out and its
 * Message-ID in *msgid; DB_ABORT with 422 when there is nobody to send to.
 */
static int reply_build(const struct reply_data *d, char **out, char **msgid, char **rcpt,
                       int *status, char *msg, size_t msglen)
{
	bool head = PQntuples(d->head) == 1;
	const char *notify = db_value(d->sub, 0, 3);
	const char *to = notify && *notify ? notify : head ? PQgetvalue(d->head, 0, 0) : NULL;
	char *cc = NULL, *body = NULL;
	int rc = DB_FAIL;

	*out = *msgid = *rcpt = NULL;
	if (!(notify && *notify) && head) {
		const char *parts[3] = {db_value(d->head, 0, 4), db_value(d->head, 0, 5),
		                        db_value(d->reviewers, 0, 0)};
		size_t n = 1;

		for (int i = 0; i < 3; i++)
			n += parts[i] ? strlen(parts[i]) + 2 : 0;
		cc = calloc(1, n);
		for (int i = 0; cc && i < 3; i++)
			if (parts[i] && *parts[i]) {
				if (*cc)
					strcat(cc, ", ");
				strcat(cc, parts[i]);
			}
	}
	body = reply_body(d);
	if (!body)
		goto out;
	{
		struct mail_reply r = {
		    .from = srv_cfg.mail_from,
		    .to = to,
		    .cc = cc,
		    .subject = head ? PQgetvalue(d->head, 0, 1) : PQgetvalue(d->sub, 0, 1),
		    .in_reply_to = db_value(d->sub, 0, 2),
		    .references = head ? db_value(d->head, 0, 3) : NULL,
		    .domain = srv_cfg.mail_domain,
		    .body = body,
		    .tag = d->id,
		    .date = time(NULL),
		};
		char err[256];

		*out = mail_build_reply(&r, msgid, err, sizeof(err));
		if (!*out) {
			*status = 422;
			snprintf(msg, msglen, "no reply for submission %lld: %s", d->id, err);
			rc = DB_ABORT;
			goto out;
		}
	}
	{
		size_t n = strlen(to) + (cc ? strlen(cc) + 2 : 0) + 1;

		*rcpt = malloc(n);
		if (*rcpt)
			snprintf(*rcpt, n, "%s%s%s", to, cc && *cc ? ", " : "",
			         cc && *cc ? cc : "");
	}
	rc = DB_OK;
out:
	free(cc);
	free(body);
	return rc;
}

int reply_queue(PGconn *c, long long submission)
{
	struct reply_data d;
	char *mail = NULL, *msgid = NULL, *rcpt = NULL, idbuf[24], msg[256];
	int status = 0, rc;

	snprintf(idbuf, sizeof(idbuf), "%lld", submission);
	{
		const char *p[1] = {idbuf};
		PGresult *res = db_exec(c,
		                        "SELECT 1 FROM outbox WHERE submission_id = $1 AND kind = "
		                        "'reply'",
		                        1, p);

		if (!res)
			return db_failure();
		rc = PQntuples(res);
		PQclear(res);
		if (rc)
			return DB_OK; /* replied already */
	}
	rc = reply_load(c, submission, &d, &status, msg, sizeof(msg));
	if (rc == DB_OK)
		rc = reply_build(&d, &mail, &msgid, &rcpt, &status, msg, sizeof(msg));
	if (rc == DB_OK) {
		bool send = outbox_sending();
		char *subj = mail_reply_subject(PQntuples(d.head) == 1 ? PQgetvalue(d.head, 0, 1)
		                                                       : PQgetvalue(d.sub, 0, 1));

		{
			const char *q[7] = {
			    idbuf, rcpt,  subj ? subj : "",        db_value(d.sub, 0, 2),
			    mail,  msgid, send ? "queued" : "held"};

			rc = db_run(
			    c,
			    "INSERT INTO outbox (submission_id, recipients, subject, in_reply_to, "
			    "message, message_id, state) VALUES ($1, $2, $3, $4, $5, $6, $7)",
			    7, q);
		}
		free(subj);
	} else if (rc == DB_ABORT) {
		/* nobody to send to (or not finished): nothing to keep, say why */
		fprintf(stderr, "locklab-server: %s\n", msg);
		rc = DB_OK;
	}
	free(mail);
	free(msgid);
	free(rcpt);
	reply_data_release(&d);
	return rc;
}

int reply_get(PGconn *c, long long submission, char **out, int *status, char *msg, size_t msglen)
{
	struct reply_data d;
	char idbuf[24], *msgid = NULL, *rcpt = NULL;
	const char *p[1] = {idbuf};
	PGresult *res;
	int rc;

	*out = NULL;
	snprintf(idbuf, sizeof(idbuf), "%lld", submission);
	res = db_exec(c,
	              "SELECT message FROM outbox WHERE submission_id = $1 AND kind = 'reply' "
	              "ORDER BY id DESC LIMIT 1",
	              1, p);
	if (!res)
		return db_failure();
	if (PQntuples(res) == 1) {
		*out = strdup(PQgetvalue(res, 0, 0));
		PQclear(res);
		return *out ? DB_OK : DB_FAIL;
	}
	PQclear(res);
	rc = reply_load(c, submission, &d, status, msg, msglen);
	if (rc == DB_OK)
		rc = reply_build(&d, out, &msgid, &rcpt, status, msg, msglen);
	free(msgid);
	free(rcpt);
	reply_data_release(&d);
	return rc;
}
