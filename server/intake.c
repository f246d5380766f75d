/*
 * intake.c - mail in (intake.h): sources, the mails kept, series submitted.
 */
#include "intake.h"

#include <curl/curl.h>
#include <dirent.h>
#include <errno.h>
#include <glib.h>
#include <jansson.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>

#include "config.h"
#include "db.h"
#include "mbox.h"
#include "metrics.h"
#include "strutil.h"
#include "submissions.h"

struct intake_source {
	const char *name;
	const char *maildir;         /* a Maildir folder, or NULL */
	const char *url;             /* imap://host[:port]/MAILBOX, or NULL */
	const char *user, *password; /* IMAP login */
	const char *ca_file;         /* CA certificates (PEM) the server's must chain to */
	bool starttls;               /* require STARTTLS on imap:// */
	char *base, *mailbox;        /* url split: "imap://host:port/", "MAILBOX" */
};

struct intake_rule {
	const char *list;   /* a list address (To/Cc/List-Post), or NULL */
	const char *prefix; /* a word of the subject's [...] prefix, or NULL */
	const char *tree;
};

static struct {
	json_t *doc; /* owns every string below */
	struct intake_source *sources;
	size_t nsources;
	struct intake_rule *rules;
	size_t nrules;
	const char *default_tree;
	const char *suites[MAX_SUITES];
	size_t nsuites;
	double wait_seconds, poll_seconds;
	size_t max_bytes;
	long max_per_sender; /* patch mails taken per sender per hour */
	long trailer_days;   /* how long a trailer for no known mail is kept */
} icfg;

/* what became of each mail read, and of each series (relaxed: counters) */
enum intake_result {
	IN_TAKEN,
	IN_DUPLICATE,
	IN_IGNORED,
	IN_MALFORMED,
	IN_TRAILERS,
	IN_FLOOD,
	IN_NRESULTS
};
static const char *const result_names[] = {"taken",     "duplicate", "ignored",
                                           "malformed", "trailers",  "flood"};
static atomic_ulong in_mails[IN_NRESULTS], in_submitted, in_given_up, in_source_errors;

/* a mail bomb (flood_full): patch mails per sender this hour, the intake thread's */
static GHashTable *flood_count; /* address -> count (GPOINTER_TO_SIZE) */
static time_t flood_hour;

static pthread_t intake_thread;
static bool intake_running;
static pthread_mutex_t intake_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t intake_wake = PTHREAD_COND_INITIALIZER;
static bool intake_stopping; /* under intake_lock */

