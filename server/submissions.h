/*
 * submissions.h - storing a submission: the submission row, one patches row
 * per mail (with the message as sent), and one job per suite and machine
 * class, in one transaction.  The HTTP handler (api.h) and the mail intake
 * (intake.h) both come here.
 */
#ifndef LOCKLAB_SERVER_SUBMISSIONS_H
#define LOCKLAB_SERVER_SUBMISSIONS_H

#include <jansson.h>
#include <stdbool.h>

#include "mbox.h"

#define MAX_SUITES 16

struct submission_new {
	const char *source; /* "url", "mbox", "git", "mail" */
	const char *url;
	const char *git_url, *git_ref, *git_base;
	const char *tree; /* a trees.name, or NULL */
	const char *notify;
	const char *suites[MAX_SUITES];
	size_t nsuites;
	struct mbox_series series; /* owned; released by the caller */
	/* by mail: the intake's mail_messages ids ("{...}" text[]) marked
	 * submitted in the same transaction, or NULL */
	const char *mail_ids;
	int rounds; /* rounds each job asks for first; 0: --min-rounds */
	/* out */
	long long id;
	long long previous_id; /* the older version it follows, 0 when none */
	int previous_version;  /* and that one's version (the same: a resend) */
	json_t *jobs;          /* new reference to the job ids; the caller decrefs */
	char err[256];
};

/*
 * Store s in one transaction (retried on conflicts).  A submission by mail
 * names the older version of its series in previous_id (an unlabeled resend:
 * the copy of the same version before it).  Returns DB_OK with
 * s->id and s->jobs set, DB_ABORT with a reason in s->err (an unknown tree;
 * mail_ids already taken by another server), or DB_FAIL.
 */
int submission_store(struct submission_new *s);

/* Submitted mboxes being parsed now, off the HTTP threads (/metrics). */
unsigned submission_parses_active(void);

/* A declared body over this is an mbox to parse, refused at once while every parse slot is busy. */
#define SUBMISSION_EARLY_BUSY_BYTES (64 * 1024)

/*
 * True when a request (method, url, its declared Content-Length) is a
 * submission of more than SUBMISSION_EARLY_BUSY_BYTES while
 * --parse-max-active parses run: http.c answers 503 + Retry-After from its
 * headers, before reading the body, so a flood of big mboxes holds no HTTP
 * thread reading bodies that would be refused anyway.
 */
bool submission_busy_early(const char *method, const char *url, unsigned long long length);

/* 0 when --parse-priority names one (low, idle, normal), else -1. */
int submission_parse_priority_check(const char *name);

#endif
