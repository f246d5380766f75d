/*
 * trackalert.c - what the tracker does with a proposed step
 * (track_internal.h): the A/B that confirms it, the alert a confirmed
 * regression becomes (and its events), the fix a later improvement marks,
 * bisection to the first bad commit (its mail: trackmail.c).  The
 * steps are proposed by track.c; the alerts' HTTP side is trackapi.c.
 */
#include "track_internal.h"

#include <glib.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "config.h"
#include "db.h"

/* ---- confirmation, alerts, fixes ----------------------------------------------- */

/* A line of the alert's history (alert_events); note may be NULL. */
void track_event(PGconn *c, const char *alert, const char *state, const char *who, const char *note)
{
	const char *p[4] = {alert, state, who, note};

	db_run(c, "INSERT INTO alert_events (alert_id, state, who, note) VALUES ($1, $2, $3, $4)",
	       4, p);
}

/* The verdicts that are a fault, not a change of speed, as SQL: an alert's metric names them. */
#define TRACK_FAULTS "('splat', 'lockup', 'crash')"

bool track_metric_is_fault(const char *metric)
{
	return !strcmp(metric, "splat") || !strcmp(metric, "lockup") || !strcmp(metric, "crash");
}

/*
 * The alert of any row of st's tree, branch and machine class that
 * already stands for the step an A/B run showed in (st->good, st->bad]:
 * one bisected to a commit inside that range, or an open one not named to
 * one commit (bisection goes on or stopped short) in a range that
 * overlaps it.  A step moves several rows at once and an A/B run names it
 * on the row it is surest of, which need not be the row an earlier run
 * chose: the step has one alert all the same.  A named commit stands for
 * its step whatever became of the alert: `wontfix` and `invalid` are a
 * maintainer's word on that commit, and a `fixed` alert's step is found
 * again by a change point or a sample run over the history, until the
 * range holds its fix as well (the step it shows is then another one).
 * A fault (splat, lockup, crash) and a change of speed are two findings:
 * an alert stands only for steps of its own kind.
 * Its id (>0), 0 when none, -1 on a database error.
 */
static long long track_step_covered(PGconn *c, const struct track_step *st)
{
	const char *p[6] = {st->tree, st->branch, st->series[0],
	                    st->good, st->bad,    track_metric_is_fault(st->series[3]) ? "t" : "f"};
	PGresult *res = db_exec(
	    c,
	    "SELECT a.id FROM alerts a JOIN track_commits ng ON ng.tree_id = a.tree_id AND "
	    "ng.branch = a.branch AND ng.commit = $4 JOIN track_commits nb ON nb.tree_id = "
	    "a.tree_id AND nb.branch = a.branch AND nb.commit = $5 LEFT JOIN track_commits ac ON "
	    "ac.tree_id = a.tree_id AND ac.branch = a.branch AND ac.commit = a.commit LEFT JOIN "
	    "track_commits fc ON fc.tree_id = a.tree_id AND fc.branch = a.branch AND fc.commit = "
	    "a.fixed_by JOIN track_commits bg ON bg.tree_id = a.tree_id AND bg.branch = a.branch "
	    "AND bg.commit = a.bisect_good JOIN track_commits bb ON bb.tree_id = a.tree_id AND "
	    "bb.branch = a.branch AND bb.commit = a.bisect_bad WHERE a.tree_id = $1::bigint AND "
	    "a.branch = $2 AND a.machine_class = $3 AND (a.metric IN " TRACK_FAULTS ") = "
	    "$6::boolean AND bb.segment = nb.segment AND CASE WHEN "
	    "a.commit IS NOT NULL THEN ac.segment = nb.segment AND ac.seq > ng.seq AND ac.seq <= "
	    "nb.seq AND (a.state <> 'fixed' OR fc.seq IS NULL OR fc.segment <> nb.segment OR "
	    "fc.seq > nb.seq) ELSE a.state IN ('new', 'confirmed', 'bisected') AND ng.seq < "
	    "bb.seq AND nb.seq > bg.seq END ORDER BY a.id LIMIT 1",
	    6, p);
	long long id = -1;

	if (res) {
		id = PQntuples(res) == 1 ? strtoll(PQgetvalue(res, 0, 0), NULL, 10) : 0;
		PQclear(res);
	}
	return id;
}

/*
 * Open the alert of a confirmed regression st (row: the A/B that confirmed
 * it, run its track_runs id), state confirmed, with two events (new_note,
 * confirmed_note), unless an alert of the series that is not closed already
 * covers part of its range, or an alert of any row stands for the step
 * (track_step_covered): one step, one alert, however it was found.
 * Its id (>0), 0 when none was opened, -1 on a database error.
 */
