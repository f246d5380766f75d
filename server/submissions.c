/*
 * submissions.c - POST/GET /api/v1/submissions: fetch or take the mbox,
 * parse the series, store submission, patches and jobs in one transaction.
 */
#include <ctype.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <unistd.h>

#include "api.h"
#include "auth.h"
#include "config.h"
#include "db.h"
#include "fetch.h"
#include "mail.h"
#include "mbox.h"
#include "refname.h"
#include "strutil.h"
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
	return db_tx(sub_store, s);
}

static bool sub_name_ok(const char *s, size_t max)
{
	size_t n = strlen(s), i;

	if (n == 0 || n > max)
		return false;
	for (i = 0; i < n; i++)
		if (!islower((unsigned char)s[i]) && !isdigit((unsigned char)s[i]) && s[i] != '-' &&
		    s[i] != '_')
			return false;
	return true;
}

/*
 * A lore-style URL ".../<message-id>/<what>" (what: raw, t.mbox.gz, T/, ...):
 * *want becomes "<message-id>" (new) and, when what is "raw" (one message),
 * *thread the URL of its whole thread, ".../<message-id>/t.mbox.gz" (new).
 * Both stay NULL for other URLs.
 */
static void sub_lore_url(const char *url, char **want, char **thread)
{
	size_t n = strcspn(url, "?#");
	char *u = g_strndup(url, n), *last, *prev, *id;

	*want = *thread = NULL;
	while (n > 1 && u[n - 1] == '/' && u[n - 2] != '/')
		u[--n] = '\0'; /* ".../T/" reads as ".../T" */
	last = strrchr(u, '/');
	if (!last || last == u)
		goto out;
	*last = '\0';
	prev = strrchr(u, '/');
	if (!prev || !strchr(prev + 1, '@'))
		goto out;
	id = g_uri_unescape_string(prev + 1, NULL);
	if (!id || !*id || strpbrk(id, "<> \t\r\n")) {
		g_free(id);
		goto out;
	}
	*want = g_strdup_printf("<%s>", id);
	if (!strcmp(last + 1, "raw"))
		*thread = g_strdup_printf("%s/t.mbox.gz", u);
	g_free(id);
out:
	g_free(u);
}

#define SUB_NO_SERIES (-3)

/*
 * Fetch and parse url into *series; a lore URL of one message takes its
 * thread instead (and that message's series).  Returns FETCH_OK, or with
 * the reason in err FETCH_FAILED / FETCH_REFUSED (fetch.h) or
 * SUB_NO_SERIES (fetched, but no series in it).
 */
static int sub_fetch_series(const char *url, struct mbox_series *series, char *err, size_t errlen)
{
	char *want = NULL, *thread = NULL, *body = NULL;
	char terr[512] = "";
	size_t len = 0;
	int rc = -1;

	sub_lore_url(url, &want, &thread);
	if (thread) {
		if (fetch_url(thread, &body, &len, terr, sizeof(terr)) == 0 &&
		    mbox_parse_thread(body, len, want, series, terr, sizeof(terr)) == 0) {
			rc = 0;
			goto out;
		}
		free(body);
		body = NULL;
	}
	rc = fetch_url(url, &body, &len, err, errlen);
	if (rc != FETCH_OK)
		goto out; /* FETCH_FAILED or FETCH_REFUSED */
	rc = mbox_parse_thread(body, len, want, series, err, errlen);
	if (rc != 0 && thread) {
		char *why =
		    g_strdup_printf("the URL is one message of a thread: its thread %s could "
		                    "not be taken (%s); the message alone: %s",
		                    thread, terr, err);

		snprintf(err, errlen, "%s", why);
		g_free(why);
	}
	if (rc != 0)
		rc = SUB_NO_SERIES;
out:
	free(body);
	g_free(want);
	g_free(thread);
	return rc;
}

