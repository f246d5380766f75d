/*
 * http.c - libmicrohttpd front end: body accumulation with a hard cap,
 * routing, replies, static files and request counters.
 */
#include "http.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <microhttpd.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api.h"
#include "config.h"
#include "outbox.h"

static struct MHD_Daemon *http_daemon;

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
	ret = MHD_queue_response(req->conn, status, resp);
	MHD_destroy_response(resp);
	if (ret != MHD_YES)
		return HANDLER_FATAL;
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

/* Serve a file under the web root; refuses ".." and anything outside it. */
static enum handler_rc http_static(struct http_request *req)
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

/* "/api/v1/submissions/12/report" -> segments; returns their count. */
static int http_split(const char *url, char seg[][64], int max)
{
	int n = 0;
	const char *p = url;

	while (*p) {
		const char *e;
		size_t len;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		e = strchr(p, '/');
		len = e ? (size_t)(e - p) : strlen(p);
		if (n == max || len >= 64)
			return -1;
		memcpy(seg[n], p, len);
		seg[n][len] = '\0';
		n++;
		p += len;
	}
	return n;
}

static long long http_id(const char *s)
{
	char *end;
	long long v;

	if (!*s || *s == '-' || *s == '+')
		return -1;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || *end || v <= 0)
		return -1;
	return v;
}

static enum handler_rc http_route(struct http_request *req)
{
	char seg[8][64];
	int n = http_split(req->url, seg, 8);
	bool get = strcmp(req->method, "GET") == 0 || strcmp(req->method, "HEAD") == 0;
	bool post = strcmp(req->method, "POST") == 0;
	long long id;

	if (n < 0)
		return http_reply_error(req, 404, "not-found", "no such path");
	if (n == 1 && strcmp(seg[0], "healthz") == 0)
		return get ? api_healthz(req) : http_reply_error(req, 405, "method", "use GET");
	if (n == 1 && strcmp(seg[0], "metrics") == 0)
		return get ? api_metrics(req) : http_reply_error(req, 405, "method", "use GET");
	if (n < 3 || strcmp(seg[0], "api") != 0 || strcmp(seg[1], "v1") != 0) {
		if (n >= 1 && strcmp(seg[0], "api") == 0)
			return http_reply_error(req, 404, "not-found", "no such endpoint");
		if (!get)
			return http_reply_error(req, 405, "method", "use GET");
		return http_static(req);
	}
	if (strcmp(seg[2], "submissions") == 0) {
		if (n == 3) {
			if (post)
				return api_submission_create(req);
			if (get)
				return api_submission_list(req);
			return http_reply_error(req, 405, "method", "use GET or POST");
		}
		if ((id = http_id(seg[3])) < 0)
			return http_reply_error(req, 404, "not-found", "bad submission id");
		if (!get)
			return http_reply_error(req, 405, "method", "use GET");
		if (n == 4)
			return api_submission_get(req, id);
		if (n == 5 && strcmp(seg[4], "report") == 0)
			return api_submission_report(req, id);
		if (n == 5 && strcmp(seg[4], "reply") == 0)
			return api_submission_reply(req, id);
		if (n == 5 && strcmp(seg[4], "results") == 0)
			return api_submission_results(req, id);
	} else if (strcmp(seg[2], "agents") == 0 && n == 3) {
		return get ? api_agent_list(req) : http_reply_error(req, 405, "method", "use GET");
	} else if (strcmp(seg[2], "history") == 0 && n == 3) {
		return get ? api_history(req) : http_reply_error(req, 405, "method", "use GET");
	} else if (strcmp(seg[2], "agents") == 0 && n == 4 && strcmp(seg[3], "register") == 0) {
		return post ? api_agent_register(req)
		            : http_reply_error(req, 405, "method", "use POST");
	} else if (strcmp(seg[2], "jobs") == 0 && n >= 4) {
		if (!post)
			return http_reply_error(req, 405, "method", "use POST");
		if (n == 4 && strcmp(seg[3], "claim") == 0)
			return api_job_claim(req);
		if (n == 5 && (id = http_id(seg[3])) > 0) {
			if (strcmp(seg[4], "heartbeat") == 0)
				return api_job_heartbeat(req, id);
			if (strcmp(seg[4], "results") == 0)
				return api_job_results(req, id);
			if (strcmp(seg[4], "fail") == 0)
				return api_job_fail(req, id);
			if (strcmp(seg[4], "release") == 0)
				return api_job_release(req, id);
		}
	} else if (strcmp(seg[2], "outbox") == 0 && n == 3) {
		return get ? api_outbox_list(req) : http_reply_error(req, 405, "method", "use GET");
	} else if (strcmp(seg[2], "outbox") == 0 && n == 5 && strcmp(seg[4], "retry") == 0 &&
	           (id = http_id(seg[3])) > 0) {
		return post ? api_outbox_retry(req, id)
		            : http_reply_error(req, 405, "method", "use POST");
	} else if (strcmp(seg[2], "trees") == 0 && n == 3) {
		if (get)
			return api_tree_list(req);
		if (post)
			return api_tree_create(req);
		return http_reply_error(req, 405, "method", "use GET or POST");
	}
	return http_reply_error(req, 404, "not-found", "no such endpoint");
}