static void intake_log(const char *source, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void intake_log(const char *source, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "locklab-server: mail %s: ", source);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* ---- configuration ------------------------------------------------------ */

static int cfg_source(json_t *v, size_t i, struct intake_source *s)
{
	json_error_t jerr;
	const char *env = NULL;
	int tls = 0;

	if (json_unpack_ex(v, &jerr, JSON_STRICT, "{s:s, s?s, s?s, s?s, s?s, s?s, s?b, s?s}",
	                   "name", &s->name, "maildir", &s->maildir, "url", &s->url, "user",
	                   &s->user, "password", &s->password, "password_env", &env, "starttls",
	                   &tls, "ca_file", &s->ca_file)) {
		fprintf(stderr, "locklab-server: mail config: sources[%zu]: %s\n", i, jerr.text);
		return -1;
	}
	s->starttls = tls;
	if (!s->maildir == !s->url) {
		fprintf(stderr,
		        "locklab-server: mail config: sources[%zu]: give one of "
		        "\"maildir\" or \"url\"\n",
		        i);
		return -1;
	}
	if (env)
		s->password = getenv(env);
	if (s->url) {
		const char *p = strstr(s->url, "://"), *slash;

		if ((strncasecmp(s->url, "imap://", 7) && strncasecmp(s->url, "imaps://", 8)) ||
		    !p || !(slash = strchr(p + 3, '/')) || !slash[1]) {
			fprintf(stderr,
			        "locklab-server: mail config: sources[%zu]: url: "
			        "imap://host[:port]/MAILBOX or imaps://...\n",
			        i);
			return -1;
		}
		s->base = g_strndup(s->url, (size_t)(slash + 1 - s->url));
		s->mailbox = g_uri_unescape_string(slash + 1, NULL);
		if (!s->mailbox || strpbrk(s->mailbox, "\"\\\r\n")) {
			fprintf(stderr, "locklab-server: mail config: sources[%zu]: bad mailbox\n",
			        i);
			return -1;
		}
	}
	return 0;
}

static int cfg_read(const char *path)
{
	json_error_t jerr;
	json_t *sources = NULL, *trees = NULL, *suites = NULL, *v;
	double wait = 300, poll = 10;
	json_int_t max_bytes = 0, per_sender = 500, trailer_days = 30;
	size_t i;

	icfg.doc = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
	if (!icfg.doc) {
		fprintf(stderr, "locklab-server: mail config %s: %s (line %d)\n", path, jerr.text,
		        jerr.line);
		return -1;
	}
	if (json_unpack_ex(icfg.doc, &jerr, JSON_STRICT,
	                   "{s:o, s?o, s?s, s?o, s?F, s?F, s?I, s?I, s?I}", "sources", &sources,
	                   "trees", &trees, "default_tree", &icfg.default_tree, "suites", &suites,
	                   "wait_seconds", &wait, "poll_seconds", &poll, "max_bytes", &max_bytes,
	                   "max_per_sender", &per_sender, "trailer_days", &trailer_days) ||
	    !json_is_array(sources) || (trees && !json_is_array(trees)) ||
	    (suites && (!json_is_array(suites) || json_array_size(suites) > MAX_SUITES))) {
		fprintf(stderr, "locklab-server: mail config %s: %s\n", path,
		        *jerr.text ? jerr.text : "sources and trees are arrays, suites at most 16");
		return -1;
	}
	icfg.wait_seconds = wait;
	icfg.poll_seconds = poll > 0.05 ? poll : 0.05;
	icfg.max_bytes = max_bytes > 0 ? (size_t)max_bytes : srv_cfg.fetch_max_bytes;
	icfg.max_per_sender = per_sender > 0 ? (long)per_sender : 500;
	icfg.trailer_days = trailer_days > 0 ? (long)trailer_days : 30;
	icfg.nsources = json_array_size(sources);
	icfg.sources = g_new0(struct intake_source, icfg.nsources ? icfg.nsources : 1);
	json_array_foreach(sources, i, v) if (cfg_source(v, i, &icfg.sources[i])) return -1;
	icfg.nrules = trees ? json_array_size(trees) : 0;
	icfg.rules = g_new0(struct intake_rule, icfg.nrules ? icfg.nrules : 1);
	for (i = 0; i < icfg.nrules; i++) {
		struct intake_rule *r = &icfg.rules[i];

		if (json_unpack_ex(json_array_get(trees, i), &jerr, JSON_STRICT, "{s?s, s?s, s:s}",
		                   "list", &r->list, "prefix", &r->prefix, "tree", &r->tree) ||
		    !r->list == !r->prefix) {
			fprintf(stderr, "locklab-server: mail config: trees[%zu]: %s\n", i,
			        *jerr.text ? jerr.text : "give one of \"list\" or \"prefix\"");
			return -1;
		}
	}
	if (suites) {
		json_array_foreach(suites, i, v)
		{
			if (!json_is_string(v)) {
				fprintf(stderr,
				        "locklab-server: mail config: suites[%zu]: a name\n", i);
				return -1;
			}
			icfg.suites[icfg.nsuites++] = json_string_value(v);
		}
	}
	if (!icfg.nsuites)
		icfg.suites[icfg.nsuites++] = "quick";
	return 0;
}

static void cfg_release(void)
{
	size_t i;

	for (i = 0; i < icfg.nsources; i++) {
		g_free(icfg.sources[i].base);
		g_free(icfg.sources[i].mailbox);
	}
	g_free(icfg.sources);
	g_free(icfg.rules);
	if (flood_count)
		g_hash_table_destroy(flood_count);
	flood_count = NULL;
	json_decref(icfg.doc);
	memset(&icfg, 0, sizeof(icfg));
}

/* ---- one mail ----------------------------------------------------------- */

/*
 * A mail bomb: the patch mails taken from each sender (its address, lower
 * case) in the current hour, in memory (the intake thread's alone).  Past
 * max_per_sender, a sender's patch mails are skipped until the hour ends.
 */

/* The sender's address of "Name <addr>" (or the whole text), lower case; new. */
static char *flood_key(const char *from)
{
	const char *lt = strrchr(from, '<'), *gt = lt ? strchr(lt, '>') : NULL;

	return lt && gt ? g_ascii_strdown(lt + 1, gt - lt - 1) : g_ascii_strdown(from, -1);
}

/* Whether key has had its hour's share; *count is what it had. */
static bool flood_full(const char *key, size_t *count)
{
	time_t now = time(NULL);

	if (!flood_count || now - flood_hour >= 3600) {
		if (flood_count)
			g_hash_table_destroy(flood_count);
		flood_count = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
		flood_hour = now;
	}
	*count = GPOINTER_TO_SIZE(g_hash_table_lookup(flood_count, key));
	return *count >= (size_t)icfg.max_per_sender;
}

static void flood_add(const char *key, size_t count)
{
	g_hash_table_replace(flood_count, g_strdup(key), GSIZE_TO_POINTER(count + 1));
}

/* Trailers a reply may give, as kernel developers write them. */
static const char *const trailer_kinds[] = {"Reviewed-by", "Acked-by", "Tested-by"};

/*
 * The trailers of a reply (m->body: its own lines, not the quoted ones)
 * kept for the mail it answers, whether locklab has that mail yet or not
 * (the series may come later, by mail or by URL); intake_prune drops
 * those that never found their mail.  Returns how many were new, or -1
 * when the database failed.
 */
static int intake_trailers(PGconn *c, const char *source, const struct mbox_mail *m)
{
	char **lines = g_strsplit(m->body ? m->body : "", "\n", -1);
	int kept = 0;

	for (size_t i = 0; lines[i] && kept >= 0; i++) {
		for (size_t k = 0; k < G_N_ELEMENTS(trailer_kinds); k++) {
			size_t n = strlen(trailer_kinds[k]);
			char *who;
			PGresult *res;

			if (g_ascii_strncasecmp(lines[i], trailer_kinds[k], n) ||
			    lines[i][n] != ':')
				continue;
			who = g_strstrip(g_strdup(lines[i] + n + 1));
			if (*who && strchr(who, '@') && strlen(who) <= 300) {
				const char *p[6] = {m->message_id, m->in_reply_to, trailer_kinds[k],
				                    who,           m->from,        source};

				res = db_exec(
				    c,
				    "INSERT INTO mail_trailers (reply_id, target, kind, who, "
				    "sender, source) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT "
				    "DO "
				    "NOTHING",
				    6, p);
				if (!res)
					kept = -1;
				else
					kept += atoi(PQcmdTuples(res));
				PQclear(res);
			}
			g_free(who);
			break;
		}
	}
	g_strfreev(lines);
	return kept;
}

/*
 * Keep raw (from source) when it is a patch mail: IN_TAKEN, IN_DUPLICATE,
 * IN_IGNORED or IN_MALFORMED (with the reason logged; the caller counts),
 * or -1 when the database failed (the caller reads the mail again later).
 */
static int intake_take(const char *source, const char *what, const char *raw, size_t len)
{
	struct mbox_mail m = {0};
	char why[256] = "", *b64 = NULL, *sender = NULL;
	size_t sent_before = 0;
	PGconn *c;
	PGresult *res;
	int rc = IN_MALFORMED;

	if (len > icfg.max_bytes) {
		/*
		 * raw is not read: the Maildir reader passes "" with the file's
		 * size, the IMAP reader SIZE_MAX (its fetch stopped at max_bytes)
		 */
		if (len == SIZE_MAX)
			snprintf(why, sizeof(why), "more than the %zu bytes allowed",
			         icfg.max_bytes);
		else
			snprintf(why, sizeof(why), "%zu bytes, more than the %zu allowed", len,
			         icfg.max_bytes);
		goto out;
	}
	if (memchr(raw, '\0', len)) {
		snprintf(why, sizeof(why), "it holds NUL bytes");
		goto out;
	}
	if (mbox_mail_parse(raw, len, &m, why, sizeof(why)) != 0)
		goto out;
	if (m.is_reply || (!m.patch_prefix && !m.diff && !m.pull_url)) {
		/*
		 * replies and other mail are left alone, but for the trailers they
		 * give; a mail with a diff is a patch whatever its subject says
		 * ("[net,v2,1/2]", "MAINTAINERS: ...", none), as the API takes it
		 */
		int kept = 0;

		if (m.message_id && m.in_reply_to) {
			c = db_conn();
			kept = c ? intake_trailers(c, source, &m) : -1;
		}
		rc = kept < 0 ? -1 : kept > 0 ? IN_TRAILERS : IN_IGNORED;
		goto out;
	}
	if (!m.message_id) {
		snprintf(why, sizeof(why), "no Message-ID");
		goto out;
	}
	if (!m.diff && !m.pull_url && !(m.numbered && m.index == 0)) {
		snprintf(why, sizeof(why), "a patch without a diff%s%s%s", m.defect ? " (" : "",
		         m.defect ? m.defect : "", m.defect ? ")" : "");
		goto out;
	}
	sender = flood_key(m.from);
	if (flood_full(sender, &sent_before)) {
		/* counted each time, logged at the first and every 1000th */
		size_t skipped = sent_before - (size_t)icfg.max_per_sender;

		rc = IN_FLOOD;
		if (skipped % 1000 == 0)
			intake_log(source,
			           "skipped %s %s: a mail bomb, more than %ld patch mails from %s "
			           "this hour (%zu skipped before)",
			           what, m.message_id, icfg.max_per_sender, sender, skipped);
		flood_add(sender, sent_before);
		goto out;
	}
	c = db_conn();
	if (!c) {
		rc = -1;
		goto out;
	}
	b64 = g_base64_encode((const guchar *)raw, len);
	{
		/* clock_timestamp: mails of one batch keep their arrival order, so
		 * of two copies of a part the later is the one tested */
		const char *p[3] = {m.message_id, source, b64};

		res = db_exec(c,
		              "INSERT INTO mail_messages (message_id, source, raw, arrived) VALUES "
		              "($1, $2, decode($3, 'base64'), clock_timestamp()) ON CONFLICT "
		              "(message_id) DO NOTHING",
		              3, p);
	}
	if (!res) {
		rc = -1;
		goto out;
	}
	rc = atoi(PQcmdTuples(res)) == 1 ? IN_TAKEN : IN_DUPLICATE;
	PQclear(res);
	if (rc == IN_TAKEN)
		flood_add(sender, sent_before);
out:
	if (rc == IN_MALFORMED)
		intake_log(source, "skipped %s%s%s: %s", what, m.message_id ? " " : "",
		           m.message_id ? m.message_id : "", why);
	g_free(b64);
	g_free(sender);
	mbox_mail_release(&m);
	return rc;
}

/* ---- Maildir ------------------------------------------------------------ */

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Mails of new/ taken in one transaction before any is moved to cur/. */
#define MAILDIR_BATCH 500

/* new/NAME -> cur/NAME:2,S (the Seen flag) */
static void maildir_seen(const struct intake_source *s, const char *newdir, const char *name)
{
	char *path = g_build_filename(newdir, name, NULL);
	char *dest =
	    g_strdup_printf("%s/cur/%s%s", s->maildir, name, strstr(name, ":2,") ? "" : ":2,S");

	if (rename(path, dest) != 0)
		intake_log(s->name, "cannot move %s to cur/: %s", name, strerror(errno));
	g_free(dest);
	g_free(path);
}

/*
 * The files of new/ in arrival order, MAILDIR_BATCH at a time: stored in one
 * transaction (one commit, not one per mail), then moved to cur/.  A crash
 * before the move reads them again: their Message-IDs make them duplicates.
 */
static void maildir_poll(const struct intake_source *s)
{
	char *newdir = g_build_filename(s->maildir, "new", NULL);
	GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
	DIR *d = opendir(newdir);
	struct dirent *e;
	PGconn *c;
	size_t i, start, counts[IN_NRESULTS];

	if (!d) {
		intake_log(s->name, "cannot read %s: %s", newdir, strerror(errno));
		atomic_fetch_add_explicit(&in_source_errors, 1, memory_order_relaxed);
		goto out;
	}
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			g_ptr_array_add(names, g_strdup(e->d_name));
	closedir(d);
	/* Maildir names begin with the delivery time: this is arrival order */
	qsort(names->pdata, names->len, sizeof(char *), name_cmp);
	for (start = 0; start < names->len; start += MAILDIR_BATCH) {
		size_t end = MIN(names->len, start + MAILDIR_BATCH);
		bool ok = (c = db_conn()) && db_run(c, "BEGIN", 0, NULL) == DB_OK;

		memset(counts, 0, sizeof(counts));
		for (i = start; ok && i < end; i++) {
			const char *name = g_ptr_array_index(names, i);
			char *path = g_build_filename(newdir, name, NULL);
			struct strutil_buf text = STRUTIL_BUF_INIT;
			struct stat st;
			int rc = IN_MALFORMED;

			/* too big: skipped (and logged) by its size, never read */
			if (stat(path, &st) == 0 && (size_t)st.st_size > icfg.max_bytes)
				rc = intake_take(s->name, name, "", (size_t)st.st_size);
			else if (strutil_read_file(path, &text) == 0)
				rc = intake_take(s->name, name, text.buf, text.len);
			strutil_buf_release(&text);
			g_free(path);
			if (rc < 0)
				ok = false;
			else
				counts[rc]++;
		}
		if (!ok || db_run(c, "COMMIT", 0, NULL) != DB_OK) {
			/* the database: all of them again next time */
			if (c)
				db_run(c, "ROLLBACK", 0, NULL);
			break;
		}
		for (i = 0; i < IN_NRESULTS; i++)
			atomic_fetch_add_explicit(&in_mails[i], counts[i], memory_order_relaxed);
		for (i = start; i < end; i++)
			maildir_seen(s, newdir, g_ptr_array_index(names, i));
	}
out:
	g_ptr_array_free(names, TRUE);
	g_free(newdir);
}

/* ---- IMAP --------------------------------------------------------------- */

/*
 * One IMAP request: url, and a custom command when cmd is not NULL.  The
 * reply (untagged lines of a command, else the message) goes into b.
 * Returns the CURLcode; err holds libcurl's message.
 */
static CURLcode imap_do(CURL *h, const struct intake_source *s, const char *url, const char *cmd,
                        struct strutil_capped *b, char *err)
{
	curl_easy_reset(h);
	curl_easy_setopt(h, CURLOPT_URL, url);
	if (cmd)
		curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, cmd);
	if (s->user)
		curl_easy_setopt(h, CURLOPT_USERNAME, s->user);
	if (s->password)
		curl_easy_setopt(h, CURLOPT_PASSWORD, s->password);
	if (s->starttls)
		curl_easy_setopt(h, CURLOPT_USE_SSL, (long)CURLUSESSL_ALL);
	if (s->ca_file)
		curl_easy_setopt(h, CURLOPT_CAINFO, s->ca_file);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "imap,imaps");
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 10L);
	curl_easy_setopt(h, CURLOPT_TIMEOUT, srv_cfg.fetch_timeout);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, err);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, strutil_capped_write);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, b);
	err[0] = '\0';
	strutil_buf_truncate(&b->buf, 0);
	b->too_big = false;
	return curl_easy_perform(h);
}