/* Whether addr (len bytes) appears in hay as a whole address, case-blind. */
static bool sub_addr_in(const char *hay, const char *addr, size_t len)
{
	for (const char *p = hay; p && *p; p++) {
		if (strncasecmp(p, addr, len) != 0)
			continue;
		bool before = p == hay || strchr(" \t<,\"'(", p[-1]);
		bool after = !p[len] || strchr(" \t>,\"')", p[len]);
		if (before && after)
			return true;
	}
	return false;
}

/* Whether addr is one of the series' people: From, the list it went to, Cc. */
static bool sub_person(const struct mbox_series *sr, const char *addr, size_t len)
{
	const struct mbox_mail *m;
	for (size_t i = 0; i <= sr->npatches; i++) {
		m = i < sr->npatches ? &sr->patches[i] : sr->cover;
		if (m && (sub_addr_in(m->from, addr, len) || sub_addr_in(m->list, addr, len) ||
		          sub_addr_in(m->cc, addr, len)))
			return true;
	}
	return false;
}

/*
 * Whether every address of notify ("a@b, Name <c@d>") is one of the
 * series' own people; else false with the first other one named in err.
 * A submission without mails (a git one) has no people.
 */
static bool sub_notify_ok(const struct mbox_series *sr, const char *notify, char *err,
                          size_t errlen)
{
	for (const char *p = notify; *p;) {
		size_t l = strcspn(p, ",");
		const char *a = p, *lt = memchr(p, '<', l);
		size_t al = l;
		if (lt) {
			const char *gt = memchr(lt, '>', l - (size_t)(lt - p));
			a = lt + 1;
			al = gt ? (size_t)(gt - a) : l - (size_t)(a - p);
		}
		while (al && (*a == ' ' || *a == '\t'))
			a++, al--;
		while (al && (a[al - 1] == ' ' || a[al - 1] == '\t'))
			al--;
		if (al && !sub_person(sr, a, al)) {
			strutil_errf(
			    err, errlen,
			    "notify: %.*s is not among the series' From, To and Cc; only a "
			    "trusted submitter token may name other addresses",
			    (int)(al > 200 ? 200 : al), a);
			return false;
		}
		p += l + (p[l] == ',');
	}
	return true;
}

/* Whether the caller is trusted with any notify address: 1, 0, or -1 (database). */
static int sub_trusted(struct http_request *req)
{
	const char *token = http_bearer(req);
	char hash[65];
	if (!token)
		return 0;
	if (auth_is_admin(token))
		return 1;
	PGconn *c = db_conn();
	if (!c)
		return -1;
	sha256_hex(token, strlen(token), hash);
	const char *p[1] = {hash};
	PGresult *res = db_exec(c,
	                        "SELECT trusted FROM agents WHERE token_hash = $1 AND "
	                        "role = 'submitter'",
	                        1, p);
	if (!res)
		return -1;
	int v = PQntuples(res) == 1 && PQgetvalue(res, 0, 0)[0] == 't';
	PQclear(res);
	return v;
}

/*
 * A URL fetched, or a submitted mbox parsed, off the pool's threads
 * (http_defer), and what came of it: the HTTP threads go on serving
 * /healthz, the dashboard and agents while a flood of mboxes is parsed.
 */
struct sub_fetch {
	char *url;
	char *mbox; /* instead of url: the submitted mbox */
	struct mbox_series series;
	int rc;
	char err[512];
};

/* Parses running at once (--parse-max-active; past it 503 + Retry-After). */
static atomic_uint parse_active;

unsigned submission_parses_active(void)
{
	return atomic_load(&parse_active);
}

bool submission_busy_early(const char *method, const char *url, unsigned long long length)
{
	return length > SUBMISSION_EARLY_BUSY_BYTES && strcmp(method, "POST") == 0 &&
	       strcmp(url, "/api/v1/submissions") == 0 &&
	       atomic_load(&parse_active) >= srv_cfg.parse_max_active;
}

