/*
 * reply_finding.c - what the reply says (reply_internal.h): the finding of
 * a submission's comparisons (regression, improvement, no change, lockup,
 * crash), what was tested and measured, the notes and the rows no machine
 * could resolve.
 */
#include "reply.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "reply_internal.h"
#include "report.h"
#include "verdicts.h"

static void reply_point(FILE *f, const struct compare_row *r)
{
	fprintf(f, "%s.%s.%s", r->workload, r->lock, r->metric);
	if (*r->params_key)
		fprintf(f, " (%s)", r->params_key);
}

/*
 * The deciding row with verdict want and the largest change over every
 * comparison (any row for a lockup), and in *count how many there are.
 */
static const struct compare_row *reply_worst(const struct reply_data *d, enum verdict want,
                                             size_t *count)
{
	const struct compare_row *best = NULL;

	*count = 0;
	for (size_t i = 0; i < d->ncmps; i++) {
		const struct comparison *c = &d->cmps[i].cmp;

		for (size_t k = 0; k < c->nrows; k++) {
			const struct compare_row *r = &c->rows[k];

			if (r->verdict != want ||
			    (want != VERDICT_LOCKUP && !compare_row_decides(r)))
				continue;
			(*count)++;
			/* a timed row leads; an escalated code-path note only when alone */
			if (!best || (compare_row_is_note(best) && !compare_row_is_note(r)) ||
			    (compare_row_is_note(best) == compare_row_is_note(r) &&
			     fabs(r->change) > fabs(best->change)))
				best = r;
		}
	}
	return best;
}

/*
 * The deciding headline rows a test stands on, and in *bound the widest
 * change their 95% intervals allow (relative).
 */
static size_t reply_measured(const struct reply_data *d, double *bound)
{
	size_t rows = 0;

	*bound = 0;
	for (size_t i = 0; i < d->ncmps; i++)
		for (size_t k = 0; k < d->cmps[i].cmp.nrows; k++) {
			const struct compare_row *x = &d->cmps[i].cmp.rows[k];

			if (!x->headline || !x->tested || !compare_row_decides(x))
				continue;
			rows++;
			*bound = fmax(*bound, fmax(fabs(x->change_lo), fabs(x->change_hi)));
		}
	return rows;
}

/*
 * True when every comparison of d ran one image on both sides (compare.h,
 * identical_code): the patch changed no code any suite ran.  *rows is then
 * the count of headline rows measured, as this machine's A/A.
 */
static bool reply_identical(const struct reply_data *d, size_t *rows)
{
	*rows = 0;
	for (size_t i = 0; i < d->ncmps; i++) {
		const struct comparison *c = &d->cmps[i].cmp;

		if (!c->identical_code)
			return false;
		for (size_t k = 0; k < c->nrows; k++)
			*rows += c->rows[k].headline && c->rows[k].tested;
	}
	return d->ncmps > 0;
}

/*
 * A deciding row that stayed inconclusive because its machine cannot
 * resolve it (plan.h, or futility from the job's own rounds): it asked for
 * no more rounds, and it holds back a Tested-by.
 */
static bool reply_row_unresolved(const struct compare_row *x)
{
	return x->unresolvable > 0 && x->verdict == VERDICT_INCONCLUSIVE && compare_row_decides(x);
}

/* " +1.5% [-8.2%, +12.2%]": a row's change and its 95% interval. */
static void reply_interval(FILE *f, const struct compare_row *x)
{
	fprintf(f, " %+.1f%% [%+.1f%%, %+.1f%%]", x->change * 100, x->change_lo * 100,
	        x->change_hi * 100);
}

/* True when some row of d is reply_row_unresolved. */
static bool reply_unresolved(const struct reply_data *d)
{
	for (size_t i = 0; i < d->ncmps; i++)
		for (size_t k = 0; k < d->cmps[i].cmp.nrows; k++)
			if (reply_row_unresolved(&d->cmps[i].cmp.rows[k]))
				return true;
	return false;
}

