/*
 * routes.c - the route table, its matching and its access rule (routes.h).
 */
#include "routes.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "auth.h"
#include "config.h"
#include "db.h"
#include "metrics.h"
#include "outbox.h"
#include "track.h"

struct route {
	const char *method;  /* "GET" (HEAD is served as GET), "POST" or "PATCH" */
	const char *pattern; /* segments; "{id}" is a positive decimal id */
	/* one of the two, by whether the pattern has an {id} */
	enum handler_rc (*handler)(struct http_request *req);
	enum handler_rc (*handler_id)(struct http_request *req, long long id);
	enum route_access access;
};

static const struct route routes[] = {
    {"GET", "/healthz", api_healthz, NULL, ROUTE_ANYONE},
    {"GET", "/metrics", api_metrics, NULL, ROUTE_ANYONE},
    {"POST", "/api/v1/submissions", api_submission_create, NULL, ROUTE_SUBMIT},
    {"GET", "/api/v1/submissions", api_submission_list, NULL, ROUTE_ANYONE},
    {"GET", "/api/v1/submissions/{id}", NULL, api_submission_get, ROUTE_ANYONE},
    {"GET", "/api/v1/submissions/{id}/report", NULL, api_submission_report, ROUTE_ANYONE},
    {"GET", "/api/v1/submissions/{id}/reply", NULL, api_submission_reply, ROUTE_ANYONE},
    {"GET", "/api/v1/submissions/{id}/results", NULL, api_submission_results, ROUTE_ANYONE},
    {"GET", "/api/v1/submissions/{id}/versions", NULL, api_submission_versions, ROUTE_ANYONE},
    {"GET", "/api/v1/agents", api_agent_list, NULL, ROUTE_ANYONE},
    {"POST", "/api/v1/agents/register", api_agent_register, NULL, ROUTE_ADMIN},
    {"GET", "/api/v1/history", api_history, NULL, ROUTE_ANYONE},
    {"POST", "/api/v1/noise", api_noise_post, NULL, ROUTE_AGENT},
    {"GET", "/api/v1/noise", api_noise_get, NULL, ROUTE_ANYONE},
    {"POST", "/api/v1/jobs/claim", api_job_claim, NULL, ROUTE_AGENT},
    {"POST", "/api/v1/jobs/{id}/heartbeat", NULL, api_job_heartbeat, ROUTE_AGENT},
    {"POST", "/api/v1/jobs/{id}/results", NULL, api_job_results, ROUTE_AGENT},
    {"POST", "/api/v1/jobs/{id}/fail", NULL, api_job_fail, ROUTE_AGENT},
    {"POST", "/api/v1/jobs/{id}/release", NULL, api_job_release, ROUTE_AGENT},
    {"GET", "/api/v1/trees", api_tree_list, NULL, ROUTE_ANYONE},
    {"POST", "/api/v1/trees", api_tree_create, NULL, ROUTE_ADMIN},
    {"POST", "/api/v1/trees/{id}/poke", NULL, api_tree_poke, ROUTE_ADMIN},
    {"GET", "/api/v1/alerts", api_alert_list, NULL, ROUTE_ANYONE},
    {"PATCH", "/api/v1/alerts/{id}", NULL, api_alert_update, ROUTE_ADMIN},
    {"GET", "/api/v1/outbox", api_outbox_list, NULL, ROUTE_ANYONE},
    {"POST", "/api/v1/outbox/{id}/retry", NULL, api_outbox_retry, ROUTE_ADMIN},
};
#define NROUTES (sizeof(routes) / sizeof(routes[0]))

static const char *const route_access_names[] = {"anyone", "submit", "agent", "admin"};

#define ROUTE_MAX_SEGS 8

/* "/api/v1/submissions/12/report" -> segments; their count, or -1. */
static int routes_split(const char *url, char seg[][64], int max)
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

static long long routes_id(const char *s)
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

