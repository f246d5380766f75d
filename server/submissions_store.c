/*
 * submissions_store.c - a parsed submission stored (submission_store,
 * submissions.h): submission, patches and jobs, and the mails it came
 * from marked submitted, in one transaction.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "db.h"
#include "mail.h"
#include "refname.h"
#include "url.h"
#include <glib.h>

#include "submissions.h"

#define sub_new submission_new

/* "{a,b}" for a text[] parameter; names are checked to need no quoting. */
static char *sub_suites_literal(const struct sub_new *s)
{
	size_t i, len = 3;
	char *out;

	for (i = 0; i < s->nsuites; i++)
		len += strlen(s->suites[i]) + 1;
	out = malloc(len);
	if (!out)
		return NULL;
	strcpy(out, "{");
	for (i = 0; i < s->nsuites; i++) {
		if (i)
			strcat(out, ",");
		strcat(out, s->suites[i]);
	}
	strcat(out, "}");
	return out;
}

/*
 * A series' name across its versions: the author's address and the title of
 * its cover letter (else its first patch), lower case.  New string.
 */
static char *sub_series_key(const struct mbox_mail *m)
{
	const char *lt = strrchr(m->from, '<'), *gt = lt ? strchr(lt, '>') : NULL;
	char *addr = lt && gt ? g_strndup(lt + 1, (size_t)(gt - lt - 1)) : g_strdup(m->from);
	char *key = g_strdup_printf("%s %s", addr, m->title ? m->title : "");
	char *low = g_utf8_strdown(key, -1);

	g_free(addr);
	g_free(key);
	return low;
}

/*
 * The id of tree s->tree into tree_id.  Returns DB_OK, DB_ABORT with the
 * reason in s->err when there is no such tree, or db_failure().
 */
static int sub_tree_id(PGconn *c, struct sub_new *s, char *tree_id, size_t len)
{
	const char *p[1] = {s->tree};
	PGresult *res;

	res = db_exec(c, "SELECT id FROM trees WHERE name = $1", 1, p);
	if (!res)
		return db_failure();
	if (PQntuples(res) != 1) {
		PQclear(res);
		snprintf(s->err, sizeof(s->err), "unknown tree '%s'", s->tree);
		return DB_ABORT;
	}
	snprintf(tree_id, len, "%s", PQgetvalue(res, 0, 0));
	PQclear(res);
	return DB_OK;
}

/*
 * The submission's subject: head's, else "<git url> <git ref>".  New
 * string, NULL when out of memory or when there is neither.
 */
static char *sub_title(const struct sub_new *s, const struct mbox_mail *head)
{
	char *title = NULL;

	if (head) {
		title = strdup(head->subject);
	} else if (s->git_url) {
		size_t n = strlen(s->git_url) + strlen(s->git_ref) + 2;

		title = malloc(n);
		if (title)
			snprintf(title, n, "%s %s", s->git_url, s->git_ref);
	}
	return title;
}

/*
 * Insert the submissions row (head: the cover letter, else the first
 * patch, else NULL); its id goes into s->id.  Returns DB_OK or db_failure().
 */
