/*
 * intake_series.c - the mails kept made series and submitted
 * (intake_internal.h): a series' tree by the rules, waiting for its
 * missing patches, giving up on it, and the old mails pruned.
 */
#include "intake.h"

#include <glib.h>
#include <jansson.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "db.h"
#include "intake_internal.h"
#include "mbox.h"
#include "strutil.h"
#include "submissions.h"

/* ---- series ------------------------------------------------------------- */

/* The tree of a series: the first rule its list address or prefix matches. */
static const char *intake_tree(const struct mbox_mail *head)
{
	size_t i;

	for (i = 0; i < icfg.nrules; i++) {
		const struct intake_rule *r = &icfg.rules[i];

		if (r->list && ((head->list && !strcasecmp(head->list, r->list)) ||
		                (head->cc && strcasestr(head->cc, r->list))))
			return r->tree;
		if (r->prefix && head->subject[0] == '[') {
			const char *close = strchr(head->subject, ']');
			char *group = g_strndup(head->subject + 1,
			                        close ? (size_t)(close - head->subject - 1) : 0);
			char **tok = g_strsplit_set(group, " \t,", -1);
			bool hit = false;
			size_t k;

			for (k = 0; tok[k] && !hit; k++)
				hit = !strcasecmp(tok[k], r->prefix);
			g_strfreev(tok);
			g_free(group);
			if (hit)
				return r->tree;
		}
	}
	return icfg.default_tree;
}

/* A numbered patch replying to a mail the series lacks: its cover is late. */
static bool intake_cover_missing(const struct mbox_series *s)
{
	size_t i, k;

	if (s->cover || s->npatches < 2)
		return false;
	for (i = 0; i < s->npatches; i++) {
		const char *parent = s->patches[i].in_reply_to;
		bool found = !parent;

		for (k = 0; k < s->npatches && !found; k++)
			found =
			    s->patches[k].message_id && !strcmp(s->patches[k].message_id, parent);
		if (!found)
			return true;
	}
	return false;
}

/* "2/5, 4/5" of a numbered group, or "" (new). */
static char *intake_missing(struct mbox_mail *mails, const size_t *idx, size_t n)
{
	struct strutil_buf b = STRUTIL_BUF_INIT;
	int total = 0, want;
	size_t i;

	for (i = 0; i < n; i++)
		if (mails[idx[i]].numbered && mails[idx[i]].total > total)
			total = mails[idx[i]].total;
	for (want = 1; want <= total && want <= 1000; want++) {
		bool have = false;

		for (i = 0; i < n && !have; i++)
			have = mails[idx[i]].index == want && mails[idx[i]].diff;
		if (!have)
			strutil_buf_addf(&b, "%s%d/%d", b.len ? ", " : "", want, total);
	}
	return strutil_buf_detach(&b);
}

/* The mails of one group marked given up, with reason. */
static void intake_give_up(PGconn *c, const char *ids, const char *reason)
{
	const char *p[2] = {ids, reason};

	db_run(c,
	       "UPDATE mail_messages SET state = 'given-up', reason = $2 WHERE message_id = "
	       "ANY($1::text[]) AND state = 'pending'",
	       2, p);
	atomic_fetch_add_explicit(&in_given_up, 1, memory_order_relaxed);
}

/* {"<a>","<b>"} for a text[] parameter. */
static char *ids_literal(struct mbox_mail *mails, const size_t *idx, size_t n)
{
	struct strutil_buf b = STRUTIL_BUF_INIT;
	size_t i;
	const char *p;

	strutil_buf_add(&b, "{");
	for (i = 0; i < n; i++) {
		strutil_buf_add(&b, i ? ",\"" : "\"");
		for (p = mails[idx[i]].message_id; *p; p++) {
			if (*p == '"' || *p == '\\')
				strutil_buf_addch(&b, '\\', 1);
			strutil_buf_addch(&b, *p, 1);
		}
		strutil_buf_addch(&b, '"', 1);
	}
	strutil_buf_addch(&b, '}', 1);
	return strutil_buf_detach(&b);
}