/* The number after "WORD " in text, or -1. */
static long long imap_number(const char *text, const char *word)
{
	const char *p = strstr(text, word);

	return p ? strtoll(p + strlen(word), NULL, 10) : -1;
}

/* mail_seen of a source: uidvalidity and uid, 0 and 0 when none; -1 on error. */
static int imap_seen(PGconn *c, const char *source, long long *validity, long long *uid)
{
	const char *p[1] = {source};
	PGresult *res =
	    db_exec(c, "SELECT uidvalidity, uid FROM mail_seen WHERE source = $1", 1, p);

	if (!res)
		return -1;
	*validity = PQntuples(res) ? strtoll(PQgetvalue(res, 0, 0), NULL, 10) : 0;
	*uid = PQntuples(res) ? strtoll(PQgetvalue(res, 0, 1), NULL, 10) : 0;
	PQclear(res);
	return 0;
}

static int imap_mark(PGconn *c, const char *source, long long validity, long long uid)
{
	char v[24], u[24];
	const char *p[3] = {source, v, u};

	snprintf(v, sizeof(v), "%lld", validity);
	snprintf(u, sizeof(u), "%lld", uid);
	return db_run(c,
	              "INSERT INTO mail_seen (source, uidvalidity, uid) VALUES ($1, $2, $3) "
	              "ON CONFLICT (source) DO UPDATE SET uidvalidity = $2, uid = $3",
	              3, p);
}