int submission_parse_priority_check(const char *name)
{
	return strcmp(name, "low") && strcmp(name, "idle") && strcmp(name, "normal") ? -1 : 0;
}

/*
 * The parse thread's CPU priority (--parse-priority): low is SCHED_BATCH
 * and nice 10, idle SCHED_IDLE (only what no other thread wants), normal
 * unchanged.  The thread is the parse's own (http_defer) and ends with it.
 * Best effort: a refusal leaves the priority as it was.
 */
static void parse_priority_apply(void)
{
	const char *p = srv_cfg.parse_priority ? srv_cfg.parse_priority : "low";
	struct sched_param sp = {.sched_priority = 0};

	if (strcmp(p, "low") == 0) {
		pthread_setschedparam(pthread_self(), SCHED_BATCH, &sp);
		setpriority(PRIO_PROCESS, (id_t)gettid(), 10);
	} else if (strcmp(p, "idle") == 0) {
		pthread_setschedparam(pthread_self(), SCHED_IDLE, &sp);
	}
}

static bool parse_slot_take(void)
{
	unsigned n = atomic_load(&parse_active);
	do {
		if (n >= srv_cfg.parse_max_active)
			return false;
	} while (!atomic_compare_exchange_weak(&parse_active, &n, n + 1));
	return true;
}

static void sub_fetch_run(void *arg)
{
	struct sub_fetch *f = arg;

	if (f->mbox) {
		parse_priority_apply();
		f->rc = mbox_parse(f->mbox, strlen(f->mbox), &f->series, f->err, sizeof(f->err));
		atomic_fetch_sub(&parse_active, 1);
		return;
	}
	f->rc = sub_fetch_series(f->url, &f->series, f->err, sizeof(f->err));
	fetch_slot_release();
}

static void sub_fetch_free(void *arg)
{
	struct sub_fetch *f = arg;

	mbox_series_release(&f->series);
	free(f->url);
	free(f->mbox);
	free(f);
}

/* The deferred work's series moves to s (f keeps an empty one); its rc. */
static int sub_fetch_take(struct http_request *req, struct sub_new *s, char *err, size_t errlen)
{
	struct sub_fetch *f = req->deferred;

	snprintf(err, errlen, "%s", f->err);
	mbox_series_release(&s->series);
	s->series = f->series;
	mbox_series_init(&f->series);
	return f->rc;
}

enum handler_rc api_submission_create(struct http_request *req)
{
	struct sub_new s;
	json_t *doc = NULL, *git = NULL, *suites = NULL;
	const char *mbox = NULL;
	json_error_t jerr;
	char err[512];
	enum handler_rc rc;
	int dbrc, nsrc;