/*
 * Tested-by: every job ran, none regressed or locked up, not build-only,
 * and the verdict no-change or improvement, which comparison_overall gives
 * only when every deciding row of every comparison was shown unchanged
 * within its margin (or improved); and some headline row was measured.
 */
bool reply_tested(const struct reply_data *d)
{
	const char *verdict = db_value(d->sub, 0, 5);
	double bound;
	size_t same;

	return d->done &&
	       (reply_measured(d, &bound) > 0 || (reply_identical(d, &same) && same > 0)) &&
	       atoi(PQgetvalue(d->jobs, 0, 0)) == 0 && atoi(PQgetvalue(d->jobs, 0, 1)) == 0 &&
	       atoi(PQgetvalue(d->jobs, 0, 2)) > 0 && atoi(PQgetvalue(d->jobs, 0, 3)) > 0 &&
	       verdict &&
	       (strcmp(verdict, "no-change") == 0 || strcmp(verdict, "improvement") == 0);
}

/*
 * Where a crash happened, from its gdb stacks (lockbench/src/runner.c): the
 * first frame under "<signal handler called>" that is not the C library's
 * (abort, raise), as "FUNCTION at FILE:LINE" into out.  0, or -1 when the
 * stacks do not say.
 */
static int reply_crash_frame(const char *stacks, char *out, size_t len)
{
	const char *p = stacks ? strstr(stacks, "<signal handler called>") : NULL;

	while (p && (p = strchr(p, '\n')) != NULL && *++p == '#') {
		const char *in = strstr(p, " in "), *at, *eol = strchr(p, '\n');
		int fn, loc;

		if (!eol)
			eol = p + strlen(p);
		at = strstr(p, ") at ");
		if (!at || at > eol || !in || in > at || at[5] == '.')
			continue; /* the C library's frames: ./nptl/..., ../sysdeps/... */
		fn = (int)strcspn(in + 4, " (");
		loc = (int)(eol - (at + 5));
		snprintf(out, len, "%.*s at %.*s", fn, in + 4, loc, at + 5);
		return 0;
	}
	return -1;
}

/*
 * The finding of a crash: the patched side's first crash row (a lockup of
 * kind crash: the signal or the sanitizer in its message), the point that
 * ran, and that the base ran it clean; its stack follows the table
 * (reply_stacks).
 */
static void reply_crash_finding(FILE *s, const struct reply_data *d)
{
	size_t count = 0;
	const struct compare_row *r = reply_worst(d, VERDICT_LOCKUP, &count);
	char where[256];

	if (!r) {
		fprintf(s, "locklab noticed that the patched lockbench crashed where the base ran "
		           "clean");
		return;
	}
	/* workload "lockbench": the process itself died (agents/run_document.c), not one point */
	fprintf(s, "locklab noticed a crash: the patched lockbench");
	if (strcmp(r->workload, "lockbench") != 0)
		fprintf(s, " running %s with %s", r->workload, r->lock);
	if (strcmp(r->workload, "lockbench") != 0 && *r->params_key)
		fprintf(s, " (%s)", r->params_key);
	fprintf(s, " crashed (%s)", r->lockup_message ? r->lockup_message : "no message");
	if (reply_crash_frame(r->lockup_stacks, where, sizeof(where)) == 0)
		fprintf(s, " in %s", where);
	fprintf(s, ", where the base ran %s clean",
	        strcmp(r->workload, "lockbench") != 0 ? "the same point" : "its lockbench");
	if (count > 1)
		fprintf(s, " (%zu crash rows in all)", count);
}

/* The splat verdict's sentence: the first report the patched kernel printed, the base not. */
static void finding_splat(FILE *s, const struct reply_data *d)
{
	const struct compare_splat *sp = NULL;

	for (size_t i = 0; !sp && i < d->ncmps; i++)
		for (size_t k = 0; !sp && k < d->cmps[i].cmp.nsplats; k++)
			if (d->cmps[i].cmp.splats[k].new_in_patched)
				sp = &d->cmps[i].cmp.splats[k];
	if (sp)
		fprintf(s,
		        "locklab noticed a kernel report the patched kernel printed (in %d "
		        "round%s) and the base never did: %s",
		        sp->patched_fail, sp->patched_fail == 1 ? "" : "s",
		        sp->message ? sp->message : sp->key);
	else
		fprintf(s, "locklab noticed a kernel report the base did not print.");
}

