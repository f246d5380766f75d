/*
 * http.c - libmicrohttpd front end: body accumulation with a hard cap,
 * replies, static files and request counters; routing is the
 * caller's (struct http_app: routes.c in the server).
 */
#include "http.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <microhttpd.h>
#include <netdb.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "conn.h"
#include "metrics.h"

static struct MHD_Daemon *http_daemon;

/* Deferred works running (http_defer); http_stop waits for none. */
static pthread_mutex_t http_defer_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t http_defer_idle = PTHREAD_COND_INITIALIZER;
static unsigned http_defer_running;

struct http_deferred {
	struct http_request *req;
	void (*work)(void *);
};

/* Replies by status code; relaxed: plain counters read by /metrics only. */
static atomic_ulong http_replies[600];

const char *http_header(struct http_request *req, const char *name)
{
	return MHD_lookup_connection_value(req->conn, MHD_HEADER_KIND, name);
}

const char *http_query(struct http_request *req, const char *name)
{
	return MHD_lookup_connection_value(req->conn, MHD_GET_ARGUMENT_KIND, name);
}

const char *http_bearer(struct http_request *req)
{
	const char *h = http_header(req, MHD_HTTP_HEADER_AUTHORIZATION);

	if (!h || strncasecmp(h, "Bearer ", 7) != 0)
		return NULL;
	h += 7;
	while (*h == ' ')
		h++;
	return *h ? h : NULL;
}

static enum handler_rc http_queue(struct http_request *req, unsigned status,
                                  struct MHD_Response *resp, const char *content_type)
{
	enum MHD_Result ret;

	if (!resp)
		return HANDLER_FATAL;
	if (content_type)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
	MHD_add_response_header(resp, "Cache-Control", "no-store");
	/* every 503 is a passing state (database, load): say when to come back */
	if (status == 503)
		MHD_add_response_header(resp, "Retry-After", HTTP_RETRY_AFTER);
	if (status == 405 && req->allow)
		MHD_add_response_header(resp, "Allow", req->allow);
	if (req->close)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
	ret = MHD_queue_response(req->conn, status, resp);
	MHD_destroy_response(resp);
	if (ret != MHD_YES) {
		req->refused = true;
		return HANDLER_FATAL;
	}
	req->replied = true;
	req->status = (int)status;
	return HANDLER_OK;
}

enum handler_rc http_reply(struct http_request *req, unsigned status, const char *content_type,
                           const char *body, size_t len)
{
	struct MHD_Response *resp;

	resp = MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
	return http_queue(req, status, resp, content_type);
}

enum handler_rc http_reply_json(struct http_request *req, unsigned status, json_t *doc)
{
	char *text;
	enum handler_rc rc;

	if (!doc)
		return http_reply_error(req, 500, "internal", "out of memory");
	text = json_dumps(doc, JSON_COMPACT);
	json_decref(doc);
	if (!text)
		return http_reply_error(req, 500, "internal", "cannot encode the reply");
	rc = http_reply(req, status, "application/json", text, strlen(text));
	free(text);
	return rc;
}

enum handler_rc http_reply_error(struct http_request *req, unsigned status, const char *error,
                                 const char *fmt, ...)
{
	char detail[1024];
	va_list ap;
	json_t *doc;
	char *text;
	enum handler_rc rc;

	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	doc = json_pack("{s:s, s:s}", "error", error, "detail", detail);
	text = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
	json_decref(doc);
	if (!text)
		return HANDLER_FATAL;
	rc = http_reply(req, status, "application/json", text, strlen(text));
	free(text);
	return rc == HANDLER_OK ? HANDLER_HANDLED : rc;
}

json_t *http_body_json(struct http_request *req)
{
	json_error_t jerr;
	json_t *doc;

	if (!req->body || req->body_len == 0) {
		http_reply_error(req, 400, "bad-request", "empty body, expected a JSON object");
		return NULL;
	}
	doc = json_loadb(req->body, req->body_len, JSON_REJECT_DUPLICATES, &jerr);
	if (!doc) {
		http_reply_error(req, 400, "bad-json", "line %d column %d: %s", jerr.line,
		                 jerr.column, jerr.text);
		return NULL;
	}
	return doc;
}