static int sub_insert_submission(PGconn *c, struct sub_new *s, const struct mbox_mail *head,
                                 const char *tree_param, const char *suites, const char *title)
{
	char ver[16], npatches[24];
	char *series_key;
	PGresult *res;

	snprintf(ver, sizeof(ver), "%d", s->series.version ? s->series.version : 1);
	snprintf(npatches, sizeof(npatches), "%zu", s->series.npatches);
	series_key = head ? sub_series_key(head) : NULL;
	{
		const char *p[16] = {s->source,
		                     s->url,
		                     s->git_url,
		                     s->git_ref,
		                     s->git_base,
		                     tree_param,
		                     suites,
		                     s->notify,
		                     title,
		                     head ? head->message_id : NULL,
		                     ver,
		                     head ? head->references : NULL,
		                     head ? head->cc : NULL,
		                     head ? head->list : NULL,
		                     series_key,
		                     npatches};

		/* previous_id: the newest older version of the same series, or a
		 * copy of the same version and number of patches sent again with
		 * other mails after it (a resend without a version label) */
		res = db_exec(
		    c,
		    "INSERT INTO submissions (source, url, git_url, git_ref, git_base, "
		    "tree_id, suites, notify, subject, reply_to_msgid, version, "
		    "mail_references, mail_cc, mail_list, mail_series, previous_id) VALUES "
		    "($1, $2, $3, $4, $5, $6, $7::text[], $8, $9, $10, $11, $12, $13, $14, "
		    "$15, (SELECT id FROM submissions WHERE mail_series = $15 AND (version < "
		    "$11::int OR (version = $11::int AND reply_to_msgid IS DISTINCT FROM $10 "
		    "AND id > coalesce((SELECT max(id) FROM submissions WHERE mail_series = $15 "
		    "AND version < $11::int), 0) AND (SELECT count(*) FROM patches WHERE "
		    "submission_id = submissions.id AND seq > 0) = $16::int)) ORDER BY version "
		    "DESC, id DESC LIMIT 1)) "
		    "RETURNING id, coalesce(previous_id, "
		    "0), coalesce((SELECT p.version FROM submissions p WHERE p.id = "
		    "submissions.previous_id), 0)",
		    16, p);
	}
	free(series_key);
	if (!res)
		return db_failure();
	s->id = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
	s->previous_id = strtoll(PQgetvalue(res, 0, 1), NULL, 10);
	s->previous_version = (int)strtol(PQgetvalue(res, 0, 2), NULL, 10);
	PQclear(res);
	return DB_OK;
}

/*
 * Insert a patches row for the cover letter, if any, and each patch of
 * submission idbuf, the message as sent included; head_to and head_cc go
 * with head.  Returns DB_OK or db_run's code.
 */
static int sub_insert_patches(PGconn *c, const struct sub_new *s, const struct mbox_mail *head,
                              const char *idbuf, const char *head_to, const char *head_cc)
{
	int rc = DB_OK;
	size_t k;

	for (k = 0; k <= s->series.npatches; k++) {
		const struct mbox_mail *m;
		char seq[16], total[16];
		gchar *raw;

		if (k == 0 && !s->series.cover)
			continue;
		m = k == 0 ? s->series.cover : &s->series.patches[k - 1];
		snprintf(seq, sizeof(seq), "%d", k == 0 ? 0 : m->index);
		snprintf(total, sizeof(total), "%zu", s->series.npatches);
		raw = m->raw ? g_base64_encode((const guchar *)m->raw, m->raw_len) : NULL;
		{
			const char *p[15] = {idbuf,
			                     seq,
			                     total,
			                     k == 0 ? "t" : "f",
			                     m->message_id,
			                     m->in_reply_to,
			                     m->from,
			                     m->subject,
			                     m->date,
			                     m->body,
			                     m->diff ? m->diff : "",
			                     m->references,
			                     m == head ? head_to : NULL,
			                     m == head ? head_cc : NULL,
			                     raw};

			rc = db_run(
			    c,
			    "INSERT INTO patches (submission_id, seq, total, is_cover, "
			    "message_id, in_reply_to, author, subject, date, body, diff, "
			    "mail_references, mail_to, mail_cc, raw) VALUES ($1, $2, $3, $4, $5, "
			    "$6, $7, $8, $9, $10, $11, $12, $13, $14, decode($15, 'base64'))",
			    15, p);
		}
		g_free(raw);
		if (rc != DB_OK)
			return rc;
	}
	return rc;
}

/*
 * Insert a set_aside row for each mail of the series that is not tested
 * (sql/028).  Returns DB_OK or db_run's code.
 */
