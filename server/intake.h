/*
 * intake.h - mail in: patch mails read from Maildirs and IMAP mailboxes,
 * put together into series and submitted.
 *
 * One thread reads every source of the configuration (--mail-config, a
 * JSON file, docs/mail.md) every poll_seconds:
 *   - a Maildir (what mbsync, getmail, fetchmail and lei write): each file
 *     of new/ is read, then moved to cur/ with the Seen flag;
 *   - an IMAP mailbox over libcurl (imap://, imaps://, STARTTLS, login):
 *     the UIDs past the last one taken, remembered with the mailbox's
 *     UIDVALIDITY in the database (mail_seen) across restarts.
 * A mail whose subject carries a patch prefix and that is no reply is kept
 * (mail_messages, by Message-ID: the same mail again is nothing new); other
 * mail is left alone; malformed mail (no Message-ID, no diff, too big,
 * unreadable) is skipped with the reason on stderr.  Every poll then
 * groups the waiting mails into series (thread and version, mbox.h) and
 * submits each complete one (cover letter and every part; a missing cover
 * is waited for wait_seconds), on the tree the configuration maps its list
 * address or subject prefix to.  A series still incomplete after
 * wait_seconds is given up, saying which parts are missing.  A newer
 * version is a new submission linked to the older (previous_id), and so is
 * a copy of a submitted series sent again without a new version label.
 */
#ifndef LOCKLAB_SERVER_INTAKE_H
#define LOCKLAB_SERVER_INTAKE_H

#include <stdio.h>

/*
 * Read and check the configuration file at path (before the server touches
 * the database).  Returns 0, or -1 with the reason on stderr.
 */
int intake_configure(const char *path);

/*
 * Start the intake thread on the configuration intake_configure read.
 * Returns 0, or -1 with the reason on stderr (nothing started).
 */
int intake_start(void);

/* Stop the thread (after its current mail) and free the configuration. */
void intake_stop(void);

/* The intake's counters in the Prometheus text format (for /metrics). */
void intake_metrics(FILE *out);

#endif