static const char *http_mime(const char *path)
{
	static const struct {
		const char *ext, *type;
	} types[] = {
	    {".html", "text/html; charset=utf-8"},
	    {".css", "text/css; charset=utf-8"},
	    {".js", "text/javascript; charset=utf-8"},
	    {".json", "application/json"},
	    {".svg", "image/svg+xml"},
	    {".png", "image/png"},
	    {".ico", "image/x-icon"},
	    {".txt", "text/plain; charset=utf-8"},
	};
	const char *dot = strrchr(path, '.');
	size_t i;

	for (i = 0; dot && i < sizeof(types) / sizeof(types[0]); i++)
		if (strcmp(dot, types[i].ext) == 0)
			return types[i].type;
	return "application/octet-stream";
}

enum handler_rc http_static(struct http_request *req)
{
	char root[PATH_MAX], want[PATH_MAX], real[PATH_MAX];
	const char *url = req->url;
	struct stat st;
	size_t rlen;
	int fd = -1;

	if (strstr(url, "..") || strchr(url, '\\'))
		return http_reply_error(req, 400, "bad-path", "path traversal refused");
	if (!realpath(srv_cfg.web_root, root))
		return http_reply_error(req, 404, "not-found", "no web root");
	if (strcmp(url, "/") == 0)
		url = "/index.html";
	if ((size_t)snprintf(want, sizeof(want), "%s%s", root, url) >= sizeof(want))
		return http_reply_error(req, 404, "not-found", "path too long");
	if (!realpath(want, real))
		return http_reply_error(req, 404, "not-found", "no such page");
	rlen = strlen(root);
	if (strncmp(real, root, rlen) != 0 || (real[rlen] != '/' && real[rlen] != '\0'))
		return http_reply_error(req, 403, "forbidden", "outside the web root");
	fd = open(real, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		if (fd >= 0)
			close(fd);
		return http_reply_error(req, 404, "not-found", "no such page");
	}
	/* MHD owns fd from here and closes it with the response. */
	return http_queue(req, 200, MHD_create_response_from_fd((uint64_t)st.st_size, fd),
	                  http_mime(real));
}

static void *http_defer_main(void *arg)
{
	struct http_deferred *d = arg;
	struct http_request *req = d->req;

	d->work(req->deferred);
	free(d);
	/* the pool thread calls the handler again once resumed */
	MHD_resume_connection(req->conn);
	pthread_mutex_lock(&http_defer_lock);
	if (--http_defer_running == 0)
		pthread_cond_broadcast(&http_defer_idle);
	pthread_mutex_unlock(&http_defer_lock);
	return NULL;
}

enum handler_rc http_defer(struct http_request *req, void (*work)(void *), void *arg,
                           void (*release)(void *))
{
	struct http_deferred *d = malloc(sizeof(*d));
	pthread_attr_t attr;
	pthread_t t;
	int err = -1;

	req->deferred = arg;
	req->deferred_release = release;
	if (!d)
		return http_reply_error(req, 500, "internal", "out of memory");
	d->req = req;
	d->work = work;
	req->suspended = true;
	MHD_suspend_connection(req->conn);
	pthread_mutex_lock(&http_defer_lock);
	http_defer_running++;
	pthread_mutex_unlock(&http_defer_lock);
	if (pthread_attr_init(&attr) == 0) {
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		err = pthread_create(&t, &attr, http_defer_main, d);
		pthread_attr_destroy(&attr);
	}
	if (err == 0)
		return HANDLER_OK;
	free(d);
	pthread_mutex_lock(&http_defer_lock);
	http_defer_running--;
	pthread_mutex_unlock(&http_defer_lock);
	req->suspended = false;
	MHD_resume_connection(req->conn);
	return http_reply_error(req, 503, "busy", "cannot start a thread; try again later");
}