static int sub_insert_aside(PGconn *c, const struct sub_new *s, const char *idbuf)
{
	int rc = DB_OK;

	for (size_t k = 0; k < s->series.naside && rc == DB_OK; k++) {
		const struct mbox_aside *a = &s->series.aside[k];
		const struct mbox_mail *m = &a->mail;
		char seq[16], total[16];
		gchar *raw = m->raw ? g_base64_encode((const guchar *)m->raw, m->raw_len) : NULL;
		const char *p[10] = {idbuf,
		                     seq,
		                     total,
		                     a->replaced ? "replaced" : "past-numbering",
		                     m->message_id,
		                     m->from,
		                     m->subject,
		                     m->date,
		                     m->diff ? m->diff : "",
		                     raw};

		snprintf(seq, sizeof(seq), "%d", m->index);
		snprintf(total, sizeof(total), "%d", m->total);
		rc = db_run(c,
		            "INSERT INTO set_aside (submission_id, seq, total, why, message_id, "
		            "author, subject, date, diff, raw) VALUES ($1, $2, $3, $4, $5, $6, $7, "
		            "$8, $9, decode($10, 'base64'))",
		            10, p);
		g_free(raw);
	}
	return rc;
}

/*
 * Mark the intake's mails s->mail_ids submitted as submission idbuf.
 * Returns DB_OK, DB_ABORT with the reason in s->err when none of them was
 * still pending, or db_failure().
 */
static int sub_claim_mails(PGconn *c, struct sub_new *s, const char *idbuf)
{
	const char *p[2] = {idbuf, s->mail_ids};
	PGresult *res;

	res = db_exec(c,
	              "UPDATE mail_messages SET state = 'submitted', submission_id = $1 "
	              "WHERE message_id = ANY($2::text[]) AND state = 'pending'",
	              2, p);
	if (!res)
		return db_failure();
	if (atoi(PQcmdTuples(res)) == 0) {
		PQclear(res);
		snprintf(s->err, sizeof(s->err), "its mails were submitted already");
		return DB_ABORT;
	}
	PQclear(res);
	return DB_OK;
}

/*
 * Insert the jobs of submission idbuf, their ids appended to s->jobs.
 * Returns DB_OK or db_failure().
 */
static int sub_insert_jobs(PGconn *c, struct sub_new *s, const char *idbuf)
{
	PGresult *res;
	int rc = DB_OK, i, nclass;
	size_t k;

	/* one job per suite and machine class of the registered agents */
	res = db_exec(c,
	              "SELECT DISTINCT machine_class FROM agents WHERE role = 'agent' "
	              "ORDER BY machine_class",
	              0, NULL);
	if (!res)
		return db_failure();
	nclass = PQntuples(res);
	for (k = 0; k < s->nsuites; k++) {
		for (i = 0; i < (nclass ? nclass : 1); i++) {
			char rounds[16], minr[16], maxr[16];
			const char *p[6] = {
			    idbuf,  s->suites[k], nclass ? PQgetvalue(res, i, 0) : "default",
			    rounds, minr,         maxr};
			PGresult *jr;

			snprintf(rounds, sizeof(rounds), "%d",
			         s->rounds > 0 ? s->rounds : srv_cfg.min_rounds);
			/* the limits it is planned with go with it (any server judges by them) */
			snprintf(minr, sizeof(minr), "%d", srv_cfg.min_rounds);
			snprintf(maxr, sizeof(maxr), "%d", srv_cfg.max_rounds);
			jr = db_exec(c,
			             "INSERT INTO jobs (submission_id, suite, machine_class, "
			             "rounds_wanted, min_rounds, max_rounds) "
			             "VALUES ($1, $2, $3, $4, $5, $6) RETURNING id",
			             6, p);
			if (!jr) {
				rc = db_failure();
				goto out;
			}
			json_array_append_new(
			    s->jobs, json_integer(strtoll(PQgetvalue(jr, 0, 0), NULL, 10)));
			PQclear(jr);
		}
	}
out:
	PQclear(res);
	return rc;
}

