/*
 * api.h - the /api/v1 handlers.  Each one reads the request (body already
 * accumulated, ids already parsed from the path, the caller's token checked
 * by the route table's access rule: routes.c), does its work in the database
 * and queues exactly one reply.  See docs/api.md for the contract.
 */
#ifndef LOCKLAB_SERVER_API_H
#define LOCKLAB_SERVER_API_H

#include <stdbool.h>

#include "http.h"

/* submissions.c */
enum handler_rc api_submission_create(struct http_request *req);
/* submissions_read.c */
enum handler_rc api_submission_list(struct http_request *req);
enum handler_rc api_submission_get(struct http_request *req, long long id);
/* GET /api/v1/submissions/{id}/versions[?limit=&before=]: its series' versions, paged */
enum handler_rc api_submission_versions(struct http_request *req, long long id);

/* reports.c */
enum handler_rc api_submission_report(struct http_request *req, long long id);
enum handler_rc api_submission_reply(struct http_request *req, long long id);

/* jobs.c */
enum handler_rc api_agent_register(struct http_request *req);
enum handler_rc api_job_claim(struct http_request *req);
enum handler_rc api_job_heartbeat(struct http_request *req, long long id);
enum handler_rc api_job_fail(struct http_request *req, long long id);
enum handler_rc api_job_release(struct http_request *req, long long id);
/* results.c */
enum handler_rc api_job_results(struct http_request *req, long long id);

/* plan.c: noise profiles of machine classes (plan.h) */
/* POST /api/v1/noise (agent): store the caller's class's profile of a suite */
enum handler_rc api_noise_post(struct http_request *req);
/* GET /api/v1/noise[?machine_class=&suite=]: the stored profiles */
enum handler_rc api_noise_get(struct http_request *req);

/* trees.c */
enum handler_rc api_tree_list(struct http_request *req);
enum handler_rc api_tree_create(struct http_request *req);

/* health.c */
enum handler_rc api_healthz(struct http_request *req);
enum handler_rc api_metrics(struct http_request *req);

/* views.c */
/* GET /api/v1/agents: agents with machine (latest result) and running job */
enum handler_rc api_agent_list(struct http_request *req);
/* GET /api/v1/submissions/{id}/results: the stored lockbench-result/1 documents */
enum handler_rc api_submission_results(struct http_request *req, long long id);
/* GET /api/v1/history[?workload&lock&metric[&tree][&users][&limit]] */
enum handler_rc api_history(struct http_request *req);

/* apireply.c: shared by the handlers */
/*
 * Reply with the one JSON value that sql selects (built by PostgreSQL); no
 * row or NULL is a 404 "no such what".
 */
enum handler_rc api_reply_sql(struct http_request *req, const char *sql, int n,
                              const char *const *p, const char *what);
/* api_reply_sql with one parameter, $1: id (a resource the path names). */
enum handler_rc api_reply_sql_id(struct http_request *req, const char *sql, long long id,
                                 const char *what);

/*
 * A query argument that must be a decimal integer from 1 to max: written to
 * buf in canonical form and true, or false when malformed.
 */
bool api_query_int(const char *s, long long max, char *buf, size_t len);

/*
 * The reply to a failed database call, by whose fault db_last_fault() says
 * it was: 422 (the data was refused, class 22 or 23), 409 (23505), 503 with
 * Retry-After (connection, shutdown, resources, conflicts still there after
 * the retries), else 500.  what ("cannot store the tree") opens the detail;
 * 503 and 500 bodies carry no libpq text (the log has it).
 */
enum handler_rc api_reply_db_error(struct http_request *req, const char *what);

#endif
