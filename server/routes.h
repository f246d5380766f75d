/*
 * routes.h - the server's routes as one table: method, path pattern,
 * handler and who may call it.  The table is the router and the access
 * rule; `locklab-server --routes` prints it, and tests/290-server-routes-auth.t walks every route
 * with no token, a wrong token and each other role's token from that print.
 */
#ifndef LOCKLAB_SERVER_ROUTES_H
#define LOCKLAB_SERVER_ROUTES_H

#include <stdio.h>

#include "http.h"

/* Who may call a route; checked before its handler runs. */
enum route_access {
	ROUTE_ANYONE, /* no token needed */
	ROUTE_SUBMIT, /* anyone; with --submit-token-required a submitter or the admin token */
	ROUTE_AGENT,  /* an agent token; req->caller is that agent */
	ROUTE_ADMIN,  /* the admin token */
};

/*
 * Find req's route, check its access, run its handler.  Unknown /api paths
 * and /healthz-like paths answer 404, a known path with another method 405
 * (with Allow), other GETs are static files.  Returns what the handler or
 * the refusal returned (the OK / HANDLED / FATAL contract of http.h).
 * Sets req->route (metrics.h) to the route's index, or to
 * METRICS_ROUTE_STATIC for a file.
 */
enum handler_rc routes_dispatch(struct http_request *req);

/* How many routes the table has, and route i's method and pattern. */
size_t routes_count(void);
void routes_name(size_t i, const char **method, const char **pattern);

/* One line per route, "METHOD PATTERN ACCESS" (access: anyone, submit, agent, admin). */
void routes_print(FILE *out);

#endif