long long track_alert_open(PGconn *c, const struct track_step *st, const struct track_row *row,
                           const char *run, const char *new_note, const char *confirmed_note)
{
	char change[32], before[32], after[32];
	const char *p[15] = {st->tree,      st->branch,    st->series[0], st->series[1],
	                     st->series[2], st->series[3], st->series[4], st->good,
	                     st->bad,       change,        before,        after,
	                     row->unit,     run,           st->found_by};
	PGresult *ins;
	long long id = track_step_covered(c, st);

	if (id != 0) {
		if (id > 0)
			fprintf(stderr,
			        "locklab-server: tracker: alert %lld already stands for the step "
			        "%.12s..%.12s (%s: %s)\n",
			        id, st->good, st->bad, st->found_by, new_note);
		return id < 0 ? -1 : 0;
	}
	snprintf(change, sizeof(change), "%.6f", row->change);
	snprintf(before, sizeof(before), "%.6g", row->base_mean);
	snprintf(after, sizeof(after), "%.6g", row->patched_mean);
	ins = db_exec(
	    c,
	    "INSERT INTO alerts (tree_id, branch, machine_class, workload, lock, metric, "
	    "params_key, state, good, bad, bisect_good, bisect_bad, change, before_mean, "
	    "after_mean, unit, confirm_run, found_by) SELECT $1::bigint, $2, $3, $4, $5, $6, $7, "
	    "'confirmed', $8, $9, $8, $9, $10::double precision, $11::double precision, "
	    "$12::double precision, $13, $14::bigint, $15 WHERE NOT EXISTS (SELECT 1 FROM alerts a "
	    "JOIN track_commits ag ON ag.tree_id = a.tree_id AND ag.branch = a.branch AND "
	    "ag.commit = a.good JOIN track_commits ab ON ab.tree_id = a.tree_id AND ab.branch = "
	    "a.branch AND ab.commit = a.bad JOIN track_commits ng ON ng.tree_id = a.tree_id AND "
	    "ng.branch = a.branch AND ng.commit = $8 JOIN track_commits nb ON nb.tree_id = "
	    "a.tree_id AND nb.branch = a.branch AND nb.commit = $9 WHERE a.tree_id = $1::bigint "
	    "AND a.branch = $2 AND a.machine_class = $3 AND a.workload = $4 AND a.lock = $5 AND "
	    "a.metric = $6 AND a.params_key = $7 AND a.state IN ('new', 'confirmed', 'bisected') "
	    "AND ab.segment = nb.segment AND ng.seq < ab.seq AND nb.seq > ag.seq) ON CONFLICT DO "
	    "NOTHING RETURNING id",
	    15, p);
	if (!ins)
		return -1;
	id = 0;
	if (PQntuples(ins) == 1) {
		const char *aid = PQgetvalue(ins, 0, 0);

		id = strtoll(aid, NULL, 10);
		track_event(c, aid, "new", "tracker", new_note);
		track_event(c, aid, "confirmed", "tracker", confirmed_note);
		if (track_metric_is_fault(st->series[3]))
			fprintf(stderr, "locklab-server: tracker: alert %s (%s): %s at %s %s %s\n",
			        aid, st->found_by, st->series[3], st->series[1], st->series[2],
			        st->series[4]);
		else
			fprintf(stderr,
			        "locklab-server: tracker: alert %s (%s): %s %s %s %+.1f%%\n", aid,
			        st->found_by, st->series[1], st->series[2], st->series[3],
			        100 * row->change);
	}
	PQclear(ins);
	return id;
}

/*
 * Run sql, an UPDATE of alerts ... RETURNING a.id whose $1..$7 are st's
 * tree, branch and series and $8, $9 its good and bad ends, and record an
 * event (state, note) of each alert it changed.  How many, -1 on a
 * database error.
 */
static int track_alerts_update(PGconn *c, const struct track_step *st, const char *sql,
                               const char *state, const char *note)
{
	const char *p[9] = {st->tree,      st->branch,    st->series[0],
	                    st->series[1], st->series[2], st->series[3],
	                    st->series[4], st->good,      st->bad};
	PGresult *res = db_exec(c, sql, 9, p);
	int k, n;

	if (!res)
		return -1;
	n = PQntuples(res);
	for (k = 0; k < n; k++)
		track_event(c, PQgetvalue(res, k, 0), state, "tracker", note);
	PQclear(res);
	return n;
}

