/*
 * submissions.c - POST /api/v1/submissions: fetch or take the mbox, parse
 * the series off the HTTP threads, check who is notified, and store it
 * (submission_store, submissions_store.c).
 */
#include <ctype.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "api.h"
#include "auth.h"
#include "config.h"
#include "db.h"
#include "fetch.h"
#include "refname.h"
#include "strutil.h"
#include "url.h"
#include <glib.h>

#include "submissions.h"

#define sub_new submission_new

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

static void parse_slot_release(void)
{
	atomic_fetch_sub(&parse_active, 1);
}

/* A slot for the deferred work: a fetch of url, or a parse of the mbox. */
static bool sub_slot_take(bool fetch)
{
	return fetch ? fetch_slot_take() : parse_slot_take();
}

static void sub_slot_release(bool fetch)
{
	if (fetch)
		fetch_slot_release();
	else
		parse_slot_release();
}

static void sub_fetch_free(void *arg)
{
	struct sub_fetch *f = arg;

	mbox_series_release(&f->series);
	free(f->url);
	free(f->mbox);
	free(f);
}

static void sub_fetch_run(void *arg)
{
	struct sub_fetch *f = arg;

	if (f->mbox) {
		parse_priority_apply();
		f->rc = mbox_parse(f->mbox, strlen(f->mbox), &f->series, f->err, sizeof(f->err));
	} else {
		f->rc = sub_fetch_series(f->url, &f->series, f->err, sizeof(f->err));
	}
	sub_slot_release(!f->mbox);
}

/*
 * The first call of a URL (url) or mbox (mbox) submission: the fetch or
 * parse goes to a thread of its own under its slot limit, and the request
 * comes back when it is done.  The handler result.
 */
static enum handler_rc sub_defer(struct http_request *req, const char *url, const char *mbox)
{
	struct sub_fetch *f;
	enum handler_rc rc;

	if (!sub_slot_take(url != NULL)) {
		if (url)
			return http_reply_error(req, 503, "busy",
			                        "%u URL fetches are running, the most at "
			                        "once; try again later",
			                        srv_cfg.fetch_max_active);
		return http_reply_error(req, 503, "busy",
		                        "%u mboxes are being parsed, the most at once "
		                        "(--parse-max-active); try again later",
		                        srv_cfg.parse_max_active);
	}
	f = calloc(1, sizeof(*f));
	if (!f || !(url ? (f->url = strdup(url)) : (f->mbox = strdup(mbox)))) {
		free(f);
		sub_slot_release(url != NULL);
		return http_reply_error(req, 500, "internal", "out of memory");
	}
	mbox_series_init(&f->series);
	rc = http_defer(req, sub_fetch_run, f, sub_fetch_free);
	if (!req->suspended)
		sub_slot_release(url != NULL); /* the work never started */
	return rc;
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

/*
 * The request's suites into s (quick when none): false when they are good,
 * true when a 400 was made (*rc: its handler result).
 */
static bool sub_suites(struct http_request *req, json_t *suites, struct sub_new *s,
                       enum handler_rc *rc)
{
	if (suites) {
		size_t i;
		json_t *v;

		if (!json_is_array(suites) || json_array_size(suites) == 0 ||
		    json_array_size(suites) > MAX_SUITES) {
			*rc = http_reply_error(req, 400, "invalid",
			                       "suites: expected an array of 1 to %d names",
			                       MAX_SUITES);
			return true;
		}
		json_array_foreach(suites, i, v)
		{
			if (!json_is_string(v) || !sub_name_ok(json_string_value(v), 32)) {
				*rc = http_reply_error(req, 400, "invalid",
				                       "suites[%zu]: expected a name of a-z, 0-9, "
				                       "'-' or '_'",
				                       i);
				return true;
			}
			s->suites[s->nsuites++] = json_string_value(v);
		}
	} else {
		s->suites[s->nsuites++] = "quick";
	}
	return false;
}

/*
 * A git submission's url, ref and base into s, checked: false when they are
 * good, true when a 400 was made (*rc: its handler result).
 */
static bool sub_git(struct http_request *req, json_t *git, struct sub_new *s, enum handler_rc *rc)
{
	json_error_t jerr;
	char err[512];

	s->source = "git";
	if (json_unpack_ex(git, &jerr, JSON_STRICT, "{s:s, s:s, s?s}", "url", &s->git_url, "ref",
	                   &s->git_ref, "base", &s->git_base) != 0) {
		*rc = http_reply_error(req, 400, "invalid", "git: %s", jerr.text);
		return true;
	}
	if (url_check(s->git_url, URL_HTTP | URL_GIT | URL_SSH, err, sizeof(err)) != 0) {
		*rc = http_reply_error(req, 400, "bad-url", "git.url: %s", err);
		return true;
	}
	if (!api_git_ref_ok(s->git_ref) || (s->git_base && !api_git_ref_ok(s->git_base))) {
		*rc = http_reply_error(req, 400, "invalid",
		                       "git.ref and git.base must be git revisions");
		return true;
	}
	return false;
}

/*
 * A URL submission: the first call fetches on a thread of its own and
 * returns true (deferred); the second takes the series into s and returns
 * false, or true when an error reply was made (*rc: its handler result).
 */
static bool sub_url(struct http_request *req, struct sub_new *s, enum handler_rc *rc)
{
	char err[512];
	int dbrc;

	s->source = "url";
	if (url_check(s->url, URL_HTTP, err, sizeof(err)) != 0) {
		*rc = http_reply_error(req, 400, "bad-url", "url: %s", err);
		return true;
	}
	/* first call: fetch on a thread of its own; the second takes its result */
	if (!req->deferred) {
		*rc = sub_defer(req, s->url, NULL);
		return true;
	}
	dbrc = sub_fetch_take(req, s, err, sizeof(err));
	if (dbrc != FETCH_OK) {
		*rc = http_reply_error(req, 422,
		                       dbrc == FETCH_REFUSED  ? "fetch-refused"
		                       : dbrc == FETCH_FAILED ? "fetch-failed"
		                                              : "not-a-patch",
		                       "%s", err);
		return true;
	}
	return false;
}

/*
 * An mbox submission: the first call parses on a thread of its own and
 * returns true (deferred); the second takes the series into s and returns
 * false, or true when an error reply was made (*rc: its handler result).
 */
static bool sub_mbox(struct http_request *req, const char *mbox, struct sub_new *s,
                     enum handler_rc *rc)
{
	char err[512];

