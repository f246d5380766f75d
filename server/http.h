/*
 * http.h - the HTTP front end on libmicrohttpd: a fixed pool of epoll
 * threads (srv_cfg.http_threads), admission and deadlines by conn.h, request bodies accumulated up
 * to srv_cfg.max_body (413 past it), routing to the api handlers, replies that always carry a
 * Content-Type.  What a request runs is the caller's (struct http_app).
 */
#ifndef LOCKLAB_SERVER_HTTP_H
#define LOCKLAB_SERVER_HTTP_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <time.h>

struct MHD_Connection;

/* Seconds a 503 reply asks the client to wait (its Retry-After header). */
#define HTTP_RETRY_AFTER "5"

/*
 * What a handler returns: OK (its reply is queued), HANDLED (an error reply
 * is queued) or FATAL (nothing could be queued; the connection is closed).
 */
enum handler_rc {
	HANDLER_OK,
	HANDLER_HANDLED,
	HANDLER_FATAL,
};

/* A caller known by its token (auth.c): an agent or a submitter. */
struct auth_agent {
	long long id;
	char role[16]; /* "agent" or "submitter" */
	char machine_class[128];
};

struct http_request {
	struct MHD_Connection *conn;
	const char *method;
	const char *url;
	char *body; /* NUL-terminated, owned by http.c */
	size_t body_len;
	bool body_too_large;
	bool replied;
	bool refused;          /* libmicrohttpd would not queue a reply: the connection is lost */
	bool close;            /* the reply says "Connection: close" */
	int status;            /* of the reply, for /metrics */
	int route;             /* for /metrics: set by the router, METRICS_ROUTE_OTHER until then */
	struct timespec start; /* the request's first byte (CLOCK_MONOTONIC), for /metrics */
	/* http_defer: the work's argument; suspended tells http_access (only) */
	void *deferred;
	void (*deferred_release)(void *);
	bool suspended;
	/* set by the router (routes.c) */
	struct auth_agent caller; /* on agent routes, and submitter calls of submit routes */
	const char *allow;        /* the methods of a 405 reply's Allow header */
};

/* A header of the request or NULL; borrowed. */
const char *http_header(struct http_request *req, const char *name);
/* A query argument or NULL; borrowed. */
const char *http_query(struct http_request *req, const char *name);
/* The token of "Authorization: Bearer <token>" or NULL; borrowed. */
const char *http_bearer(struct http_request *req);

/* Reply with body (copied).  Returns HANDLER_OK or HANDLER_FATAL. */
enum handler_rc http_reply(struct http_request *req, unsigned status, const char *content_type,
                           const char *body, size_t len);
/* Reply with a JSON document; takes ownership of doc (may be NULL -> 500). */
enum handler_rc http_reply_json(struct http_request *req, unsigned status, json_t *doc);
/*
 * {"error": error, "detail": printf(fmt...)}.  Returns HANDLER_HANDLED, or
 * HANDLER_FATAL when the reply could not be queued.
 */
enum handler_rc http_reply_error(struct http_request *req, unsigned status, const char *error,
                                 const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/*
 * Parse the request body as one JSON value (duplicate keys rejected).
 * Returns a new reference, or NULL after queueing a 400 reply.
 */
json_t *http_body_json(struct http_request *req);

/*
 * Run work(arg) on a thread of its own while the connection waits
 * (suspended), so that a slow step (a URL fetch) does not hold one of the
 * pool's threads and the connections it serves.  When work returns, the
 * route's handler is called again for the same request with req->deferred
 * == arg.  http.c owns arg from here and frees it with release when the
 * request ends.  Returns HANDLER_OK (return it, with no reply queued) or,
 * with arg released, an error reply's code.
 */
enum handler_rc http_defer(struct http_request *req, void (*work)(void *), void *arg,
                           void (*release)(void *));

/* Serve a file under srv_cfg.web_root; refuses ".." and anything outside it. */
enum handler_rc http_static(struct http_request *req);

/*
 * What the front end serves: dispatch answers each request whose body has
 * arrived (the server's is routes_dispatch, routes.h), with the OK /
 * HANDLED / FATAL contract above.  http.c knows no route.
 */
struct http_app {
	enum handler_rc (*dispatch)(struct http_request *req);
	/* optional: refuse a request by its headers alone (503), before its body */
	bool (*busy_early)(const char *method, const char *url, unsigned long long length);
};

/*
 * Start the daemon on srv_cfg.listen serving app (kept, not copied);
 * returns 0 or -1 with a message on stderr.
 */
int http_start(const struct http_app *app);
void http_stop(void);

/* Prometheus lines for the request counters, appended to out (open_memstream). */
void http_metrics(FILE *out);

#endif
