/*
 * intake.c - mail in (intake.h): sources and rules read from the
 * configuration, one mail kept (intake_take), the thread that polls the
 * sources (Maildir and IMAP in intake_poll.c) and submits the series
 * (intake_series.c), and its counters.
 */
#include "intake.h"

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
#include <time.h>

#include "config.h"
#include "db.h"
#include "intake_internal.h"
#include "mbox.h"
#include "metrics.h"

struct intake_config icfg; /* intake_configure writes it before the thread starts */

/* what became of each mail read, and of each series (relaxed: counters) */
static const char *const result_names[] = {"taken",     "duplicate", "ignored",
                                           "malformed", "trailers",  "flood"};
atomic_ulong in_mails[IN_NRESULTS], in_submitted, in_given_up, in_source_errors;

/* a mail bomb (flood_full): patch mails per sender this hour, the intake thread's */
static GHashTable *flood_count; /* address -> count (GPOINTER_TO_SIZE) */
static time_t flood_hour;

static pthread_t intake_thread;
static bool intake_running;
static pthread_mutex_t intake_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t intake_wake = PTHREAD_COND_INITIALIZER;
static bool intake_stopping; /* under intake_lock */

void intake_log(const char *source, const char *fmt, ...)
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
int intake_take(const char *source, const char *what, const char *raw, size_t len)
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
