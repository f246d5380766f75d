/*
 * jobs.h - the job queue shared by the api handlers and the lease reaper.
 */
#ifndef LOCKLAB_SERVER_JOBS_H
#define LOCKLAB_SERVER_JOBS_H

/* Longest reason of POST /api/v1/jobs/{id}/fail, in bytes. */
#define JOBS_MAX_REASON 16384

#include <jansson.h>
#include <libpq-fe.h>

#include "auth.h"
#include "http.h"

/*
 * Return every running job whose lease expired to the queue with
 * attempts + 1, or fail it (and its submission) once attempts reach
 * srv_cfg.max_attempts.  One autocommitted statement; safe to run from
 * several servers at once.  Returns the number of jobs touched or -1.
 */
int jobs_reap(PGconn *c);

/* {"id", "state", "rounds", "rounds_complete", "next_round", "more_rounds", ...} of job id */
json_t *jobs_progress(PGconn *c, long long id);
/*
 * The database connection and the calling agent of an agent route (the
 * router checked the token: routes.c); anything but HANDLER_OK means the
 * refusal is already queued.
 */
enum handler_rc jobs_agent_request(struct http_request *req, PGconn **c, struct auth_agent *agent);

/* Start / stop the thread that reaps leases every second. */
int jobs_reaper_start(void);
void jobs_reaper_stop(void);

#endif
