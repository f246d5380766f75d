/*
 * outbox.c - the SMTP sender (outbox.h): one thread, one libcurl easy
 * handle, one database connection; every state change is one statement.
 */
#include "outbox.h"

#include <curl/curl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api.h"
#include "auth.h"
#include "config.h"
#include "db.h"
#include "mail.h"
#include "metrics.h"

bool outbox_sending(void)
{
	return srv_cfg.smtp_url && *srv_cfg.smtp_url && !srv_cfg.mail_dry_run;
}

/* A claimed mail on its way: what the read callback needs. */
struct outbox_send {
	PGconn *c;
	const char *id;
	char *data; /* the message with CRLF line ends */
	size_t len, off;
	bool data_started; /* the row says so: the lease was live when the first byte went */
	bool lease_lost;
	bool body_done; /* every byte handed to libcurl: the closing dot follows */
};

/*
 * libcurl asks for message bytes only after the server accepted MAIL FROM,
 * RCPT TO and DATA.  The first call records data_started, under a live
 * lease, before any byte is given; no lease, no bytes (the transfer aborts).
 */
static size_t outbox_read(char *buf, size_t size, size_t n, void *arg)
{
	struct outbox_send *s = arg;
	size_t k = size * n;

	if (!s->data_started) {
		const char *p[1] = {s->id};
		PGresult *res = db_exec(s->c,
		                        "UPDATE outbox SET data_started = true WHERE id = $1 AND "
		                        "state = 'sending' AND lease_expires > now() RETURNING id",
		                        1, p);

		if (!res || PQntuples(res) != 1) {
			PQclear(res);
			s->lease_lost = true;
			return CURL_READFUNC_ABORT;
		}
		PQclear(res);
		s->data_started = true;
	}
	if (k > s->len - s->off)
		k = s->len - s->off;
	memcpy(buf, s->data + s->off, k);
	s->off += k;
	if (k == 0)
		s->body_done = true;
	return k;
}

/* LF -> CRLF (SMTP's line end); new string */
static char *outbox_crlf(const char *msg, size_t *len)
{
	size_t n = strlen(msg), lf = 0, k = 0;
	char *out;

	for (size_t i = 0; i < n; i++)
		lf += msg[i] == '\n' && (i == 0 || msg[i - 1] != '\r');
	out = malloc(n + lf + 1);
	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (msg[i] == '\n' && (i == 0 || msg[i - 1] != '\r'))
			out[k++] = '\r';
		out[k++] = msg[i];
	}
	out[k] = 0;
	*len = k;
	return out;
}

/*
 * The row's outcome: one UPDATE.  state NULL = queued again after a
 * backoff, or failed after the last attempt.  A row that ends sent or
 * failed is counted for /metrics.
 */
static int outbox_mark(PGconn *c, const char *id, const char *state, const char *error,
                       const char *reply)
{
	char retry[16], max[16];
	const char *p[6] = {id, state, error, reply, retry, max};
	PGresult *res;

	snprintf(retry, sizeof(retry), "%d", srv_cfg.mail_retry_seconds);
	snprintf(max, sizeof(max), "%d", srv_cfg.mail_max_attempts);
	/*
	 * 'unknown' may turn into 'sent' (a late answer of ours is still the
	 * truth); nothing else is changed once the lease is gone.
	 */
	res =
	    db_exec(c,
	            "UPDATE outbox SET lease_expires = NULL, last_error = $3, "
	            "smtp_reply = coalesce($4, smtp_reply), "
	            "sent = CASE WHEN $2 = 'sent' THEN now() ELSE sent END, "
	            "state = CASE WHEN $2 IS NOT NULL THEN $2 "
	            "  WHEN attempts >= $6::int THEN 'failed' ELSE 'queued' END, "
	            "next_attempt = now() + make_interval(secs => least(3600, $5::int * "
	            "  power(2, greatest(attempts - 1, 0)))) "
	            "WHERE id = $1 AND (state = 'sending' OR (state = 'unknown' AND $2 = 'sent')) "
	            "RETURNING state",
	            6, p);
	if (!res)
		return db_failure();
	if (PQntuples(res) == 1 && strcmp(PQgetvalue(res, 0, 0), "sent") == 0)
		metrics_mail(true);
	else if (PQntuples(res) == 1 && strcmp(PQgetvalue(res, 0, 0), "failed") == 0)
		metrics_mail(false);
	PQclear(res);
	return DB_OK;
}