/*
 * A confirmed improvement st reverses the open alerts of its series whose
 * step it follows: they become fixed (fixed_by its bad end), with note.
 */
void track_alert_fix(PGconn *c, const struct track_step *st, const char *note)
{
	track_alerts_update(
	    c, st,
	    "UPDATE alerts a SET state = 'fixed', fixed_by = $9, state_by = 'tracker', state_at = "
	    "now() FROM track_commits ab, track_commits g WHERE a.tree_id = $1 AND a.branch = $2 "
	    "AND a.machine_class = $3 AND a.workload = $4 AND a.lock = $5 AND a.metric = $6 AND "
	    "a.params_key = $7 AND a.state IN ('new', 'confirmed', 'bisected') AND ab.tree_id = "
	    "a.tree_id AND ab.branch = a.branch AND ab.commit = a.bad AND g.tree_id = a.tree_id "
	    "AND g.branch = a.branch AND g.commit = $8 AND ab.seq <= g.seq RETURNING a.id",
	    "fixed", note);
}

/*
 * A regression an A/B run showed inside the range an alert of its series
 * is being bisected in: the range narrows to it (bisection goes on there).
 * 1 when it did, 0 when no such alert, -1 on a database error.
 */
static int track_alert_narrow(PGconn *c, const struct track_step *st, const char *note)
{
	int n = track_alerts_update(
	    c, st,
	    "UPDATE alerts a SET bisect_good = $8, bisect_bad = $9 FROM track_commits g, "
	    "track_commits b, track_commits ng, track_commits nb WHERE a.tree_id = $1 AND "
	    "a.branch = $2 AND a.machine_class = $3 AND a.workload = $4 AND a.lock = $5 AND "
	    "a.metric = $6 AND a.params_key = $7 AND a.state = 'confirmed' AND a.commit IS NULL "
	    "AND a.reason IS NULL AND g.tree_id = a.tree_id AND g.branch = a.branch AND g.commit "
	    "= a.bisect_good AND b.tree_id = a.tree_id AND b.branch = a.branch AND b.commit = "
	    "a.bisect_bad AND ng.tree_id = a.tree_id AND ng.branch = a.branch AND ng.commit = $8 "
	    "AND nb.tree_id = a.tree_id AND nb.branch = a.branch AND nb.commit = $9 AND "
	    "nb.segment = b.segment AND ng.seq >= g.seq AND nb.seq <= b.seq AND nb.seq - ng.seq < "
	    "b.seq - g.seq RETURNING a.id",
	    "confirmed", note);

	if (n > 0)
		fprintf(stderr,
		        "locklab-server: tracker: %d alert(s): bisection narrows to %.12s..%.12s\n",
		        n, st->good, st->bad);
	return n < 0 ? -1 : n > 0;
}

/*
 * Row i of track_ab_steps' query as a step (series, st, row borrow from
 * res) and the note that says which A/B showed it (new, the caller frees it).
 */
static char *track_ab_row(PGresult *res, int i, const char *series[5], struct track_step *st,
                          struct track_row *row)
{
	const char *purpose = PQgetvalue(res, i, 2);
	int k;

	for (k = 0; k < 5; k++)
		series[k] = PQgetvalue(res, i, 5 + k);
	*st =
	    (struct track_step){.tree = PQgetvalue(res, i, 0),
	                        .branch = PQgetvalue(res, i, 1),
	                        .series = series,
	                        .good = PQgetvalue(res, i, 3),
	                        .bad = PQgetvalue(res, i, 4),
	                        .found_by = strcmp(purpose, "head") == 0 ? "ab-head" : "ab-sample"};
	*row = (struct track_row){.change = strtod(PQgetvalue(res, i, 11), NULL),
	                          .base_mean = strtod(PQgetvalue(res, i, 12), NULL),
	                          .patched_mean = strtod(PQgetvalue(res, i, 13), NULL)};
	snprintf(row->verdict, sizeof(row->verdict), "%s", PQgetvalue(res, i, 10));
	snprintf(row->unit, sizeof(row->unit), "%s", PQgetvalue(res, i, 14));
	return g_strdup_printf("the interleaved A/B of the %s run %.12s..%.12s: %s %+.1f%%",
	                       purpose, st->good, st->bad, row->verdict, 100 * row->change);
}