	s->source = "mbox";
	/* first call: parse on a thread of its own; the second takes its result */
	if (!req->deferred) {
		*rc = sub_defer(req, NULL, mbox);
		return true;
	}
	int prc = sub_fetch_take(req, s, err, sizeof(err));
	if (prc != 0) {
		*rc = http_reply_error(req, prc == MBOX_TOO_LARGE ? 413 : 422,
		                       prc == MBOX_TOO_LARGE ? "too-large" : "not-a-patch", "%s",
		                       err);
		return true;
	}
	return false;
}

/* What of series is not tested, for the 202: [{"seq", "total", "why", "message_id", "subject"}]. */
static json_t *sub_aside_json(const struct mbox_series *series)
{
	json_t *a = json_array();

	for (size_t k = 0; a && k < series->naside; k++) {
		const struct mbox_mail *m = &series->aside[k].mail;

		json_array_append_new(
		    a, json_pack("{s:i, s:i, s:s, s:s?, s:s?}", "seq", m->index, "total", m->total,
		                 "why", series->aside[k].replaced ? "replaced" : "past-numbering",
		                 "message_id", m->message_id, "subject", m->subject));
	}
	return a;
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
	if (sub_suites(req, suites, &s, &rc))
		goto out;
	if (s.tree && !api_tree_name_ok(s.tree)) {
		rc = http_reply_error(req, 400, "invalid", "tree: %s", API_TREE_NAME_RULE);
		goto out;
	}
	if (git     ? sub_git(req, git, &s, &rc)
	    : s.url ? sub_url(req, &s, &rc)
	            : sub_mbox(req, mbox, &s, &rc))
		goto out;

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
		                     json_pack("{s:I, s:s, s:s, s:I, s:O, s:s, s:s?, s:o}", "id",
		                               (json_int_t)s.id, "state", "queued", "source",
		                               s.source, "patches", (json_int_t)s.series.npatches,
		                               "jobs", s.jobs, "url", url, "subject",
		                               s.series.cover      ? s.series.cover->subject
		                               : s.series.npatches ? s.series.patches[0].subject
		                                                   : NULL,
		                               "set_aside", sub_aside_json(&s.series)));
	}
out:
	json_decref(s.jobs);
	json_decref(doc);
	mbox_series_release(&s.series);
	return rc;
}