	memset(&s, 0, sizeof(s));
	mbox_series_init(&s.series);
	doc = http_body_json(req);
	if (!doc) {
		rc = HANDLER_HANDLED;
		goto out;
	}
	if (json_unpack_ex(doc, &jerr, JSON_STRICT, "{s?s, s?s, s?o, s?s, s?o, s?s}", "url", &s.url,
	                   "mbox", &mbox, "git", &git, "tree", &s.tree, "suites", &suites, "notify",
	                   &s.notify) != 0) {
		rc = http_reply_error(req, 400, "invalid", "%s", jerr.text);
		goto out;
	}
	if (s.notify && strlen(s.notify) > 1024) {
		rc = http_reply_error(req, 400, "invalid", "notify: at most 1024 bytes");
		goto out;
	}
	nsrc = (s.url != NULL) + (mbox != NULL) + (git != NULL);
	if (nsrc != 1) {
		rc = http_reply_error(req, 400, "invalid",
		                      "give exactly one of \"url\", \"mbox\" or \"git\"");
		goto out;
	}
	if (suites) {
		size_t i;
		json_t *v;

		if (!json_is_array(suites) || json_array_size(suites) == 0 ||
		    json_array_size(suites) > MAX_SUITES) {
			rc = http_reply_error(req, 400, "invalid",
			                      "suites: expected an array of 1 to %d names",
			                      MAX_SUITES);
			goto out;
		}
		json_array_foreach(suites, i, v)
		{
			if (!json_is_string(v) || !sub_name_ok(json_string_value(v), 32)) {
				rc = http_reply_error(req, 400, "invalid",
				                      "suites[%zu]: expected a name of a-z, 0-9, "
				                      "'-' or '_'",
				                      i);
				goto out;
			}
			s.suites[s.nsuites++] = json_string_value(v);
		}
	} else {
		s.suites[s.nsuites++] = "quick";
	}
	if (s.tree && !api_tree_name_ok(s.tree)) {
		rc = http_reply_error(req, 400, "invalid", "tree: %s", API_TREE_NAME_RULE);
		goto out;
	}
	if (git) {
		s.source = "git";
		if (json_unpack_ex(git, &jerr, JSON_STRICT, "{s:s, s:s, s?s}", "url", &s.git_url,
		                   "ref", &s.git_ref, "base", &s.git_base) != 0) {
			rc = http_reply_error(req, 400, "invalid", "git: %s", jerr.text);
			goto out;
		}
		if (url_check(s.git_url, URL_HTTP | URL_GIT | URL_SSH, err, sizeof(err)) != 0) {
			rc = http_reply_error(req, 400, "bad-url", "git.url: %s", err);
			goto out;
		}
		if (!api_git_ref_ok(s.git_ref) || (s.git_base && !api_git_ref_ok(s.git_base))) {
			rc = http_reply_error(req, 400, "invalid",
			                      "git.ref and git.base must be git revisions");
			goto out;
		}
	} else if (s.url) {
		s.source = "url";
		if (url_check(s.url, URL_HTTP, err, sizeof(err)) != 0) {
			rc = http_reply_error(req, 400, "bad-url", "url: %s", err);
			goto out;
		}
		/* first call: fetch on a thread of its own; the second takes its result */
		if (!req->deferred) {
			struct sub_fetch *f;

			if (!fetch_slot_take()) {
				rc = http_reply_error(req, 503, "busy",
				                      "%u URL fetches are running, the most at "
				                      "once; try again later",
				                      srv_cfg.fetch_max_active);
				goto out;
			}
			f = calloc(1, sizeof(*f));
			if (!f || !(f->url = strdup(s.url))) {
				free(f);
				fetch_slot_release();
				rc = http_reply_error(req, 500, "internal", "out of memory");
				goto out;
			}
			mbox_series_init(&f->series);
			rc = http_defer(req, sub_fetch_run, f, sub_fetch_free);
			if (!req->suspended)
				fetch_slot_release(); /* the work never started */
			goto out;
		}
		dbrc = sub_fetch_take(req, &s, err, sizeof(err));
		if (dbrc != FETCH_OK) {
			rc = http_reply_error(req, 422,
			                      dbrc == FETCH_REFUSED  ? "fetch-refused"
			                      : dbrc == FETCH_FAILED ? "fetch-failed"
			                                             : "not-a-patch",
			                      "%s", err);
			goto out;
		}
	} else {
		s.source = "mbox";
		/* first call: parse on a thread of its own; the second takes its result */
		if (!req->deferred) {
			struct sub_fetch *f;

			if (!parse_slot_take()) {
				rc =
				    http_reply_error(req, 503, "busy",
				                     "%u mboxes are being parsed, the most at once "
				                     "(--parse-max-active); try again later",
				                     srv_cfg.parse_max_active);
				goto out;
			}
			f = calloc(1, sizeof(*f));
			if (!f || !(f->mbox = strdup(mbox))) {
				free(f);
				atomic_fetch_sub(&parse_active, 1);
				rc = http_reply_error(req, 500, "internal", "out of memory");
				goto out;
			}
			mbox_series_init(&f->series);
			rc = http_defer(req, sub_fetch_run, f, sub_fetch_free);
			if (!req->suspended)
				atomic_fetch_sub(&parse_active, 1); /* the work never started */
			goto out;
		}
		int prc = sub_fetch_take(req, &s, err, sizeof(err));
		if (prc != 0) {
			rc = http_reply_error(req, prc == MBOX_TOO_LARGE ? 413 : 422,
			                      prc == MBOX_TOO_LARGE ? "too-large" : "not-a-patch",
			                      "%s", err);
			goto out;
		}
	}

