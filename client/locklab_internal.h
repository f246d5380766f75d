/*
 * locklab_internal.h - shared by the client's files only: locklab.c (the
 * commands' table, usage and main), locklab_http.c (the requests) and
 * locklab_cmds.c (the commands).  Each function's full contract is the
 * comment above its definition.
 */
#ifndef LOCKLAB_CLIENT_LOCKLAB_INTERNAL_H
#define LOCKLAB_CLIENT_LOCKLAB_INTERNAL_H

#include <curl/curl.h>
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "options.h"

/* What `locklab submit --wait` exits with; the other commands use 0, 2 and 7. */
enum gate_exit {
	GATE_PASS = 0,         /* done: no-change or improvement (or any command that worked) */
	GATE_REGRESSION = 1,   /* done: regression */
	GATE_USAGE = 2,        /* bad usage, or a FILE that cannot be read */
	GATE_LOCKUP = 3,       /* done: lockup, splat or crash */
	GATE_INCONCLUSIVE = 4, /* done: inconclusive (or a verdict this client does not know) */
	GATE_FAILED = 5,  /* failed: the series did not apply or build, or no agent finished it */
	GATE_TIMEOUT = 6, /* --timeout passed before the submission finished */
	GATE_SERVER = 7,  /* the server could not be reached or answered an error */
};

struct reply {
	char *data;
	size_t len;
	long status;
};

struct options {
	bool wait, json;
	long timeout; /* seconds, 0: none */
	const char *format;
	struct opt_list suites; /* --suite, in the order given */
};

/* ---- locklab_http.c ---- */

extern const char *cl_server;
extern CURL *cl_conn;      /* the one handle of this run: its connection is reused */
extern double cl_deadline; /* monotonic seconds, 0: none (--timeout) */
extern bool cl_timed_out;  /* the last request ran into the deadline */

double cl_now_seconds(void);
int cl_request(const char *method, const char *path, const char *body, struct reply *r);
void cl_print_error(const char *path, const struct reply *r);
json_t *cl_get_json(const char *path, char **raw);
void cl_print_raw(FILE *out, const char *raw);
const char *cl_field_text(json_t *obj, const char *key, char *buf, size_t len, const char *dflt);
const char *cl_field_str(json_t *obj, const char *key, const char *dflt);

/* ---- locklab_cmds.c ---- */

int cl_print_report(long long id, const char *format);
int cmd_status(int argc, char **argv, const struct options *o);
int cmd_alerts(int argc, const struct options *o);
int cmd_submit(int argc, char **argv, const struct options *o, double started);

#endif