/* Send one claimed row; returns 1 when the server accepted it, 0 otherwise, -1 on db failure. */
static int outbox_send_row(PGconn *c, CURL *curl, const char *id, const char *message)
{
	struct outbox_send s = {c, id, NULL, 0, 0, false, false, false};
	struct curl_slist *rcpt = NULL;
	char **to = mail_recipients(message, strlen(message));
	char *from = mail_addr_spec(srv_cfg.mail_from);
	char errbuf[CURL_ERROR_SIZE] = "", why[CURL_ERROR_SIZE + 128], reply[32], angle[1024];
	long code = 0;
	CURLcode cr;
	int rc = 0;

	s.data = outbox_crlf(message, &s.len);
	if (!to || !to[0] || !from || !s.data) {
		rc = outbox_mark(c, id, "failed",
		                 !s.data ? "out of memory" : "no recipient in the message",
		                 NULL) == DB_OK
		         ? 0
		         : -1;
		goto out;
	}
	for (size_t i = 0; to[i]; i++) {
		struct curl_slist *t;

		snprintf(angle, sizeof(angle), "<%s>", to[i]);
		t = curl_slist_append(rcpt, angle);
		if (!t)
			goto out;
		rcpt = t;
	}
	snprintf(angle, sizeof(angle), "<%s>", from);
	curl_easy_reset(curl);
	curl_easy_setopt(curl, CURLOPT_URL, srv_cfg.smtp_url);
	curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "smtp,smtps");
	curl_easy_setopt(curl, CURLOPT_MAIL_FROM, angle);
	curl_easy_setopt(curl, CURLOPT_MAIL_RCPT, rcpt);
#if defined(CURLOPT_MAIL_RCPT_ALLOWFAILS)
	curl_easy_setopt(curl, CURLOPT_MAIL_RCPT_ALLOWFAILS, 1L);
#else
	curl_easy_setopt(curl, CURLOPT_MAIL_RCPT_ALLLOWFAILS,
	                 1L); /* one bad Cc does not stop the rest */