/* The inconclusive verdict's sentence: the rows that held it there, the widest interval named. */
static void finding_inconclusive(FILE *s, const struct reply_data *d)
{
	size_t count = 0;
	const struct compare_row *wide = NULL;
	size_t deciding = 0;

	for (size_t i = 0; i < d->ncmps; i++)
		for (size_t k = 0; k < d->cmps[i].cmp.nrows; k++) {
			const struct compare_row *x = &d->cmps[i].cmp.rows[k];

			if (!compare_row_decides(x))
				continue;
			deciding++;
			if (x->verdict != VERDICT_INCONCLUSIVE)
				continue;
			count++;
			if (!wide ||
			    x->change_hi - x->change_lo > wide->change_hi - wide->change_lo)
				wide = x;
		}
	if (!deciding)
		fprintf(s, "locklab measured no row that decides (a headline row of a lock the "
		           "patch touches), so it cannot say nothing changed: no Tested-by.");
	else if (wide) {
		fprintf(s,
		        "locklab could not show every deciding row unchanged: %zu row%s "
		        "stayed inconclusive, ",
		        count, count == 1 ? "" : "s");
		reply_point(s, wide);
		reply_interval(s, wide);
		fprintf(s, " against its +-%g%% margin, so no Tested-by.", wide->margin * 100);
	} else
		fprintf(s, "locklab could not tell a change from noise.");
}

/* The no-change verdict's sentence: what was measured and how closely, or why nothing was. */
static void finding_no_change(FILE *s, const struct reply_data *d, bool tested)
{
	double bound;
	size_t rows = reply_measured(d, &bound), same = 0;

	if (reply_identical(d, &same) && same > 0)
		fprintf(s,
		        "locklab found the patched build's code identical to the base's (one "
		        "image, %.19s...): the patch changes no code the %s suite%s run%s, so "
		        "it cannot change their figures; %zu row%s measured as this machine's "
		        "own A/A%s",
		        d->cmps[0].cmp.image, PQgetvalue(d->sub, 0, 6),
		        strchr(PQgetvalue(d->sub, 0, 6), ',') ? "s" : "",
		        strchr(PQgetvalue(d->sub, 0, 6), ',') ? "" : "s", same,
		        same == 1 ? "" : "s", tested ? " - Tested-by below." : ".");
	else if (rows == 0 && reply_unresolved(d))
		fprintf(s,
		        "locklab ran the %s suite%s, but this machine cannot resolve any of "
		        "its rows within their margins, so no Tested-by.",
		        PQgetvalue(d->sub, 0, 6), strchr(PQgetvalue(d->sub, 0, 6), ',') ? "s" : "");
	else if (rows == 0)
		fprintf(s,
		        "locklab built and ran the %s suite%s: no benchmark row to compare, so "
		        "no Tested-by.",
		        PQgetvalue(d->sub, 0, 6), strchr(PQgetvalue(d->sub, 0, 6), ',') ? "s" : "");
	else
		fprintf(s,
		        "locklab found no change beyond +-%.1f%% on %zu row%s of the %s "
		        "suite%s%s",
		        bound * 100, rows, rows == 1 ? "" : "s", PQgetvalue(d->sub, 0, 6),
		        strchr(PQgetvalue(d->sub, 0, 6), ',') ? "s" : "",
		        tested ? " - Tested-by below." : ".");
}

