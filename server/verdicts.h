/*
 * verdicts.h - from stored result documents to stored comparisons, and
 * back from stored comparison rows to struct comparison for the reports.
 * Verdicts are computed only by compare_results (lib/compare.h).
 */
#ifndef LOCKLAB_SERVER_VERDICTS_H
#define LOCKLAB_SERVER_VERDICTS_H

#include <libpq-fe.h>
#include <stdbool.h>
#include <stddef.h>

#include "compare.h"

/*
 * Looks at a job's rounds with the limits it was made with: one
 * every --min-rounds up to --max-rounds, and one for a confirmation.  Each
 * look gets alpha / looks for no-change (compare_opts.looks).
 */
int verdicts_looks(int min_rounds, int max_rounds);

/*
 * Compare every base and patched document of job_id, confirming from round
 * confirm_from when it is > 0 (compare_opts).  Fills out (which must be
 * initialised).  Returns 0, 1 when a side has no document yet, or
 * a db_tx code (DB_FAIL / DB_RETRY) / -3 with a reason in err when the
 * comparison itself failed.
 */
int verdicts_compute(PGconn *c, long long job_id, int confirm_from, struct comparison *out,
                     char *err, size_t errlen);

/*
 * The base of job_id against its variant (a prefix of a series or a commit
 * of a pulled range: patch-K), as verdicts_compute compares the base with
 * patched, for the reply's columns by commit; what it returns likewise.
 */
int verdicts_compute_variant(PGconn *c, long long job_id, const char *variant,
                             struct comparison *out, char *err, size_t errlen);

/*
 * The same of the job's debug pass (a kernel job's base-debug against
 * patched-debug, docs/api.md): splats and lockups, no figures.
 */
int verdicts_compute_debug(PGconn *c, long long job_id, struct comparison *out, char *err,
                           size_t errlen);

/* Replace the job's stored comparison with cmp.  Returns 0 or a db_tx code. */
int verdicts_store(PGconn *c, long long job_id, const struct comparison *cmp, bool final);

/* True when some row of cmp is inconclusive and none locked up. */
bool verdicts_want_more(const struct comparison *cmp);

/*
 * True when a deciding row of cmp is a regression or an improvement and
 * nothing locked up: a finding the next rounds must confirm.
 */
bool verdicts_found_change(const struct comparison *cmp);

struct stored_comparison {
	long long job_id;
	char *machine_class;
	bool final;
	struct comparison cmp;
};

/*
 * The stored comparisons of a submission, in job order, rebuilt from the
 * verdicts table (and the splats of a kernel job's debug pass, from its
 * documents).  *out is a new array (free with verdicts_free).  Returns
 * 0 or a db_tx code.
 */
int verdicts_load(PGconn *c, long long submission_id, struct stored_comparison **out, size_t *n);
void verdicts_free(struct stored_comparison *v, size_t n);

/* "crash" > "lockup" > "splat" > "regression" > "inconclusive" > "improvement" > "no-change" */
int verdicts_rank(const char *verdict);
/*
 * The word a finished job's verdict is stored as: its comparison's overall
 * verdict, except that a lockup made only of the patched side's crashes
 * (lockups of kind "crash": a signal or a sanitizer's report) where the base
 * ran clean is "crash".
 */
const char *verdicts_job_word(PGconn *c, long long job_id, const struct comparison *cmp);

#endif