	if (s.notify && *s.notify && !sub_notify_ok(&s.series, s.notify, err, sizeof(err))) {
		int trusted = sub_trusted(req);
		if (trusted < 0) {
			rc = api_reply_db_error(req, "cannot check the token");
			goto out;
		}
		if (!trusted) {
			rc = http_reply_error(req, 422, "notify-refused", "%s", err);
			goto out;
		}
	}
	dbrc = submission_store(&s);
	if (dbrc == DB_ABORT) {
		rc = http_reply_error(req, 422, "invalid", "%s", s.err);
		goto out;
	}
	if (dbrc != DB_OK) {
		rc = api_reply_db_error(req, "cannot store the submission");
		goto out;
	}
	{
		char url[64];

		snprintf(url, sizeof(url), "/api/v1/submissions/%lld", s.id);
		rc = http_reply_json(req, 202,
		                     json_pack("{s:I, s:s, s:s, s:I, s:O, s:s, s:s?}", "id",
		                               (json_int_t)s.id, "state", "queued", "source",
		                               s.source, "patches", (json_int_t)s.series.npatches,
		                               "jobs", s.jobs, "url", url, "subject",
		                               s.series.cover      ? s.series.cover->subject
		                               : s.series.npatches ? s.series.patches[0].subject
		                                                   : NULL));
	}
out:
	json_decref(s.jobs);
	json_decref(doc);
	mbox_series_release(&s.series);
	return rc;
}

static bool sub_state_ok(const char *s)
{
	return !strcmp(s, "queued") || !strcmp(s, "running") || !strcmp(s, "done") ||
	       !strcmp(s, "failed");
}

enum handler_rc api_submission_list(struct http_request *req)
{
	const char *state = http_query(req, "state");
	const char *limit = http_query(req, "limit");
	char lim[16] = "100";
	const char *p[2];

	if (state && !sub_state_ok(state))
		return http_reply_error(req, 400, "invalid",
		                        "state: one of queued, running, done, failed");
	if (limit && !api_query_int(limit, 1000, lim, sizeof(lim)))
		return http_reply_error(req, 400, "invalid", "limit: 1 to 1000");
	p[0] = state;
	p[1] = lim;
	return api_reply_sql(
	    req,
	    "SELECT json_build_object('submissions', coalesce(json_agg(x ORDER BY x.id DESC), "
	    "'[]')) FROM (SELECT s.id, s.state, s.source, s.subject, s.verdict, s.reason, "
	    "url_public(s.url) AS url, "
	    "s.suites, s.created, s.updated,"
	    " (SELECT author FROM patches WHERE submission_id = s.id ORDER BY seq = 0, seq "
	    "  LIMIT 1) AS author,"
	    " (SELECT count(*) FROM patches WHERE submission_id = s.id AND NOT is_cover) AS "
	    "  patches,"
	    " (SELECT coalesce(sum(rounds_wanted), 0) FROM jobs WHERE submission_id = s.id) AS "
	    "  rounds,"
	    " (SELECT count(*) FROM (SELECT r.job_id, r.round FROM results r JOIN jobs j ON "
	    "  j.id = r.job_id WHERE j.submission_id = s.id AND r.variant IN ('base', 'patched')"
	    "  GROUP BY r.job_id, r.round HAVING count(DISTINCT r.variant) = 2) z) AS "
	    "  rounds_complete"
	    " FROM submissions s WHERE ($1::text IS NULL OR s.state = $1) "
	    "ORDER BY s.id DESC LIMIT $2::int) x",
	    2, p, "submissions");
}