/*
 * One poll of an IMAP source, on a handle of its own: a session kept from
 * an earlier poll keeps its mailbox selected and may not see new mail.
 */
static void imap_poll(const struct intake_source *s)
{
	CURL *h = curl_easy_init();
	struct strutil_capped b = {STRUTIL_BUF_INIT, 1 << 20, false};
	char err[CURL_ERROR_SIZE], *cmd = NULL, **words = NULL;
	long long validity, next, seen_validity, seen_uid;
	PGconn *c = db_conn();
	CURLcode cc;
	size_t i;

	if (!h || !c || imap_seen(c, s->name, &seen_validity, &seen_uid) != 0)
		goto out;
	cmd = g_strdup_printf("STATUS \"%s\" (UIDVALIDITY UIDNEXT)", s->mailbox);
	cc = imap_do(h, s, s->base, cmd, &b, err);
	validity = imap_number(strutil_buf_str(&b.buf), "UIDVALIDITY ");
	next = imap_number(strutil_buf_str(&b.buf), "UIDNEXT ");
	if (cc != CURLE_OK || validity < 0 || next < 0) {
		intake_log(s->name, "STATUS %s failed: %s", s->mailbox,
		           cc != CURLE_OK ? (*err ? err : curl_easy_strerror(cc))
		                          : "no UIDVALIDITY");
		atomic_fetch_add_explicit(&in_source_errors, 1, memory_order_relaxed);
		goto out;
	}
	if (validity != seen_validity) {
		if (seen_validity)
			intake_log(s->name,
			           "UIDVALIDITY changed (%lld, was %lld): reading %s again",
			           validity, seen_validity, s->mailbox);
		seen_uid = 0;
	}
	if (next - 1 <= seen_uid)
		goto out; /* nothing new */
	g_free(cmd);
	cmd = g_strdup_printf("UID SEARCH UID %lld:*", seen_uid + 1);
	cc = imap_do(h, s, s->url, cmd, &b, err);
	if (cc != CURLE_OK) {
		intake_log(s->name, "UID SEARCH failed: %s", *err ? err : curl_easy_strerror(cc));
		atomic_fetch_add_explicit(&in_source_errors, 1, memory_order_relaxed);
		goto out;
	}
	{
		const char *p = strstr(strutil_buf_str(&b.buf), "* SEARCH");

		words = g_strsplit_set(p ? p + 8 : "", " \r\n", -1);
	}
	for (i = 0; words[i]; i++) {
		long long uid = strtoll(words[i], NULL, 10);
		char *one, what[48];
		int rc;

		if (uid <= seen_uid)
			continue;
		one = g_strdup_printf("%s;UID=%lld", s->url, uid);
		b.max = icfg.max_bytes;
		cc = imap_do(h, s, one, NULL, &b, err);
		g_free(one);
		snprintf(what, sizeof(what), "UID %lld", uid);
		if (cc != CURLE_OK && !b.too_big) {
			intake_log(s->name, "cannot fetch %s: %s", what,
			           *err ? err : curl_easy_strerror(cc));
			atomic_fetch_add_explicit(&in_source_errors, 1, memory_order_relaxed);
			break;
		}
		rc = b.too_big ? intake_take(s->name, what, "", SIZE_MAX)
		               : intake_take(s->name, what, strutil_buf_str(&b.buf), b.buf.len);
		if (rc < 0 || imap_mark(c, s->name, validity, uid) != DB_OK)
			break;
		atomic_fetch_add_explicit(&in_mails[rc], 1, memory_order_relaxed);
		seen_uid = uid;
	}
out:
	g_strfreev(words);
	g_free(cmd);
	strutil_buf_release(&b.buf);
	if (h)
		curl_easy_cleanup(h);
}

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
		if (s.series.set_aside)
			intake_log("series", "set aside part(s) %s of %s: past its numbering",
			           s.series.set_aside, subject);
		if (s.series.replaced)
			intake_log(
			    "series",
			    "replaced %zu part(s) of %s sent again: the later copy is tested",
			    s.series.replaced, subject);
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
static void intake_assemble(void)
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

