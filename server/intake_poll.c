/*
 * intake_poll.c - the mail sources (intake_internal.h): a Maildir's new
 * mails and an IMAP mailbox's unseen ones, each handed to intake_take and
 * marked seen.
 */
#include "intake.h"

#include <curl/curl.h>
#include <dirent.h>
#include <errno.h>
#include <glib.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "config.h"
#include "db.h"
#include "intake_internal.h"
#include "strutil.h"

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
void maildir_poll(const struct intake_source *s)
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
void imap_poll(const struct intake_source *s)
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