/*
 * A submission's page embeds the newest SUB_VERSIONS_EMBEDDED versions of its
 * series, and its own version when it is older (marked current, as on every
 * page): a series posted thousands of times would make every page megabytes
 * (and each connection's libpq buffer with it).  The rest: .../versions.
 */
#define SUB_VERSIONS_EMBEDDED "20"
/* one version (v, a row of submissions) with its patches' subjects and trailer counts;
 * current: it is the submission asked for (s) */
#define SUB_VERSION_JSON                                                                           \
	"json_build_object('id', v.id, 'version', v.version, 'state', v.state, 'verdict', "        \
	"v.verdict, 'subject', v.subject, 'created', v.created, 'patches', (SELECT "               \
	"coalesce(json_agg(json_build_object('seq', vp.seq, 'subject', vp.subject, "               \
	"'message_id', vp.message_id, 'trailers', (SELECT count(*) FROM mail_trailers t WHERE "    \
	"t.target = vp.message_id)) ORDER BY vp.seq), '[]') FROM patches vp WHERE "                \
	"vp.submission_id = v.id), 'current', v.id = s.id)"

enum handler_rc api_submission_get(struct http_request *req, long long id)
{
	return api_reply_sql_id(
	    req,
	    "SELECT json_build_object("
	    " 'id', s.id, 'state', s.state, 'source', s.source, 'url', url_public(s.url),"
	    " 'git', CASE WHEN s.git_url IS NULL THEN NULL ELSE json_build_object('url', "
	    "   url_public(s.git_url), 'ref', s.git_ref, 'base', s.git_base) END,"
	    " 'tree', (SELECT json_build_object('name', t.name, 'url', url_public(t.url), "
	    "   'branch', t.branch, "
	    "   'kind', t.kind) FROM trees t WHERE t.id = s.tree_id),"
	    " 'suites', s.suites, 'notify', s.notify, 'subject', s.subject,"
	    " 'message_id', s.reply_to_msgid, 'version', s.version, 'previous_id', s.previous_id,"
	    " 'verdict', s.verdict, 'reason', s.reason, 'created', s.created, 'updated', s.updated,"
	    " 'patches', (SELECT coalesce(json_agg(json_build_object('seq', seq, 'total', total,"
	    "   'cover', is_cover, 'message_id', message_id, 'in_reply_to', in_reply_to,"
	    "   'author', author, 'subject', subject, 'date', date, 'body', body, 'diff', diff)"
	    "   ORDER BY seq), '[]') FROM patches WHERE submission_id = s.id),"
	    " 'jobs', (SELECT coalesce(json_agg(json_build_object('id', j.id, 'suite', j.suite,"
	    "   'machine_class', j.machine_class, 'state', j.state, 'rounds', j.rounds_wanted,"
	    "   'rounds_complete', (SELECT count(*) FROM (SELECT round FROM results r WHERE "
	    "     r.job_id = j.id AND variant IN ('base', 'patched') GROUP BY round "
	    "     HAVING count(DISTINCT variant) = 2) z),"
	    "   'attempts', j.attempts, 'claimed_by', j.claimed_by, 'lease_expires', "
	    "   j.lease_expires, 'reason', j.reason, 'verdict', j.verdict, 'confirm_from', "
	    "   j.confirm_from, 'max_rounds', j.max_rounds, 'plan', j.plan,"
	    /* what its agent last said it was doing, while it runs */
	    "   'activity', CASE WHEN j.state = 'running' THEN j.activity END, 'activity_at', "
	    "   CASE WHEN j.state = 'running' THEN j.activity_at END,"
	    /* both sides ran one image: the patch changed no code (compare.h) */
	    "   'identical_code', coalesce((SELECT (c.machine->>'identical_code')::boolean "
	    "     FROM comparisons c WHERE c.job_id = j.id ORDER BY c.id DESC LIMIT 1), false),"
	    "   'image', (SELECT c.machine->>'image' FROM comparisons c WHERE c.job_id = j.id "
	    "     ORDER BY c.id DESC LIMIT 1)) ORDER BY j.id), "
	    "   '[]')"
	    "   FROM jobs j WHERE j.submission_id = s.id),"
	    " 'verdicts', (SELECT coalesce(json_agg(json_build_object('job', c.job_id, "
	    "   'suite', c.suite, 'final', c.final, 'workload', v.workload, 'lock', v.lock, "
	    "   'metric', v.metric, 'unit', v.unit, 'params', v.params_key, 'users', v.users,"
	    "   'better', CASE WHEN v.higher_better THEN 'higher' ELSE 'lower' END,"
	    "   'base', json_build_object('n', v.base_n, 'mean', v.base_mean, 'stddev', "
	    "     v.base_stddev),"
	    "   'patched', json_build_object('n', v.patched_n, 'mean', v.patched_mean, "
	    "     'stddev', v.patched_stddev),"
	    "   'change', v.change, 'change_lo', v.change_lo, 'change_hi', v.change_hi,"
	    "   'margin', v.margin, 'moved', v.moved, 'p', v.p, 'q', v.q, 'verdict', v.verdict,"
	    "   'significant', v.significant, 'control', v.control, 'pairs', v.pairs,"
	    /*
	     * what a row its machine cannot resolve can resolve at the job's most
	     * rounds: its plan's (plan.h; a plan before resolution_at_max: the
	     * MDE), else the job's own rounds' (plan_mark_futile)
	     */
	    "   'unresolvable', coalesce((SELECT coalesce((x->>'resolution_at_max')::float8, "
	    "     (x->>'mde_at_max')::float8) FROM "
	    "     jsonb_array_elements(j.plan->'rows') x WHERE x->>'resolvable' = 'false' AND "
	    "     x->>'workload' = v.workload AND x->>'lock' = v.lock AND x->>'params' = "
	    "     v.params_key AND x->>'metric' = v.metric LIMIT 1), v.unresolvable))"
	    "   ORDER BY c.job_id, v.idx), '[]') FROM comparisons c JOIN verdicts v ON "
	    "   v.comparison_id = c.id JOIN jobs j ON j.id = c.job_id WHERE j.submission_id = "
	    "   s.id),"
	    " 'lockups', (SELECT coalesce(json_agg(json_build_object('job', l.job_id, "
	    "   'variant', l.variant, 'round', l.round, 'workload', l.workload, 'lock', l.lock,"
	    "   'params', l.params_key, 'kind', l.kind, 'message', l.message, 'stacks', "
	    "   l.stacks) ORDER BY l.id), '[]') FROM lockups l JOIN jobs j ON j.id = l.job_id "
	    "   WHERE j.submission_id = s.id),"
	    " 'mails', (SELECT coalesce(json_agg(json_build_object('id', o.id, 'kind', o.kind, "
	    "   'state', o.state, 'message_id', o.message_id, 'recipients', o.recipients, "
	    "   'subject', o.subject, 'attempts', o.attempts, 'next_attempt', o.next_attempt, "
	    "   'last_error', o.last_error, 'created', o.created, 'sent', o.sent) ORDER BY o.id), "
	    "   '[]') FROM outbox o WHERE o.submission_id = s.id),"
	    /* trailers given on the list in replies to its mails (seq 0: the whole series) */
	    " 'trailers', (SELECT coalesce(json_agg(json_build_object('seq', p.seq, 'kind', "
	    "   t.kind, 'who', t.who, 'from', t.sender, 'reply_id', t.reply_id, 'received', "
	    "   t.received) ORDER BY p.seq, t.received, t.kind, t.who), '[]') FROM patches p "
	    "   JOIN mail_trailers t ON t.target = p.message_id WHERE p.submission_id = s.id),"
	    /* the newest versions of the series and its own (all of them: .../versions, paged) */
	    " 'versions_total', (SELECT count(*) FROM submissions v WHERE v.mail_series = "
	    "   s.mail_series),"
	    " 'versions', (SELECT coalesce(json_agg(" SUB_VERSION_JSON " ORDER BY v.version DESC,"
	    "   v.id DESC), '[]') FROM submissions v WHERE v.mail_series = s.mail_series AND "
	    "   (v.id = s.id OR v.id IN (SELECT n.id FROM submissions n WHERE n.mail_series = "
	    "   s.mail_series ORDER BY n.version DESC, n.id DESC LIMIT " SUB_VERSIONS_EMBEDDED ")))"
	    ") FROM submissions s WHERE s.id = $1",
	    id, "submission");
}