/*
 * A head or sample run that ended: each headline row whose interleaved A/B
 * (with its confirmation) ended `regression` is a confirmed step between
 * the run's two commits.  A row that regressed inside the range an alert
 * of its series is being bisected in narrows that range.  Else one alert
 * opens at once for the step (found_by ab-head or ab-sample), on the row
 * the A/B was surest of (the largest change against the width of its
 * interval, as logarithms of the ratio), the other rows that regressed
 * named in its first event;
 * track_bisect bisects it inside the run's range.  A row that ended
 * `improvement` fixes the open alerts whose step it follows.
 */
void track_ab_steps(PGconn *c, const char *run)
{
	const char *p[1] = {run};
	/*
	 * the surest rows first: the change over its interval's width, both as
	 * logarithms of the ratio (a -93% and a +1300% are the same step; a
	 * row's noise on a commit without the step is its width there)
	 */
	PGresult *res = db_exec(
	    c,
	    "SELECT * FROM (SELECT DISTINCT ON (j.machine_class, v.workload, v.lock, v.metric, "
	    "v.params_key) r.tree_id, r.branch, r.purpose, r.base_commit, r.commit, "
	    "j.machine_class, v.workload, v.lock, v.metric, v.params_key, v.verdict, v.change, "
	    "v.base_mean, v.patched_mean, v.unit, abs(ln(nullif(greatest(1 + v.change, 0), 0))) / "
	    "(ln(nullif(greatest(1 + v.change_hi, 0), 0)) - ln(nullif(greatest(1 + v.change_lo, "
	    "0), 0)) + 1e-9) AS sure FROM track_runs r JOIN jobs j ON j.submission_id = "
	    "r.submission_id "
	    "JOIN comparisons cm ON cm.job_id = j.id JOIN verdicts v ON v.comparison_id = cm.id "
	    "WHERE r.id = $1 AND r.purpose IN ('head', 'sample') AND NOT v.control ORDER BY "
	    "j.machine_class, v.workload, v.lock, v.metric, v.params_key, cm.final DESC, cm.id "
	    "DESC) x ORDER BY sure DESC NULLS LAST",
	    1, p);
	GString *others = g_string_new(NULL);
	int i, first = -1, narrowed = 0;

	for (i = 0; res && i < PQntuples(res); i++) {
		const char *series[5], *verdict = PQgetvalue(res, i, 10);
		struct track_step st;
		struct track_row row;
		char *note;

		if (!compare_metric_is_headline(PQgetvalue(res, i, 8)))
			continue;
		note = track_ab_row(res, i, series, &st, &row);
		if (strcmp(verdict, "regression") == 0) {
			if (track_alert_narrow(c, &st, note) != 0)
				narrowed = 1;
			else if (first < 0)
				first = i;
			else
				g_string_append_printf(
				    others, "%s%s %s %s %s %+.1f%%", others->len ? ", " : "",
				    series[1], series[2], series[3], series[4], 100 * row.change);
		} else if (strcmp(verdict, "improvement") == 0) {
			track_alert_fix(c, &st, note);
		}
		g_free(note);
	}
	/*
	 * one alert per step (track_alert_open): none when that row's alert covers it, or
	 * another row's alert stands for a step inside the run's range
	 */
	if (first >= 0 && !narrowed) {
		const char *series[5];
		struct track_step st;
		struct track_row row;
		char *note = track_ab_row(res, first, series, &st, &row), *all;

		all = others->len ? g_strdup_printf("%s; the same step on %s", note, others->str)
		                  : g_strdup(note);
		track_alert_open(c, &st, &row, run, all,
		                 "an interleaved A/B with its confirmation is the "
		                 "confirmation: bisection starts inside its range");
		g_free(all);
		g_free(note);
	}
	g_string_free(others, TRUE);
	PQclear(res);
}

/*
 * A head or sample run that ended: each job whose verdict is a fault
 * (splat, lockup or crash: the patched side's, where the base ran clean)
 * is a confirmed step between the run's two commits, as a regression row
 * is, and opens an alert of its own kind unless one stands for the step
 * (track_alert_open).  The alert's row is the fault: metric the verdict,
 * workload, lock and params the first finding's (a lockup's or crash's
 * point; a splat's boot, "kernel" and its key); its first event keeps the
 * finding's words for the mail.  track_bisect bisects it inside the run's
 * range, each step judged by whether its jobs end with the same fault.
 */