/* ---- the thread --------------------------------------------------------- */

/*
 * Trailers older than trailer_days whose mail locklab never got (the rest
 * of the list's review traffic) are dropped: at start, then hourly.
 */
static void intake_prune(void)
{
	static time_t last;
	time_t now = time(NULL);
	char days[24];
	const char *p[1] = {days};
	PGconn *c;
	PGresult *res;

	if (last && now - last < 3600)
		return;
	c = db_conn();
	if (!c)
		return;
	snprintf(days, sizeof(days), "%ld", icfg.trailer_days);
	res = db_exec(c,
	              "DELETE FROM mail_trailers t WHERE received < now() - make_interval(days => "
	              "$1::int) AND NOT EXISTS (SELECT 1 FROM patches p WHERE p.message_id = "
	              "t.target) AND NOT EXISTS (SELECT 1 FROM mail_messages m WHERE "
	              "m.message_id = t.target)",
	              1, p);
	if (res) {
		last = now;
		if (atoi(PQcmdTuples(res)) > 0)
			intake_log("trailers",
			           "dropped %s trailer(s) older than %ld days for mail "
			           "locklab never had",
			           PQcmdTuples(res), icfg.trailer_days);
	}
	PQclear(res);
}

static void *intake_main(void *arg)
{
	pthread_mutex_lock(&intake_lock);
	while (!intake_stopping) {
		struct timespec until;
		size_t i;

		pthread_mutex_unlock(&intake_lock);
		for (i = 0; i < icfg.nsources; i++) {
			if (icfg.sources[i].maildir)
				maildir_poll(&icfg.sources[i]);
			else
				imap_poll(&icfg.sources[i]);
		}
		intake_assemble();
		intake_prune();
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += (time_t)icfg.poll_seconds;
		until.tv_nsec +=
		    (long)((icfg.poll_seconds - (double)(time_t)icfg.poll_seconds) * 1e9);
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		pthread_mutex_lock(&intake_lock);
		while (!intake_stopping &&
		       pthread_cond_timedwait(&intake_wake, &intake_lock, &until) != ETIMEDOUT)
			;
	}
	pthread_mutex_unlock(&intake_lock);
	return NULL;
}

