/*
 * reports.h - tables and the reply mail, rendered from stored comparisons
 * with report_render / report_lockup_sentences (lib/report.h).
 */
#ifndef LOCKLAB_SERVER_REPORTS_H
#define LOCKLAB_SERVER_REPORTS_H

#include <libpq-fe.h>

/*
 * Called inside the transaction that finished a job of submission: when
 * every job is done, mark the submission done with the worst verdict and
 * keep its rendered tables (reports) and reply mail (outbox).  The caller
 * holds the job's row lock; this takes the submission's.  Returns 0 or a
 * db_tx code.
 */
int reports_job_done(PGconn *c, long long submission);

#endif
