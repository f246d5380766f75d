/*
 * reply_internal.h - shared by the reply mail's files only; the public
 * interface is reply.h.
 *
 * reply.c loads what a reply is built from and builds the mail,
 * reply_finding.c writes what the body says, reply_table.c its wrapped
 * prose, %change table and stacks.  Each function's full contract is the
 * comment above its definition.  Everything handed in is borrowed.
 */
#ifndef LOCKLAB_SERVER_REPLY_INTERNAL_H
#define LOCKLAB_SERVER_REPLY_INTERNAL_H

#include <libpq-fe.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "bycommit.h"
#include "compare.h"
#include "verdicts.h"

/* What a reply is built from (reply.c, reply_load); reply_data_release frees it. */
struct reply_data {
	long long id;
	PGresult *sub; /* state, subject, reply_to_msgid, notify, reason, verdict, suites, source,
	                  url, git_url, git_ref, git_base, tree, branch, tree kind */
	PGresult
	    *head; /* author, subject, message_id, mail_references, mail_to, mail_cc, patches */
	PGresult *jobs; /* not done, regression or lockup, all, not build */
	PGresult *reviewers;
	PGresult *commits; /* variant, label, range: the commits of a pulled range measured */
	struct stored_comparison *cmps;
	size_t ncmps;
	struct bycommit *pre; /* one per comparison, or NULL */
	bool done;
};

/* ---- reply_table.c ---- */

void reply_wrap(FILE *f, const char *text, size_t start, int indent);
void reply_table(FILE *f, const struct stored_comparison *sc);
void reply_splat(FILE *f, const struct comparison *c);
void reply_stacks(FILE *f, const struct comparison *c);

/* ---- reply_finding.c ---- */

bool reply_tested(const struct reply_data *d);
void reply_finding(FILE *f, const struct reply_data *d, bool tested);
void reply_paragraphs(FILE *f, const struct reply_data *d,
                      size_t (*write)(FILE *s, const struct stored_comparison *sc));
size_t reply_notes(FILE *s, const struct stored_comparison *sc);
size_t reply_unresolvable(FILE *s, const struct stored_comparison *sc);
void reply_what(FILE *f, const struct reply_data *d);

#endif