/*
 * The transaction of a new submission: its tree, the submissions row, its
 * mails as patches rows, the intake's mails marked and one job per suite
 * and machine class.
 */
static int sub_store(PGconn *c, void *arg)
{
	struct sub_new *s = arg;
	const struct mbox_mail *first = s->series.npatches ? &s->series.patches[0] : NULL;
	const struct mbox_mail *head = s->series.cover ? s->series.cover : first;
	char *suites = NULL, *title = NULL, *head_to = NULL, *head_cc = NULL;
	char idbuf[24], tree_id[24];
	const char *tree_param = NULL;
	int rc;

	json_decref(s->jobs);
	s->jobs = json_array();
	if (s->tree) {
		rc = sub_tree_id(c, s, tree_id, sizeof(tree_id));
		if (rc != DB_OK)
			return rc;
		tree_param = tree_id;
	}
	suites = sub_suites_literal(s);
	title = sub_title(s, head);
	rc = DB_FAIL;
	if (!suites || !title)
		goto out;
	rc = sub_insert_submission(c, s, head, tree_param, suites, title);
	if (rc != DB_OK)
		goto out;
	snprintf(idbuf, sizeof(idbuf), "%lld", s->id);

	/* the list the reply goes back to (mail.h), from the head as it was sent */
	if (head && head->raw)
		mail_find_recipients(head->raw, head->raw_len, head->message_id, &head_to,
		                     &head_cc);
	rc = sub_insert_patches(c, s, head, idbuf, head_to, head_cc);
	if (rc == DB_OK)
		rc = sub_insert_aside(c, s, idbuf);
	if (rc == DB_OK && s->mail_ids)
		rc = sub_claim_mails(c, s, idbuf);
	if (rc == DB_OK)
		rc = sub_insert_jobs(c, s, idbuf);
out:
	free(suites);
	free(title);
	free(head_to);
	free(head_cc);
	return rc;
}

static const char *sub_msgid(const struct mbox_mail *m)
{
	return m->message_id ? m->message_id : "(no Message-ID)";
}

/* The server's log says what of s->series is not tested, and why. */
static void sub_log_aside(const struct sub_new *s)
{
	for (size_t k = 0; k < s->series.naside; k++) {
		const struct mbox_mail *m = &s->series.aside[k].mail;

		if (s->series.aside[k].replaced)
			fprintf(stderr,
			        "locklab-server: submission %lld: part %d/%d was sent again: the "
			        "later copy %s is tested, the earlier %s is set aside\n",
			        s->id, m->index, m->total,
			        sub_msgid(&s->series.patches[m->index - 1]), sub_msgid(m));
		else
			fprintf(stderr,
			        "locklab-server: submission %lld: part %d/%d set aside, past the "
			        "series' numbering: %s\n",
			        s->id, m->index, m->total, m->subject ? m->subject : "");
	}
}

int submission_store(struct submission_new *s)
{
	char err[200];

	if (s->series.pull_url && !s->git_url) {
		/* a pull request: its repository is fetched as a git submission's */
		if (url_check(s->series.pull_url, URL_HTTP | URL_GIT | URL_SSH, err, sizeof(err))) {
			snprintf(s->err, sizeof(s->err), "pull request %s: %s", s->series.pull_url,
			         err);
			return DB_ABORT;
		}
		if (!api_git_ref_ok(s->series.pull_ref)) {
			snprintf(s->err, sizeof(s->err),
			         "pull request: '%.100s' is not a git revision",
			         s->series.pull_ref);
			return DB_ABORT;
		}
		s->git_url = s->series.pull_url;
		s->git_ref = s->series.pull_ref;
	}
	int rc = db_tx(sub_store, s);
	if (rc == DB_OK)
		sub_log_aside(s);
	return rc;
}