void track_fault_steps(PGconn *c, const char *run)
{
	const char *p[1] = {run};
	PGresult *res = db_exec(
	    c,
	    "SELECT r.tree_id, r.branch, r.purpose, r.base_commit, r.commit, j.machine_class, "
	    "j.verdict, CASE WHEN j.verdict = 'splat' THEN sp.boot ELSE lk.workload END, CASE "
	    "WHEN j.verdict = 'splat' THEN 'kernel' ELSE lk.lock END, CASE WHEN j.verdict = "
	    "'splat' THEN sp.key ELSE lk.params_key END, coalesce(CASE WHEN j.verdict = 'splat' "
	    "THEN sp.message ELSE lk.kind || ': ' || lk.message END, j.reason, '') FROM "
	    "track_runs r JOIN jobs j ON j.submission_id = r.submission_id LEFT JOIN LATERAL "
	    "(SELECT l.workload, l.lock, l.params_key, l.kind, l.message FROM lockups l WHERE "
	    "l.job_id = j.id AND l.variant LIKE 'patched%' ORDER BY l.id LIMIT 1) lk ON true "
	    "LEFT JOIN LATERAL (SELECT coalesce(x->>'boot', '-') AS boot, x->>'key' AS key, "
	    "x->>'message' AS message FROM results d, jsonb_array_elements(coalesce("
	    "d.document->'splats', '[]')) x WHERE d.job_id = j.id AND d.variant LIKE 'patched%' "
	    "AND NOT EXISTS (SELECT 1 FROM results b, jsonb_array_elements(coalesce("
	    "b.document->'splats', '[]')) y WHERE b.job_id = j.id AND b.variant LIKE 'base%' AND "
	    "y->>'key' = x->>'key') ORDER BY d.id LIMIT 1) sp ON true WHERE r.id = $1 AND "
	    "r.purpose IN ('head', 'sample') AND j.verdict IN " TRACK_FAULTS " ORDER BY j.id",
	    1, p);

	for (int i = 0; res && i < PQntuples(res); i++) {
		const char *verdict = PQgetvalue(res, i, 6);
		const char *series[5] = {
		    PQgetvalue(res, i, 5), PQgetisnull(res, i, 7) ? "-" : PQgetvalue(res, i, 7),
		    PQgetisnull(res, i, 8) ? "-" : PQgetvalue(res, i, 8), verdict,
		    PQgetisnull(res, i, 9) ? "" : PQgetvalue(res, i, 9)};
		const struct track_step st = {
		    .tree = PQgetvalue(res, i, 0),
		    .branch = PQgetvalue(res, i, 1),
		    .series = series,
		    .good = PQgetvalue(res, i, 3),
		    .bad = PQgetvalue(res, i, 4),
		    .found_by = strcmp(PQgetvalue(res, i, 2), "head") ? "ab-sample" : "ab-head"};
		/* no figure moved: the base ran clean (0 faults), the commit did not (1) */
		struct track_row row = {.change = 0, .base_mean = 0, .patched_mean = 1};
		char *note;

		snprintf(row.verdict, sizeof(row.verdict), "%s", verdict);
		note = g_strdup_printf("the A/B of %.12s..%.12s ended %s: %s", st.good, st.bad,
		                       verdict, PQgetvalue(res, i, 10));
		track_alert_open(c, &st, &row, run, note,
		                 "a fault on the patched side where the base ran clean is its own "
		                 "confirmation: bisection starts inside its range");
		g_free(note);
	}
	PQclear(res);
}

/*
 * Whether submission sub's jobs ended with the fault kind (a verdict
 * name): 1, 0, or -1 on a database error.
 */
static int track_fault_of(PGconn *c, const char *sub, const char *kind)
{
	const char *p[2] = {sub, kind};
	PGresult *res =
	    db_exec(c, "SELECT count(*) FROM jobs WHERE submission_id = $1 AND verdict = $2", 2, p);
	int n;

	if (!res)
		return -1;
	n = atoi(PQgetvalue(res, 0, 0));
	PQclear(res);
	return n > 0;
}

/*
 * The proposed steps whose A/B ended: each gets its outcome; a confirmed
 * regression becomes an alert, a confirmed improvement fixes the open
 * alerts of its series whose step it follows.
 */