/* The first paragraph: the finding in one sentence. */
void reply_finding(FILE *f, const struct reply_data *d, bool tested)
{
	const char *verdict = db_value(d->sub, 0, 5);
	char *text = NULL;
	size_t len = 0, count = 0;
	FILE *s = open_memstream(&text, &len);
	const struct compare_row *r;

	if (!s)
		return;
	if (!d->done) {
		fprintf(s, "locklab could not test this: %s",
		        db_value(d->sub, 0, 4) ? db_value(d->sub, 0, 4) : "the job failed");
	} else if (verdict && strcmp(verdict, "crash") == 0) {
		reply_crash_finding(s, d);
	} else if (verdict && strcmp(verdict, "lockup") == 0 &&
	           (r = reply_worst(d, VERDICT_LOCKUP, &count)) != NULL) {
		struct comparison one = {.rows = (struct compare_row *)r, .nrows = 1};
		char *sentence = report_lockup_sentences(&one);
		size_t n = strlen(sentence);

		while (n && sentence[n - 1] == '\n')
			sentence[--n] = 0;
		fprintf(s, "locklab noticed a lockup: %s", sentence);
		if (count > 1)
			fprintf(s, " (%zu lockup rows in all)", count);
		free(sentence);
	} else if (verdict && strcmp(verdict, "splat") == 0) {
		finding_splat(s, d);
	} else if (verdict &&
	           (strcmp(verdict, "regression") == 0 || strcmp(verdict, "improvement") == 0) &&
	           (r = reply_worst(d,
	                            strcmp(verdict, "regression") == 0 ? VERDICT_REGRESSION
	                                                               : VERDICT_IMPROVEMENT,
	                            &count)) != NULL) {
		fprintf(s, "locklab noticed a %.1f%% %s of ", fabs(r->change) * 100, verdict);
		reply_point(s, r);
		if (count > 1)
			fprintf(s, " and %zu more %s%s", count - 1, verdict, count > 2 ? "s" : "");
		fputc('.', s);
	} else if (verdict && strcmp(verdict, "inconclusive") == 0) {
		finding_inconclusive(s, d);
	} else if (verdict && strcmp(verdict, "no-change") == 0) {
		finding_no_change(s, d, tested);
	} else {
		fprintf(s, "locklab finished with the verdict %s.", verdict ? verdict : "none");
	}
	if (fclose(s) == 0 && text)
		reply_wrap(f, text, 0, 0);
	free(text);
}

/*
 * One paragraph per comparison of a finished submission, after the
 * finding: what write says of the comparison (it returns the rows it named;
 * none, no paragraph).
 */
void reply_paragraphs(FILE *f, const struct reply_data *d,
                      size_t (*write)(FILE *s, const struct stored_comparison *sc))
{
	for (size_t i = 0; d->done && i < d->ncmps; i++) {
		char *text = NULL;
		size_t len = 0, n;
		FILE *s = open_memstream(&text, &len);

		if (!s)
			return;
		n = write(s, &d->cmps[i]);
		if (fclose(s) == 0 && text && n) {
			fputc('\n', f);
			reply_wrap(f, text, 0, 0);
		}
		free(text);
	}
}

/*
 * The code-path notes (instruction counts) that moved: "+1 instruction a
 * pair, 30 -> 31".  They decide nothing alone (compare.h,
 * compare_row_is_note).
 */
size_t reply_notes(FILE *s, const struct stored_comparison *sc)
{
	const struct comparison *c = &sc->cmp;
	char note[128];
	size_t n = 0;

	for (size_t k = 0; k < c->nrows; k++) {
		const struct compare_row *x = &c->rows[k];

		if (x->control || !report_note_text(x, note, sizeof(note)) ||
		    x->patched.mean == x->base.mean)
			continue;
		fprintf(s, "%s%s.%s: %s", n++ ? "; " : "Code path: ", x->workload, x->lock, note);
		if (x->escalated)
			fprintf(s, " (past %g%% beside a timed row not shown unchanged: it counts)",
			        COMPARE_NOTE_ESCALATE * 100);
	}
	if (n)
		fputs(". An instruction count is a note beside the timed rows: it decides nothing "
		      "alone.",
		      s);
	return n;
}

/*
 * The deciding rows this machine cannot resolve (plan.h: the noise profile
 * up front, or futility from the job's own rounds): each with its interval,
 * never counted as no-change, and each holds back the Tested-by.
 */