/* True when the url's segments fit r's pattern; *id is its {id}, if any. */
static bool routes_match(const struct route *r, char seg[][64], int n, long long *id)
{
	char pat[ROUTE_MAX_SEGS][64];
	int k = routes_split(r->pattern, pat, ROUTE_MAX_SEGS), i;

	if (k != n)
		return false;
	for (i = 0; i < n; i++) {
		if (strcmp(pat[i], "{id}") == 0) {
			if ((*id = routes_id(seg[i])) < 0)
				return false;
		} else if (strcmp(pat[i], seg[i]) != 0) {
			return false;
		}
	}
	return true;
}

/* The caller's token as an agent of role; the refusal is queued otherwise. */
static enum handler_rc routes_caller(struct http_request *req, const char *role)
{
	PGconn *c = db_conn();

	if (!c)
		return api_reply_db_error(req, "cannot check the token");
	return auth_require_agent(req, c, role, &req->caller);
}

/*
 * HANDLER_OK when req may call a route of access, else the 401 (no or
 * unknown token), 403 (a known token of another role) or 503 is queued.
 */
static enum handler_rc routes_check_access(struct http_request *req, enum route_access access)
{
	const char *token = http_bearer(req);
	bool admin = auth_is_admin(token);

	switch (access) {
	case ROUTE_ANYONE:
		return HANDLER_OK;
	case ROUTE_SUBMIT:
		if (!srv_cfg.submit_token_required || admin)
			return HANDLER_OK;
		return routes_caller(req, "submitter");
	case ROUTE_AGENT:
		if (admin)
			return http_reply_error(
			    req, 403, "forbidden",
			    "the admin token cannot do this: an agent token can");
		return routes_caller(req, "agent");
	case ROUTE_ADMIN:
		if (admin)
			return HANDLER_OK;
		if (!token)
			return http_reply_error(req, 401, "unauthorized",
			                        "missing Authorization: Bearer <admin token>");
		/* a known agent or submitter token is 403, anything else 401 */
		if (routes_caller(req, NULL) != HANDLER_OK)
			return HANDLER_HANDLED;
		return http_reply_error(req, 403, "forbidden",
		                        "a %s token cannot do this: the "
		                        "admin token can",
		                        req->caller.role);
	}
	return http_reply_error(req, 500, "internal", "a route without an access rule");
}

enum handler_rc routes_dispatch(struct http_request *req)
{
	char seg[ROUTE_MAX_SEGS][64];
	int n = routes_split(req->url, seg, ROUTE_MAX_SEGS);
	const char *method = strcmp(req->method, "HEAD") == 0 ? "GET" : req->method;
	char allow[64] = "";
	long long id = 0;
	size_t i;
	enum handler_rc rc;

	if (n < 0)
		return http_reply_error(req, 404, "not-found", "no such path");
	for (i = 0; i < NROUTES; i++) {
		const struct route *r = &routes[i];

		if (!routes_match(r, seg, n, &id))
			continue;
		if (strcmp(r->method, method) != 0) {
			size_t used = strlen(allow);

			snprintf(allow + used, sizeof(allow) - used, "%s%s", used ? ", " : "",
			         r->method);
			continue;
		}
		req->route = (int)i;
		rc = routes_check_access(req, r->access);
		if (rc != HANDLER_OK)
			return rc;
		return r->handler ? r->handler(req) : r->handler_id(req, id);
	}
	if (allow[0]) {
		req->allow = allow;
		return http_reply_error(req, 405, "method", "use %s", allow);
	}
	if (n >= 1 && (strcmp(seg[0], "api") == 0 || strcmp(seg[0], "healthz") == 0 ||
	               strcmp(seg[0], "metrics") == 0))
		return http_reply_error(req, 404, "not-found", "no such endpoint");
	if (strcmp(method, "GET") != 0)
		return http_reply_error(req, 405, "method", "use GET");
	req->route = METRICS_ROUTE_STATIC;
	return http_static(req);
}

size_t routes_count(void)
{
	return NROUTES;
}

void routes_name(size_t i, const char **method, const char **pattern)
{
	*method = i < NROUTES ? routes[i].method : "?";
	*pattern = i < NROUTES ? routes[i].pattern : "?";
}

void routes_print(FILE *out)
{
	size_t i;

	for (i = 0; i < NROUTES; i++)
		fprintf(out, "%s %s %s\n", routes[i].method, routes[i].pattern,
		        route_access_names[routes[i].access]);
}