#endif
	curl_easy_setopt(curl, CURLOPT_UPLOAD, 1L);
	curl_easy_setopt(curl, CURLOPT_READFUNCTION, outbox_read);
	curl_easy_setopt(curl, CURLOPT_READDATA, &s);
	curl_easy_setopt(curl, CURLOPT_INFILESIZE_LARGE, (curl_off_t)s.len);
	curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT,
	                 (long)(srv_cfg.smtp_timeout < 10 ? srv_cfg.smtp_timeout : 10));
	curl_easy_setopt(curl, CURLOPT_TIMEOUT, (long)srv_cfg.smtp_timeout);
	if (srv_cfg.smtp_ca_file && *srv_cfg.smtp_ca_file)
		curl_easy_setopt(curl, CURLOPT_CAINFO, srv_cfg.smtp_ca_file);
	if (srv_cfg.smtp_starttls)
		curl_easy_setopt(curl, CURLOPT_USE_SSL, (long)CURLUSESSL_ALL);
	if (srv_cfg.smtp_user && *srv_cfg.smtp_user) {
		curl_easy_setopt(curl, CURLOPT_USERNAME, srv_cfg.smtp_user);
		curl_easy_setopt(curl, CURLOPT_PASSWORD,
		                 srv_cfg.smtp_password ? srv_cfg.smtp_password : "");
	}
	cr = curl_easy_perform(curl);
	curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &code);
	snprintf(reply, sizeof(reply), "%ld", code);
	snprintf(why, sizeof(why), "%s%s%s (SMTP %ld)", curl_easy_strerror(cr), *errbuf ? ": " : "",
	         errbuf, code);
	if (cr == CURLE_OK) {
		/* the server took it: even if this mark fails the row stays un-retried */
		rc = outbox_mark(c, id, "sent", NULL, reply) == DB_OK ? 1 : -1;
	} else if (s.lease_lost) {
		rc = 0; /* someone else owns the row now; nothing went out */
	} else if (!s.body_done) {
		/*
		 * No closing dot was sent: the server delivers nothing.  A 5xx
		 * to MAIL, RCPT or DATA refuses this mail for good; a refused
		 * or missing login (530) is our configuration, so the mail
		 * waits for a fix.
		 */
		bool refused = code >= 500 && code < 600 && code != 530 && cr != CURLE_LOGIN_DENIED;

		rc = outbox_mark(c, id, refused ? "failed" : NULL, why, reply) == DB_OK ? 0 : -1;
	} else if (code >= 400 && code < 600 && code != 354) {
		/* the server answered the message itself: 4xx try again, 5xx refused */
		rc =
		    outbox_mark(c, id, code >= 500 ? "failed" : NULL, why, reply) == DB_OK ? 0 : -1;
	} else {
		/* the whole message went and no answer came: maybe delivered */
		rc = outbox_mark(c, id, "unknown", why, reply) == DB_OK ? 0 : -1;
	}
	if (rc == 0)
		fprintf(stderr, "locklab-server: outbox %s: %s\n", id, why);
out:
	curl_slist_free_all(rcpt);
	mail_strv_free(to);
	free(from);
	free(s.data);
	return rc;
}

/* The calling thread's easy handle, reused across mails; the sender thread cleans it up. */
static _Thread_local CURL *outbox_curl;

int outbox_run_once(PGconn *c)
{
	CURL *curl;
	char lease[16];
	const char *p[1] = {lease};
	int sent = 0;
	PGresult *res;

	if (!outbox_curl && !(outbox_curl = curl_easy_init()))
		return -1;
	curl = outbox_curl;
	/* a sender that died: before the first byte, queue again; after, maybe delivered */
	res = db_exec(
	    c,
	    "UPDATE outbox SET lease_expires = NULL, next_attempt = now(), "
	    "state = CASE WHEN data_started THEN 'unknown' ELSE 'queued' END, "
	    "last_error = CASE WHEN data_started THEN 'the sender stopped after the message "
	    "began to go out: it may have been delivered, it is not sent again by itself' "
	    "ELSE 'the sender stopped before the message went out' END "
	    "WHERE state = 'sending' AND lease_expires < now()",
	    0, NULL);
	if (!res)
		return -1;
	PQclear(res);
	snprintf(lease, sizeof(lease), "%d", srv_cfg.smtp_timeout + 30);
	for (;;) {
		int rc;

		res = db_exec(
		    c,
		    "UPDATE outbox o SET state = 'sending', attempts = o.attempts + 1, "
		    "data_started = false, lease_expires = now() + make_interval(secs => "
		    "$1::int) WHERE o.id = (SELECT id FROM outbox WHERE state = 'queued' AND "
		    "next_attempt <= now() ORDER BY next_attempt, id LIMIT 1 FOR UPDATE SKIP "
		    "LOCKED) RETURNING o.id, o.message",
		    1, p);
		if (!res)
			return -1;
		if (PQntuples(res) != 1) {
			PQclear(res);
			return sent;
		}
		rc = outbox_send_row(c, curl, PQgetvalue(res, 0, 0), PQgetvalue(res, 0, 1));
		PQclear(res);
		if (rc < 0)
			return -1;
		sent += rc;
	}
}

static pthread_t sender;
static bool sender_running;
static atomic_bool sender_stop;
static pthread_mutex_t sender_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t sender_wake = PTHREAD_COND_INITIALIZER;

