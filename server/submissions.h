/*
 * submissions.h - storing a submission: the submission row, one patches row
 * per mail (with the message as sent), and one job per suite and machine
 * class, in one transaction.  The HTTP handler (api.h) and the mail intake
 * (intake.h) both come here.
 */
#ifndef LOCKLAB_SERVER_SUBMISSIONS_H
#define LOCKLAB_SERVER_SUBMISSIONS_H

#include <jansson.h>

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

#endif