void track_judge_candidates(PGconn *c)
{
	PGresult *res = db_exec(
	    c,
	    "SELECT k.id, k.tree_id, k.branch, k.machine_class, k.workload, k.lock, k.metric, "
	    "k.params_key, k.good, k.bad, k.expect, r.submission_id, s.state, k.run_id FROM "
	    "track_candidates "
	    "k JOIN track_runs r ON r.id = k.run_id JOIN submissions s ON s.id = r.submission_id "
	    "WHERE k.outcome IS NULL AND s.state IN ('done', 'failed') ORDER BY k.id",
	    0, NULL);
	int i;

	if (!res)
		return;
	for (i = 0; i < PQntuples(res); i++) {
		const char *kid = PQgetvalue(res, i, 0), *expect = PQgetvalue(res, i, 10);
		const char *series[5] = {PQgetvalue(res, i, 3), PQgetvalue(res, i, 4),
		                         PQgetvalue(res, i, 5), PQgetvalue(res, i, 6),
		                         PQgetvalue(res, i, 7)};
		struct track_row row = {.verdict = "failed"};
		const char *outcome = "failed";
		int got = 1;

		if (strcmp(PQgetvalue(res, i, 12), "done") == 0) {
			got = track_row_of(c, PQgetvalue(res, i, 11), series, &row);
			if (got < 0)
				continue;
			outcome = got == 0 ? row.verdict : "not-measured";
		}
		{
			const char *p[2] = {kid, outcome};

			if (db_run(c, "UPDATE track_candidates SET outcome = $2 WHERE id = $1", 2,
			           p) != DB_OK)
				continue;
		}
		fprintf(stderr,
		        "locklab-server: tracker: candidate %s (%s %s %s): the A/B says %s\n", kid,
		        series[1], series[2], series[3], outcome);
		if (strcmp(outcome, expect) != 0)
			continue;
		{
			const struct track_step st = {.tree = PQgetvalue(res, i, 1),
			                              .branch = PQgetvalue(res, i, 2),
			                              .series = series,
			                              .good = PQgetvalue(res, i, 8),
			                              .bad = PQgetvalue(res, i, 9),
			                              .found_by = "changepoint"};

			if (strcmp(expect, "regression") == 0)
				track_alert_open(c, &st, &row, PQgetvalue(res, i, 13),
				                 "proposed by the change-point detector",
				                 "the A/B of the two commits: regression");
			else
				track_alert_fix(c, &st,
				                "a later step reverses it (confirmed by A/B)");
		}
	}
	PQclear(res);
}

/* ---- bisection ---------------------------------------------------------------- */

/* alert $1 and its commit $2 strictly inside (bisect_good, bisect_bad) */
#define TRACK_INSIDE                                                                               \
	"FROM track_commits x, track_commits g, track_commits b WHERE a.id = $1 AND x.tree_id = "  \
	"a.tree_id AND x.branch = a.branch AND x.commit = $2 AND g.tree_id = a.tree_id AND "       \
	"g.branch = a.branch AND g.commit = a.bisect_good AND b.tree_id = a.tree_id AND b.branch " \
	"= a.branch AND b.commit = a.bisect_bad AND x.seq > g.seq AND x.seq < b.seq"

/*
 * An inconclusive step: measured once more (attempt 1, --max-rounds from
 * the start); 1 when that run is asked for.  When the second run is
 * inconclusive too, its confidence interval of the change (row) still
 * tells which side of the alert's step the commit is on when the whole
 * interval is below half the step ("good": -1) or above it ("regression":
 * -2; a big step is not hidden by noise).  Else bisection stops and the
 * alert names the range it got to and why, instead of guessing: 0.
 */