static void *outbox_sender(void *arg)
{
	while (!atomic_load(&sender_stop)) {
		PGconn *c = db_conn();
		struct timespec until;

		if (c)
			outbox_run_once(c);
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += srv_cfg.mail_poll_ms / 1000;
		until.tv_nsec += (long)(srv_cfg.mail_poll_ms % 1000) * 1000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		pthread_mutex_lock(&sender_lock);
		if (!atomic_load(&sender_stop))
			pthread_cond_timedwait(&sender_wake, &sender_lock, &until);
		pthread_mutex_unlock(&sender_lock);
	}
	curl_easy_cleanup(outbox_curl);
	outbox_curl = NULL;
	return NULL;
}

int outbox_sender_start(void)
{
	if (!outbox_sending())
		return 0;
	if (pthread_create(&sender, NULL, outbox_sender, NULL) != 0)
		return -1;
	sender_running = true;
	return 0;
}

void outbox_sender_stop(void)
{
	if (!sender_running)
		return;
	pthread_mutex_lock(&sender_lock);
	atomic_store(&sender_stop, true);
	pthread_cond_signal(&sender_wake);
	pthread_mutex_unlock(&sender_lock);
	pthread_join(sender, NULL);
	sender_running = false;
}

static bool outbox_state_ok(const char *s)
{
	static const char *const states[] = {"held", "queued",  "sending",
	                                     "sent", "unknown", "failed"};

	for (size_t i = 0; i < sizeof(states) / sizeof(states[0]); i++)
		if (strcmp(s, states[i]) == 0)
			return true;
	return false;
}

enum handler_rc api_outbox_list(struct http_request *req)
{
	const char *state = http_query(req, "state");
	const char *sub = http_query(req, "submission");
	const char *limit = http_query(req, "limit");
	char subbuf[24] = "", lim[16] = "100";
	const char *p[4];
	char *end;

	if (state && !outbox_state_ok(state))
		return http_reply_error(req, 400, "invalid",
		                        "state: held, queued, sending, sent, unknown or failed");
	if (sub) {
		long long v = strtoll(sub, &end, 10);

		if (!*sub || *end || v < 1)
			return http_reply_error(req, 400, "invalid", "submission: an id");
		snprintf(subbuf, sizeof(subbuf), "%lld", v);
	}
	if (limit) {
		long v = strtol(limit, &end, 10);

		if (!*limit || *end || v < 1 || v > 1000)
			return http_reply_error(req, 400, "invalid", "limit: 1 to 1000");
		snprintf(lim, sizeof(lim), "%ld", v);
	}
	p[0] = state;
	p[1] = sub ? subbuf : NULL;
	p[2] = lim;
	p[3] = outbox_sending() ? "true" : "false";
	return api_reply_sql(
	    req,
	    "SELECT json_build_object('sending', $4::boolean, 'mails', coalesce(json_agg(x ORDER "
	    "BY "
	    "x.id DESC), '[]')) FROM (SELECT id, submission_id, kind, state, message_id, "
	    "recipients, "
	    "subject, in_reply_to, attempts, next_attempt, last_error, smtp_reply, created, sent "
	    "FROM outbox WHERE ($1::text IS NULL OR state = $1) AND ($2::bigint IS NULL OR "
	    "submission_id = $2) ORDER BY id DESC LIMIT $3::int) x",
	    4, p, "outbox");
}

/* The admin token is checked by the router (routes.c). */
enum handler_rc api_outbox_retry(struct http_request *req, long long id)
{
	return api_reply_sql_id(
	    req,
	    "WITH u AS (UPDATE outbox SET state = 'queued', attempts = 0, "
	    "data_started = false, next_attempt = now(), last_error = NULL WHERE "
	    "id = $1 AND state IN ('unknown', 'failed', 'held') RETURNING id, "
	    "state) SELECT json_build_object('id', id, 'state', state) FROM u",
	    id, "unknown, failed or held mail");
}
