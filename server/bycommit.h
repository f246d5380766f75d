/*
 * bycommit.h - where a change came in: a job that measured its series'
 * prefixes (or a pulled range's commits: patch-1 ...) has each compared
 * with its base, and the reply and the text report print a column per
 * prefix under their table.  Also the rows and cells the reply's table
 * and these columns share.
 */
#ifndef LOCKLAB_SERVER_BYCOMMIT_H
#define LOCKLAB_SERVER_BYCOMMIT_H

#include <libpq-fe.h>
#include <stdbool.h>
#include <stdio.h>

#include "compare.h"

/* Columns at most: the agent measures up to 6 commits one at a time (--max-prefixes). */
#define BYCOMMIT_MAX 6

struct bycommit {
	size_t n;
	char name[BYCOMMIT_MAX][16];         /* patch-1 ... */
	struct comparison cmp[BYCOMMIT_MAX]; /* the base against each */
};

/*
 * The prefixes job_id has documents of, each compared with its base as the
 * verdict's comparison is (verdicts_compute_variant), into *x (zeroed
 * first; bycommit_release it either way).  A prefix that cannot be
 * compared has no column.  Returns 0 or a db_tx code.
 */
int bycommit_load(PGconn *c, long long job_id, struct bycommit *x);
void bycommit_release(struct bycommit *x);

/*
 * Under cmp's table: for each row bycommit_row_shown but controls, the
 * base's mean and each prefix's change against the base by its own paired
 * test, then patched's (cmp's, the verdict's); a name too long for
 * max_columns goes on its own line.  Nothing when x has no prefix or no
 * row is shown.
 */
void bycommit_print(FILE *f, const struct comparison *cmp, const struct bycommit *x,
                    int max_columns);

/*
 * The rows a reply shows: every regressed, improved, locked-up or
 * significant row, and the headline rows of the touched locks.
 */
bool bycommit_row_shown(const struct compare_row *r);
/* A mean as the tables print it: 5 digits or so, no exponent above 1. */
void bycommit_num(double v, char *buf, size_t len);
/* A row's change as the tables print it: "+1.2%*" (significant), "-0.3% ", "- " without one. */
void bycommit_change(const struct compare_row *r, char *buf, size_t len);

#endif