static int track_bisect_inconclusive(PGconn *c, const char *aid, PGresult *res, int i,
                                     const struct track_row *row)
{
	const char *commit = PQgetvalue(res, i, 0), *good = PQgetvalue(res, i, 4);
	struct track_tree t;
	PGresult *tr;
	long long run = -1;
	char runid[24], *why;

	if (PQgetisnull(res, i, 3)) {
		tr = track_tree_of(c, PQgetvalue(res, i, 5), &t);
		if (tr)
			run =
			    track_run_attempt(c, &t, "bisect", good, commit, 1, srv_cfg.max_rounds);
		PQclear(tr);
		if (run > 0) {
			const char *q[3] = {aid, commit, runid};

			snprintf(runid, sizeof(runid), "%lld", run);
			db_run(
			    c,
			    "UPDATE bisect_steps SET run_id = $3, first_verdict = 'inconclusive' "
			    "WHERE alert_id = $1 AND commit = $2",
			    3, q);
			fprintf(
			    stderr,
			    "locklab-server: tracker: alert %s: %.12s is inconclusive, measured "
			    "again with %d rounds\n",
			    aid, commit, srv_cfg.max_rounds);
			return 1;
		}
	}
	{
		const char *p[1] = {aid};
		PGresult *ar = db_exec(c, "SELECT change FROM alerts WHERE id = $1", 1, p);
		double step = ar && PQntuples(ar) == 1 ? strtod(PQgetvalue(ar, 0, 0), NULL) : 0;
		/* the interval in the step's direction, against half the step */
		double dir = step < 0 ? -1 : 1, a = dir * row->change_lo, b = dir * row->change_hi;
		double lo = fmin(a, b), hi = fmax(a, b), half = fabs(step) / 2;

		PQclear(ar);
		if (step != 0 && (hi < half || lo > half)) {
			fprintf(
			    stderr,
			    "locklab-server: tracker: alert %s: %.12s inconclusive twice, but its "
			    "change (%+.1f%%..%+.1f%%) is %s half the step (%+.1f%%)\n",
			    aid, commit, 100 * row->change_lo, 100 * row->change_hi,
			    hi < half ? "below" : "above", 100 * step);
			return hi < half ? -1 : -2;
		}
	}
	why = g_strdup_printf("bisection stopped: the A/B of %.12s against %.12s was inconclusive "
	                      "twice (the second with %d rounds) and its change (%+.1f%%..%+.1f%%) "
	                      "cannot tell whether it holds the step, so the first bad commit is "
	                      "somewhere in the range and is not guessed",
	                      commit, good, srv_cfg.max_rounds, 100 * row->change_lo,
	                      100 * row->change_hi);
	{
		const char *q[2] = {aid, commit}, *a[2] = {aid, why};

		db_run(c,
		       "UPDATE bisect_steps SET verdict = 'inconclusive' WHERE alert_id = $1 AND "
		       "commit = $2",
		       2, q);
		db_run(c,
		       "UPDATE alerts SET state = 'bisected', reason = $2, state_by = 'tracker', "
		       "state_at = now() WHERE id = $1",
		       2, a);
	}
	track_event(c, aid, "bisected", "tracker", why);
	fprintf(stderr, "locklab-server: tracker: alert %s: %s\n", aid, why);
	g_free(why);
	return 0;
}

/*
 * Read the ended steps of alert a into its range: 1 while one still runs
 * (or is measured again), -1 when bisection stopped, else 0.
 */
static int track_bisect_read(PGconn *c, const char *aid, const char *const series[5])
{
	const char *p[1] = {aid};
	PGresult *res = db_exec(c,
	                        "SELECT st.commit, r.submission_id, s.state, st.first_verdict, "
	                        "st.good, r.tree_id FROM bisect_steps st JOIN track_runs r ON "
	                        "r.id = st.run_id JOIN submissions s ON s.id = r.submission_id "
	                        "WHERE st.alert_id = $1 AND st.verdict IS NULL",
	                        1, p);
	int running = 0;
	int i;

	if (!res)
		return 1;
	for (i = 0; i < PQntuples(res); i++) {
		const char *commit = PQgetvalue(res, i, 0), *state = PQgetvalue(res, i, 2);
		struct track_row row = {.verdict = "skip"};
		char change[32] = "";
		const char *verdict = "skip", *moves = NULL;

		if (strcmp(state, "done") != 0 && strcmp(state, "failed") != 0) {
			running = 1;
			continue;
		}
		if (strcmp(state, "done") == 0 && track_metric_is_fault(series[3])) {
			/* a fault's step: the same fault again, or a clean run */
			int f = track_fault_of(c, PQgetvalue(res, i, 1), series[3]);

			if (f < 0) {
				running = 1;
				continue;
			}
			verdict = f ? "regression" : "no-change";
		} else if (strcmp(state, "done") == 0) {
			int got = track_row_of(c, PQgetvalue(res, i, 1), series, &row);

			if (got < 0) {
				running = 1;
				continue;
			}
			/* a range that does not touch the lock leaves it as it was */
			verdict = got == 0 ? row.verdict : "no-change";
			if (got == 0)
				snprintf(change, sizeof(change), "%.6f", row.change);
		}
		if (strcmp(verdict, "inconclusive") == 0) {
			int side = track_bisect_inconclusive(c, aid, res, i, &row);

			if (side == 0) {
				running = -1;
				break;
			}
			if (side == 1) {
				running = 1;
				continue;
			}
			/* recorded as inconclusive; its interval moves the end */
			moves = side == -1 ? "no-change" : "regression";
		}
		{
			const char *q[4] = {aid, commit, verdict, change[0] ? change : NULL};

			db_run(
			    c,
			    "UPDATE bisect_steps SET verdict = $3, change = $4::double precision "
			    "WHERE alert_id = $1 AND commit = $2 AND verdict IS NULL",
			    4, q);
			if (!moves)
				moves = verdict;
			/* an end moves only inward: the range may have narrowed meanwhile
			 * (track_alert_narrow) */
			if (strcmp(moves, "regression") == 0)
				db_run(c, "UPDATE alerts a SET bisect_bad = $2 " TRACK_INSIDE, 2,
				       q);
			else if (strcmp(moves, "skip") != 0)
				db_run(c, "UPDATE alerts a SET bisect_good = $2 " TRACK_INSIDE, 2,
				       q);
		}
		fprintf(stderr, "locklab-server: tracker: alert %s: %.12s is %s\n", aid, commit,
		        verdict);
	}
	PQclear(res);
	return running;
}