size_t reply_unresolvable(FILE *s, const struct stored_comparison *sc)
{
	const struct comparison *c = &sc->cmp;
	size_t n = 0;

	for (size_t k = 0; k < c->nrows; k++) {
		const struct compare_row *x = &c->rows[k];

		if (!reply_row_unresolved(x))
			continue;
		if (n++ == 0)
			fprintf(s, "This machine (class %s) cannot resolve less than ",
			        sc->machine_class);
		else
			fputs(", ", s);
		fprintf(s, "%.1f%% on ", x->unresolvable * 100);
		reply_point(s, x);
		fprintf(s, " (margin +-%g%%, measured", x->margin * 100);
		reply_interval(s, x);
		fputc(')', s);
	}
	if (n)
		fprintf(
		    s,
		    ": not resolvable on this machine, so %s not counted as no-change and %s "
		    "back a Tested-by, which needs every deciding row shown unchanged. It would "
		    "take a machine class that resolves %s within %s margin, or a margin as "
		    "wide as the figure above.",
		    n == 1 ? "it is" : "they are", n == 1 ? "holds" : "hold",
		    n == 1 ? "it" : "them", n == 1 ? "its" : "their");
	return n;
}

/* What was tested: the series (or git ref), its author and tree. */
/*
 * A range of commits (a pull request): which commit each variant was, as
 * the agent said in its documents ("commit", result.h), or that the range
 * was measured as one patch, and why: a kernel tree's range always is.
 */
static void reply_commits(FILE *f, const struct reply_data *d)
{
	int n = d->commits ? PQntuples(d->commits) : 0;
	int range = n ? atoi(PQgetvalue(d->commits, n - 1, 2)) : 0;
	bool kernel = !strcmp(PQgetvalue(d->sub, 0, 14), "kernel");
	char line[256];

	if (range < 2)
		return;
	if (n == 1) {
		snprintf(line, sizeof(line),
		         "the pulled range's %d commits, measured as one patch: %s", range,
		         kernel
		             ? "a kernel tree's range is built and booted once, as its series are"
		             : "more than the agent measures one commit at a time "
		               "(--max-prefixes)");
		fputs("commits: ", f);
		reply_wrap(f, line, 9, 9);
		return;
	}
	fprintf(f, "commits: the pulled range's %d, each measured as a series' patch:\n", range);
	for (int i = 0; i < n; i++) {
		snprintf(line, sizeof(line), "%s: %s", PQgetvalue(d->commits, i, 0),
		         PQgetvalue(d->commits, i, 1));
		fprintf(f, "%9s", "");
		reply_wrap(f, line, 9, 18);
	}
}

void reply_what(FILE *f, const struct reply_data *d)
{
	bool has_head = PQntuples(d->head) == 1;
	int patches = has_head ? atoi(PQgetvalue(d->head, 0, 6)) : 0;
	char *line = NULL;
	size_t len = 0;
	FILE *s;

	if (has_head) {
		s = open_memstream(&line, &len);
		if (!s)
			return;
		fprintf(s, "%s (%d patch%s)", PQgetvalue(d->head, 0, 1), patches,
		        patches == 1 ? "" : "es");
		fputs("series:  ", f);
		if (fclose(s) == 0)
			reply_wrap(f, line, 9, 9);
		free(line);
		fprintf(f, "author:  %s\n", PQgetvalue(d->head, 0, 0));
	} else if (db_value(d->sub, 0, 9)) {
		fprintf(f, "git:     %s %s", PQgetvalue(d->sub, 0, 9), PQgetvalue(d->sub, 0, 10));
		if (db_value(d->sub, 0, 11))
			fprintf(f, " (base %s)", PQgetvalue(d->sub, 0, 11));
		fputc('\n', f);
	}
	if (db_value(d->sub, 0, 12))
		fprintf(f, "tree:    %s (%s)\n", PQgetvalue(d->sub, 0, 12),
		        PQgetvalue(d->sub, 0, 13));
	fprintf(f, "suites:  %s\n", PQgetvalue(d->sub, 0, 6));
	reply_commits(f, d);
}