static enum MHD_Result http_access(void *cls, struct MHD_Connection *conn, const char *url,
                                   const char *method, const char *version, const char *upload_data,
                                   size_t *upload_data_size, void **con_cls)
{
	const struct http_app *app = cls;
	struct http_request *req = *con_cls;
	enum handler_rc rc;

	if (!req) {
		const char *clen;
		enum conn_admit admit = conn_request_begin(conn);

		if (admit == CONN_CUT)
			return MHD_NO;
		req = calloc(1, sizeof(*req));
		if (!req)
			return MHD_NO;
		req->conn = conn;
		req->route = METRICS_ROUTE_OTHER;
		clock_gettime(CLOCK_MONOTONIC, &req->start);
		req->method = method;
		req->url = url;
		*con_cls = req;
		if (admit != CONN_OK) {
			req->close = true;
			rc = http_reply_error(req, 503, "busy", "%s; try again later",
			                      admit == CONN_FULL
			                          ? "the server has too many connections open"
			                      : admit == CONN_TOKEN_FULL
			                          ? "too many connections open with your token"
			                          : "too many connections open from your address");
			return rc == HANDLER_FATAL ? MHD_NO : MHD_YES;
		}
		/* Refuse a declared oversized body before reading any of it. */
		clen = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
		                                   MHD_HTTP_HEADER_CONTENT_LENGTH);
		if (clen && strtoull(clen, NULL, 10) > srv_cfg.max_body) {
			rc = http_reply_error(req, 413, "too-large", "request body over %zu bytes",
			                      srv_cfg.max_body);
			return rc == HANDLER_FATAL ? MHD_NO : MHD_YES;
		}
		/* a big mbox while every parse slot is busy: 503 before its body is read */
		if (clen && app->busy_early &&
		    app->busy_early(method, url, strtoull(clen, NULL, 10))) {
			req->close = true;
			rc = http_reply_error(req, 503, "busy",
			                      "%u mboxes are being parsed, the most at once "
			                      "(--parse-max-active); try again later",
			                      srv_cfg.parse_max_active);
			return rc == HANDLER_FATAL ? MHD_NO : MHD_YES;
		}
		return MHD_YES;
	}
	if (req->replied) {
		*upload_data_size = 0; /* discard what follows an early reply */
		return MHD_YES;
	}
	if (*upload_data_size && conn_body_late(conn)) {
		/* a body trickling past --body-timeout: 408, then closed */
		conn_refuse_late_body(conn);
		return MHD_NO;
	}
	if (*upload_data_size) {
		size_t n = *upload_data_size;

		if (!req->body_too_large && req->body_len + n <= srv_cfg.max_body) {
			char *nb = realloc(req->body, req->body_len + n + 1);

			if (!nb)
				return MHD_NO;
			memcpy(nb + req->body_len, upload_data, n);
			req->body = nb;
			req->body_len += n;
			req->body[req->body_len] = '\0';
		} else {
			req->body_too_large = true;
		}
		*upload_data_size = 0;
		return MHD_YES;
	}
	conn_request_run(conn);
	if (req->body_too_large)
		rc = http_reply_error(req, 413, "too-large", "request body over %zu bytes",
		                      srv_cfg.max_body);
	else
		rc = app->dispatch(req);
	if (rc == HANDLER_OK && req->suspended) {
		req->suspended = false; /* only this thread reads or writes it */
		return MHD_YES;         /* http_defer: the handler is called again */
	}
	/*
	 * A handler that replied nothing is a bug (500); one whose reply
	 * libmicrohttpd refused (a client gone or past a reply's point: a
	 * handler need not pass that on) has lost its connection, which is
	 * closed.
	 */
	if (req->refused)
		rc = HANDLER_FATAL;
	else if (!req->replied && rc != HANDLER_FATAL)
		rc = http_reply_error(req, 500, "internal", "no reply");
	return rc == HANDLER_FATAL ? MHD_NO : MHD_YES;
}

static void http_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                           enum MHD_RequestTerminationCode toe)
{
	struct http_request *req = *con_cls;

	conn_request_done(conn);
	if (!req)
		return;
	if (req->status >= 100 && req->status < 600) {
		struct timespec now;

		atomic_fetch_add_explicit(&http_replies[req->status], 1, memory_order_relaxed);
		clock_gettime(CLOCK_MONOTONIC, &now);
		metrics_request_done(req->route, (double)(now.tv_sec - req->start.tv_sec) +
		                                     (now.tv_nsec - req->start.tv_nsec) / 1e9);
	}
	if (req->deferred && req->deferred_release)
		req->deferred_release(req->deferred);
	free(req->body);
	free(req);
	*con_cls = NULL;
}