/* One move of each open bisection: read its steps, then name or test. */
void track_bisect(PGconn *c)
{
	PGresult *res =
	    db_exec(c,
	            "SELECT id, tree_id, branch, machine_class, workload, lock, metric, "
	            "params_key FROM alerts WHERE state = 'confirmed' AND commit IS "
	            "NULL AND reason IS NULL ORDER BY id",
	            0, NULL);
	int i;

	if (!res)
		return;
	for (i = 0; i < PQntuples(res); i++) {
		const char *aid = PQgetvalue(res, i, 0);
		const char *series[5] = {PQgetvalue(res, i, 3), PQgetvalue(res, i, 4),
		                         PQgetvalue(res, i, 5), PQgetvalue(res, i, 6),
		                         PQgetvalue(res, i, 7)};
		const char *p[1] = {aid};
		PGresult *in, *tr;
		struct track_tree t;
		int k, skipped = 0;

		if (track_bisect_read(c, aid, series) != 0)
			continue;
		/* the commits inside (good, bad), oldest first, with what bisection knows */
		in = db_exec(
		    c,
		    "SELECT tc.commit, st.verdict, a.bisect_good, a.bisect_bad FROM alerts a "
		    "JOIN track_commits g ON g.tree_id = a.tree_id AND g.branch = a.branch "
		    "AND g.commit = a.bisect_good JOIN track_commits b ON b.tree_id = "
		    "a.tree_id AND b.branch = a.branch AND b.commit = a.bisect_bad JOIN "
		    "track_commits tc ON tc.tree_id = a.tree_id AND tc.branch = a.branch AND "
		    "tc.seq > g.seq AND tc.seq < b.seq AND tc.segment = b.segment LEFT JOIN "
		    "bisect_steps st ON "
		    "st.alert_id = a.id AND st.commit = tc.commit WHERE a.id = $1 ORDER BY "
		    "tc.seq",
		    1, p);
		if (!in)
			continue;
		{
			int n = PQntuples(in), cand[4096], nc = 0;

			for (k = 0; k < n && nc < 4096; k++) {
				if (PQgetisnull(in, k, 1))
					cand[nc++] = k;
				else
					skipped++;
			}
			if (nc == 0) {
				/* nothing left to test: the bad end is the first bad commit */
				const char *q[2] = {
				    aid, skipped ? "the commits before the bad end did "
				                   "not build, so the range cannot be split"
				                 : NULL};

				if (skipped)
					db_run(
					    c,
					    "UPDATE alerts SET state = 'bisected', reason = $2, "
					    "state_by = 'tracker', state_at = now() WHERE id = $1",
					    2, q);
				else
					db_run(c,
					       "UPDATE alerts a SET state = 'bisected', commit = "
					       "a.bisect_bad, subject = tc.subject, author = "
					       "tc.author, "
					       "state_by = 'tracker', state_at = now() FROM "
					       "track_commits "
					       "tc WHERE a.id = $1 AND tc.tree_id = a.tree_id AND "
					       "tc.branch = a.branch AND tc.commit = a.bisect_bad",
					       1, q);
				track_event(c, aid, "bisected", "tracker", skipped ? q[1] : NULL);
				if (!skipped)
					track_mail_alert(c, aid);
				fprintf(stderr, "locklab-server: tracker: alert %s bisected%s\n",
				        aid, skipped ? " to a range" : "");
				PQclear(in);
				continue;
			}
			tr = track_tree_of(c, PQgetvalue(res, i, 1), &t);
			if (tr) {
				const char *good = n ? PQgetvalue(in, 0, 2) : "";
				const char *mid = PQgetvalue(in, cand[(nc - 1) / 2], 0);
				long long run = track_run(c, &t, "bisect", good, mid);

				if (run > 0) {
					char runid[24];
					const char *q[4] = {aid, mid, good, runid};

					snprintf(runid, sizeof(runid), "%lld", run);
					db_run(c,
					       "INSERT INTO bisect_steps (alert_id, commit, good, "
					       "run_id) "
					       "VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING",
					       4, q);
				}
				PQclear(tr);
			}
		}
		PQclear(in);
	}
	PQclear(res);
}