/* Decide for one group of waiting mails: submit, wait, or give up. */
static void intake_series(PGconn *c, struct mbox_mail *mails, const size_t *idx, size_t n,
                          double age)
{
	struct submission_new s;
	struct mbox_mail *sub = g_new0(struct mbox_mail, n);
	char err[256] = "", *ids = ids_literal(mails, idx, n);
	const char *who = mails[idx[0]].message_id;
	size_t i;
	int rc;

	memset(&s, 0, sizeof(s));
	mbox_series_init(&s.series);
	for (i = 0; i < n; i++)
		mbox_mail_parse(mails[idx[i]].raw, mails[idx[i]].raw_len, &sub[i], NULL, 0);
	rc = mbox_assemble(sub, n, NULL, &s.series, err, sizeof(err));
	if (rc != 0 || (intake_cover_missing(&s.series) && age < icfg.wait_seconds)) {
		if (age >= icfg.wait_seconds) {
			char *missing = intake_missing(mails, idx, n);
			char *why =
			    *missing ? g_strdup_printf("parts %s missing", missing) : g_strdup(err);

			intake_log("series", "gave up on the series of %s after %.0f s: %s", who,
			           age, why);
			intake_give_up(c, ids, why);
			g_free(why);
			g_free(missing);
		}
		goto out;
	}
	s.source = "mail";
	s.tree = intake_tree(s.series.cover ? s.series.cover : &s.series.patches[0]);
	memcpy(s.suites, icfg.suites, sizeof(s.suites));
	s.nsuites = icfg.nsuites;
	s.mail_ids = ids;
	rc = submission_store(&s);
	if (rc == DB_OK) {
		const char *subject =
		    s.series.cover ? s.series.cover->subject : s.series.patches[0].subject;

		intake_log("series", "submitted %s (%zu patch(es), v%d) as submission %lld",
		           subject, s.series.npatches, s.series.version, s.id);
		if (s.previous_id && s.previous_version == s.series.version)
			intake_log("series",
			           "%s sent again as v%d without a new version label: submission "
			           "%lld is a new version of submission %lld",
			           subject, s.series.version, s.id, s.previous_id);
		atomic_fetch_add_explicit(&in_submitted, 1, memory_order_relaxed);
	} else if (rc == DB_ABORT) {
		intake_log("series", "gave up on the series of %s: %s", who, s.err);
		intake_give_up(c, ids, s.err);
	}
out:
	json_decref(s.jobs);
	mbox_series_release(&s.series);
	for (i = 0; i < n; i++)
		mbox_mail_release(&sub[i]);
	g_free(sub);
	g_free(ids);
}

/* Every waiting mail, grouped into series; each group decided. */
void intake_assemble(void)
{
	PGconn *c = db_conn();
	PGresult *res;
	struct mbox_mail *mails;
	size_t *gof, n, i, g, ngroups;

	if (!c)
		return;
	res = db_exec(c,
	              "SELECT encode(raw, 'base64'), extract(epoch FROM now() - arrived) FROM "
	              "mail_messages WHERE state = 'pending' ORDER BY arrived, message_id",
	              0, NULL);
	if (!res)
		return;
	n = (size_t)PQntuples(res);
	mails = g_new0(struct mbox_mail, n ? n : 1);
	gof = g_new(size_t, n ? n : 1);
	for (i = 0; i < n; i++) {
		gsize len = 0;
		guchar *raw = g_base64_decode(PQgetvalue(res, (int)i, 0), &len);

		mbox_mail_parse((const char *)raw, len, &mails[i], NULL, 0);
		g_free(raw);
	}
	ngroups = mbox_group(mails, n, gof);
	{
		/* the mails of each group, in arrival order: a counting sort, linear */
		size_t *first = g_new0(size_t, ngroups + 1), *idx = g_new(size_t, n ? n : 1);
		size_t *fill = g_new0(size_t, ngroups + 1);

		for (i = 0; i < n; i++)
			if (gof[i] != (size_t)-1)
				first[gof[i] + 1]++;
		for (g = 0; g < ngroups; g++)
			first[g + 1] += first[g];
		for (i = 0; i < n; i++)
			if (gof[i] != (size_t)-1)
				idx[first[gof[i]] + fill[gof[i]]++] = i;
		for (g = 0; g < ngroups; g++) {
			size_t k, cnt = first[g + 1] - first[g];
			double age = -1;

			/* counted from the newest mail: a series whose parts keep
			 * coming, each within wait_seconds, is not split */
			for (k = first[g]; k < first[g + 1]; k++) {
				double a = strtod(PQgetvalue(res, (int)idx[k], 1), NULL);

				if (age < 0 || a < age)
					age = a;
			}
			if (cnt)
				intake_series(c, mails, idx + first[g], cnt, age);
		}
		g_free(fill);
		g_free(idx);
		g_free(first);
	}
	PQclear(res);
	for (i = 0; i < n; i++)
		mbox_mail_release(&mails[i]);
	g_free(mails);
	g_free(gof);
}