enum handler_rc api_submission_versions(struct http_request *req, long long id)
{
	const char *limit = http_query(req, "limit");
	const char *before = http_query(req, "before");
	char idbuf[24], lim[24] = SUB_VERSIONS_EMBEDDED, beforebuf[24];
	const char *p[3] = {idbuf, lim, NULL};
	PGresult *res;
	enum handler_rc rc;

	if (limit && !api_query_int(limit, 100, lim, sizeof(lim)))
		return http_reply_error(req, 400, "invalid", "limit: 1 to 100");
	if (before && !api_query_int(before, LLONG_MAX, beforebuf, sizeof(beforebuf)))
		return http_reply_error(req, 400, "invalid",
		                        "before: the id of a version of this series");
	snprintf(idbuf, sizeof(idbuf), "%lld", id);
	p[2] = before ? beforebuf : NULL;
	/* one more row than the page tells whether older versions are left */
	res = db_read(
	    "SELECT s.id, CASE WHEN $3::bigint IS NOT NULL AND b.id IS NULL THEN NULL ELSE "
	    " json_build_object('submission', s.id, 'total', (SELECT count(*) FROM submissions c "
	    " WHERE c.mail_series = s.mail_series), 'versions', coalesce(p.list, '[]'), "
	    " 'next_before', CASE WHEN p.more THEN p.oldest END) END"
	    " FROM submissions s LEFT JOIN submissions b ON b.id = $3::bigint AND b.mail_series = "
	    " s.mail_series LEFT JOIN LATERAL (SELECT json_agg(" SUB_VERSION_JSON
	    " ORDER BY v.version DESC, v.id DESC) FILTER (WHERE v.rn <= $2::int) AS list,"
	    " count(*) > $2::int AS more, (array_agg(v.id ORDER BY v.version, v.id) FILTER (WHERE"
	    " v.rn <= $2::int))[1] AS oldest FROM (SELECT x.*, row_number() OVER (ORDER BY "
	    " x.version DESC, x.id DESC) AS rn FROM submissions x WHERE x.mail_series = "
	    " s.mail_series AND (b.id IS NULL OR (x.version, x.id) < (b.version, b.id)) ORDER BY"
	    " x.version DESC, x.id DESC LIMIT $2::int + 1) v) p ON true WHERE s.id = $1",
	    3, p);
	if (!res)
		return api_reply_db_error(req, "cannot read the database");
	if (PQntuples(res) != 1)
		rc = http_reply_error(req, 404, "not-found", "no such submission");
	else if (PQgetisnull(res, 0, 1))
		rc = http_reply_error(req, 400, "invalid",
		                      "before: %s is not the id of a version of this series",
		                      beforebuf);
	else
		rc = http_reply(req, 200, "application/json", PQgetvalue(res, 0, 1),
		                (size_t)PQgetlength(res, 0, 1));
	PQclear(res);
	return rc;
}
