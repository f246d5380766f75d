/*
 * intake_internal.h - shared by the mail intake's files only; the public
 * interface is intake.h.
 *
 * intake.c reads the configuration, keeps one mail (intake_take) and runs
 * the thread, intake_poll.c reads the Maildir and IMAP sources,
 * intake_series.c makes the mails kept series and submits them.  The
 * configuration is written by intake_configure before the thread starts
 * and only read after.  Each function's full contract is the comment
 * above its definition.
 */
#ifndef LOCKLAB_SERVER_INTAKE_INTERNAL_H
#define LOCKLAB_SERVER_INTAKE_INTERNAL_H

#include <jansson.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "submissions.h"

struct intake_source {
	const char *name;
	const char *maildir;         /* a Maildir folder, or NULL */
	const char *url;             /* imap://host[:port]/MAILBOX, or NULL */
	const char *user, *password; /* IMAP login */
	const char *ca_file;         /* CA certificates (PEM) the server's must chain to */
	bool starttls;               /* require STARTTLS on imap:// */
	char *base, *mailbox;        /* url split: "imap://host:port/", "MAILBOX" */
};

struct intake_rule {
	const char *list;   /* a list address (To/Cc/List-Post), or NULL */
	const char *prefix; /* a word of the subject's [...] prefix, or NULL */
	const char *tree;
};

/* the configuration (intake.c, intake_configure) */
struct intake_config {
	json_t *doc; /* owns every string below */
	struct intake_source *sources;
	size_t nsources;
	struct intake_rule *rules;
	size_t nrules;
	const char *default_tree;
	const char *suites[MAX_SUITES];
	size_t nsuites;
	double wait_seconds, poll_seconds;
	size_t max_bytes;
	long max_per_sender; /* patch mails taken per sender per hour */
	long trailer_days;   /* how long a trailer for no known mail is kept */
};
extern struct intake_config icfg;

/* what became of each mail read, and of each series (relaxed: counters) */
enum intake_result {
	IN_TAKEN,
	IN_DUPLICATE,
	IN_IGNORED,
	IN_MALFORMED,
	IN_TRAILERS,
	IN_FLOOD,
	IN_NRESULTS
};
extern atomic_ulong in_mails[IN_NRESULTS], in_submitted, in_given_up, in_source_errors;

/* ---- intake.c ---- */

void intake_log(const char *source, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int intake_take(const char *source, const char *what, const char *raw, size_t len);

/* ---- intake_poll.c ---- */

void maildir_poll(const struct intake_source *s);
void imap_poll(const struct intake_source *s);

/* ---- intake_series.c ---- */

void intake_assemble(void);

#endif
