/*
 * outbox.h - sending the outbox over SMTP with libcurl (smtp://, smtps://,
 * STARTTLS, login), at most once per mail, retried with backoff.
 *
 * How a mail cannot go out twice (docs/api.md, "The outbox"):
 *  - a sender claims one 'queued' row in one statement (FOR UPDATE SKIP
 *    LOCKED): state 'sending' with a lease longer than its SMTP timeout;
 *  - before libcurl is handed the first byte of the message (after the
 *    server accepted MAIL FROM, RCPT TO and DATA), the sender sets
 *    data_started, and only while its lease is still live; if the lease
 *    was lost it aborts before any byte of the message goes out;
 *  - an expired 'sending' row goes back to 'queued' only when data_started
 *    is false (the server cannot have the message: it delivers nothing
 *    without the closing dot).  With data_started it becomes 'unknown' and
 *    is never retried by itself.
 * So a crash between the server's 250 and the 'sent' mark leaves the mail
 * 'unknown' (maybe delivered, never sent again), not sent twice.  The
 * price: a sender that dies in that window, or a connection that breaks
 * after the closing dot and before the server's answer, leaves a mail that
 * an operator must look up (its Message-ID is recorded) and requeue by hand
 * (POST /api/v1/outbox/{id}/retry) if it was not delivered.
 */
#ifndef LOCKLAB_SERVER_OUTBOX_H
#define LOCKLAB_SERVER_OUTBOX_H

#include <libpq-fe.h>
#include <stdbool.h>

#include "http.h"

/* True when mail is sent (an --smtp-url and no --mail-dry-run). */
bool outbox_sending(void);

/*
 * Start the sender thread when outbox_sending(); a no-op otherwise.
 * Returns 0 or -1.  Stop joins it (at most one SMTP timeout later).
 */
int outbox_sender_start(void);
void outbox_sender_stop(void);

/*
 * One pass of the sender on connection c: expired leases recovered, then
 * every due mail claimed and sent in turn.  Returns the number of mails
 * the SMTP server accepted, or -1 when the database failed.
 */
int outbox_run_once(PGconn *c);

/* GET /api/v1/outbox[?state=&submission=&limit=]: the mails and their delivery state */
enum handler_rc api_outbox_list(struct http_request *req);
/* POST /api/v1/outbox/{id}/retry (admin): an unknown, failed or held mail is queued again */
enum handler_rc api_outbox_retry(struct http_request *req, long long id);

#endif