int intake_configure(const char *path)
{
	if (cfg_read(path) != 0) {
		cfg_release();
		return -1;
	}
	return 0;
}

int intake_start(void)
{
	intake_stopping = false;
	if (pthread_create(&intake_thread, NULL, intake_main, NULL) != 0) {
		fprintf(stderr, "locklab-server: cannot start the mail intake\n");
		cfg_release();
		return -1;
	}
	intake_running = true;
	fprintf(stderr, "locklab-server: mail intake: %zu source(s), every %.1f s\n", icfg.nsources,
	        icfg.poll_seconds);
	return 0;
}

void intake_stop(void)
{
	if (!intake_running) {
		cfg_release(); /* configured, never started */
		return;
	}
	pthread_mutex_lock(&intake_lock);
	intake_stopping = true;
	pthread_cond_signal(&intake_wake);
	pthread_mutex_unlock(&intake_lock);
	pthread_join(intake_thread, NULL);
	intake_running = false;
	cfg_release();
}

void intake_metrics(FILE *out)
{
	metrics_print_counters(out, "locklab_mail_messages_total",
	                       "Mails the intake read, by what became of them.", "result",
	                       result_names, in_mails, IN_NRESULTS);
	fprintf(out,
	        "# HELP locklab_mail_series_total Series the intake submitted or gave up.\n"
	        "# TYPE locklab_mail_series_total counter\n"
	        "locklab_mail_series_total{result=\"submitted\"} %lu\n"
	        "locklab_mail_series_total{result=\"given-up\"} %lu\n"
	        "# HELP locklab_mail_source_errors_total Failed reads of a mail source.\n"
	        "# TYPE locklab_mail_source_errors_total counter\n"
	        "locklab_mail_source_errors_total %lu\n",
	        atomic_load_explicit(&in_submitted, memory_order_relaxed),
	        atomic_load_explicit(&in_given_up, memory_order_relaxed),
	        atomic_load_explicit(&in_source_errors, memory_order_relaxed));
}