static enum MHD_Result http_access(void *cls, struct MHD_Connection *conn, const char *url,
                                   const char *method, const char *version, const char *upload_data,
                                   size_t *upload_data_size, void **con_cls)
{
	struct http_request *req = *con_cls;
	enum handler_rc rc;

	if (!req) {
		const char *clen;

		req = calloc(1, sizeof(*req));
		if (!req)
			return MHD_NO;
		req->conn = conn;
		req->method = method;
		req->url = url;
		*con_cls = req;
		/* Refuse a declared oversized body before reading any of it. */
		clen = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
		                                   MHD_HTTP_HEADER_CONTENT_LENGTH);
		if (clen && strtoull(clen, NULL, 10) > srv_cfg.max_body) {
			rc = http_reply_error(req, 413, "too-large", "request body over %zu bytes",
			                      srv_cfg.max_body);
			return rc == HANDLER_FATAL ? MHD_NO : MHD_YES;
		}
		return MHD_YES;
	}
	if (req->replied) {
		*upload_data_size = 0; /* discard what follows an early reply */
		return MHD_YES;
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
	if (req->body_too_large)
		rc = http_reply_error(req, 413, "too-large", "request body over %zu bytes",
		                      srv_cfg.max_body);
	else
		rc = http_route(req);
	if (!req->replied && rc != HANDLER_FATAL)
		rc = http_reply_error(req, 500, "internal", "no reply");
	return rc == HANDLER_FATAL ? MHD_NO : MHD_YES;
}

static void http_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                           enum MHD_RequestTerminationCode toe)
{
	struct http_request *req = *con_cls;

	if (!req)
		return;
	if (req->status >= 100 && req->status < 600)
		atomic_fetch_add_explicit(&http_replies[req->status], 1, memory_order_relaxed);
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
}

int http_start(void)
{
	char host[256];
	const char *colon = strrchr(srv_cfg.listen, ':');
	const char *h, *port;
	struct addrinfo hints = {0}, *ai = NULL;
	size_t hlen;
	int err;
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION |
	                 MHD_USE_POLL | MHD_USE_ERROR_LOG;

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
	http_daemon =
	    MHD_start_daemon(flags, 0, NULL, NULL, http_access, NULL, MHD_OPTION_SOCK_ADDR,
	                     ai->ai_addr, MHD_OPTION_CONNECTION_TIMEOUT, srv_cfg.connection_timeout,
	                     MHD_OPTION_CONNECTION_LIMIT, srv_cfg.max_connections,
	                     MHD_OPTION_NOTIFY_COMPLETED, http_completed, NULL, MHD_OPTION_END);
	freeaddrinfo(ai);
	if (!http_daemon) {
		fprintf(stderr, "locklab-server: cannot listen on %s\n", srv_cfg.listen);
		return -1;
	}
	return 0;
}

void http_stop(void)
{
	if (http_daemon)
		MHD_stop_daemon(http_daemon);
	http_daemon = NULL;
}