void http_metrics(FILE *out)
{
	int i;

	fprintf(out, "# HELP locklab_http_requests_total HTTP replies by status code.\n"
	             "# TYPE locklab_http_requests_total counter\n");
	for (i = 100; i < 600; i++) {
		unsigned long v = atomic_load_explicit(&http_replies[i], memory_order_relaxed);

		if (v)
			fprintf(out, "locklab_http_requests_total{code=\"%d\"} %lu\n", i, v);
	}
	conn_metrics(out);
}

int http_start(const struct http_app *app)
{
	char host[256];
	const char *colon = strrchr(srv_cfg.listen, ':');
	const char *h, *port;
	struct addrinfo hints = {0}, *ai = NULL;
	size_t hlen;
	int err;
	/*
	 * A fixed pool of threads, each with its own epoll set and database
	 * connection; suspend/resume (http_defer) brings the ITC channel that
	 * also wakes them to stop.
	 */
	unsigned flags =
	    MHD_USE_EPOLL_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG;

	if (!colon || colon == srv_cfg.listen) {
		fprintf(stderr, "locklab-server: --listen wants host:port, got '%s'\n",
		        srv_cfg.listen);
		return -1;
	}
	h = srv_cfg.listen;
	hlen = (size_t)(colon - h);
	if (h[0] == '[' && hlen >= 2 && h[hlen - 1] == ']') {
		h++;
		hlen -= 2;
	}
	if (hlen >= sizeof(host)) {
		fprintf(stderr, "locklab-server: listen host too long\n");
		return -1;
	}
	memcpy(host, h, hlen);
	host[hlen] = '\0';
	port = colon + 1;
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
	err = getaddrinfo(host, port, &hints, &ai);
	if (err) {
		fprintf(stderr, "locklab-server: cannot resolve '%s': %s\n", srv_cfg.listen,
		        gai_strerror(err));
		return -1;
	}
	if (ai->ai_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	if (!MHD_is_feature_supported(MHD_FEATURE_EPOLL)) {
		fprintf(stderr, "locklab-server: libmicrohttpd was built without epoll\n");
		freeaddrinfo(ai);
		return -1;
	}
	if (conn_start() != 0) {
		fprintf(stderr, "locklab-server: cannot start the connection watchdog\n");
		freeaddrinfo(ai);
		return -1;
	}
	/*
	 * The soft limits (503) are conn.c's; libmicrohttpd closes connections
	 * only past twice them.  It splits the total among the pool's threads.
	 */
	http_daemon = MHD_start_daemon(
	    flags, 0, NULL, NULL, http_access, (void *)app, MHD_OPTION_SOCK_ADDR, ai->ai_addr,
	    MHD_OPTION_THREAD_POOL_SIZE, srv_cfg.http_threads, MHD_OPTION_CONNECTION_TIMEOUT,
	    srv_cfg.connection_timeout, MHD_OPTION_CONNECTION_LIMIT, conn_hard_limit(),
	    MHD_OPTION_PER_IP_CONNECTION_LIMIT, conn_hard_per_ip(), MHD_OPTION_NOTIFY_CONNECTION,
	    conn_notify, NULL, MHD_OPTION_NOTIFY_COMPLETED, http_completed, NULL, MHD_OPTION_END);
	freeaddrinfo(ai);
	if (!http_daemon) {
		fprintf(stderr, "locklab-server: cannot listen on %s\n", srv_cfg.listen);
		conn_stop();
		return -1;
	}
	return 0;
}

void http_stop(void)
{
	/* a deferred work resumes its connection: let them end (--fetch-timeout) */
	pthread_mutex_lock(&http_defer_lock);
	while (http_defer_running)
		pthread_cond_wait(&http_defer_idle, &http_defer_lock);
	pthread_mutex_unlock(&http_defer_lock);
	if (http_daemon)
		MHD_stop_daemon(http_daemon);
	http_daemon = NULL;
	conn_stop();
}
