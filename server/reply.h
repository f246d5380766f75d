/*
 * reply.h - the reply mail of a finished submission, in the kernel test
 * robot's manner: the finding in the first sentence, then what was tested
 * on which machine, a table of at most 100 columns, the dashboard link, the
 * stuck threads of a lockup, and the trailers (Tested-by only when earned,
 * Reported-by for a regression or lockup).  Built with GMime (mail.h) and
 * kept in the outbox, which outbox.c sends.
 */
#ifndef LOCKLAB_SERVER_REPLY_H
#define LOCKLAB_SERVER_REPLY_H

#include <libpq-fe.h>
#include <stddef.h>

/* Longest line of the reply's body, tables included. */
#define REPLY_MAX_COLUMNS 100

/*
 * Inside the caller's transaction, once the submission is done or failed:
 * build its reply and add it to the outbox ('queued' when SMTP is
 * configured and not dry-run, else 'held'), unless a reply is there
 * already or nobody can receive it (no notify address, no author
 * address).  Returns 0 or a db_tx code.
 */
int reply_queue(PGconn *c, long long submission);

/*
 * The reply of a finished submission as message text in *out (new): the
 * outbox's copy when there is one (what was or will be sent), else one
 * built now.  Returns 0, a db_tx code, or DB_ABORT with an HTTP *status
 * and msg (404 no submission, 409 not finished, 422 nobody to send to).
 */
int reply_get(PGconn *c, long long submission, char **out, int *status, char *msg, size_t msglen);

#endif
