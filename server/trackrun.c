/*
 * trackrun.c - the tracker's A/B runs (track_internal.h): the git
 * submission of two commits of a tracked tree, made once per pair and
 * attempt, the verdict row such a run gave one series, and the tree a run
 * is made for.  Which runs are asked for is track.c (heads, samples)
 * and trackalert.c (confirmation, bisection).
 */
#include "track_internal.h"

#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "submissions.h"

/* ---- runs: A/B submissions of two commits ---------------------------------- */

/*
 * The track_runs id of attempt (0 first, 1 measured again) of the A/B run
 * base -> commit on tree t, made (as a git submission asking for rounds
 * first, 0: --min-rounds) when there is none yet; -1 on failure.
 */
long long track_run_attempt(PGconn *c, const struct track_tree *t, const char *purpose,
                            const char *base, const char *commit, int attempt, int rounds)
{
	char attempt_s[16];
	const char *p[5] = {t->id, t->branch, base, commit, attempt_s};
	struct submission_new s = {.rounds = rounds};
	char *suites = g_strdup(t->suites), *tok, *save = NULL, subid[24];
	PGresult *res;
	long long id = -1;

	snprintf(attempt_s, sizeof(attempt_s), "%d", attempt);
	res = db_exec(c,
	              "SELECT id FROM track_runs WHERE tree_id = $1 AND branch = $2 AND "
	              "base_commit = $3 AND commit = $4 AND attempt = $5",
	              5, p);
	if (!res)
		goto out;
	if (PQntuples(res) == 1) {
		id = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
		PQclear(res);
		goto out;
	}
	PQclear(res);
	s.source = "git";
	s.git_url = t->url;
	s.git_ref = commit;
	s.git_base = base;
	s.tree = t->name;
	/* "{smoke,quick}" as PostgreSQL prints a text[] of plain names */
	for (tok = strtok_r(suites + (suites[0] == '{'), ",}", &save);
	     tok && s.nsuites < MAX_SUITES; tok = strtok_r(NULL, ",}", &save))
		s.suites[s.nsuites++] = tok;
	if (!s.nsuites)
		s.suites[s.nsuites++] = "smoke";
	if (submission_store(&s) != DB_OK) {
		fprintf(stderr, "locklab-server: tracker: cannot submit %.12s..%.12s of %s: %s\n",
		        base, commit, t->name, s.err);
		goto out;
	}
	snprintf(subid, sizeof(subid), "%lld", s.id);
	{
		const char *q[7] = {t->id, t->branch, purpose, base, commit, subid, attempt_s};

		res =
		    db_exec(c,
		            "INSERT INTO track_runs (tree_id, branch, purpose, base_commit, "
		            "commit, submission_id, attempt) VALUES ($1, $2, $3, $4, $5, $6, $7) "
		            "ON CONFLICT (tree_id, branch, base_commit, commit, attempt) DO UPDATE "
		            "SET branch = EXCLUDED.branch RETURNING id",
		            7, q);
	}
	if (res) {
		id = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
		PQclear(res);
	}
	fprintf(stderr, "locklab-server: tracker: %s: %s run %.12s..%.12s is submission %lld\n",
	        t->name, purpose, base, commit, s.id);
out:
	json_decref(s.jobs);
	g_free(suites);
	return id;
}

/* The first A/B run base -> commit (track_run_attempt, attempt 0, --min-rounds). */
long long track_run(PGconn *c, const struct track_tree *t, const char *purpose, const char *base,
                    const char *commit)
{
	return track_run_attempt(c, t, purpose, base, commit, 0, 0);
}

/*
 * The verdict row of submission sub for one series: its verdict word,
 * change, base and patched means.  0, 1 when the run has no such row (the
 * commits did not touch that lock), -1 on a database error.
 */
int track_row_of(PGconn *c, const char *sub, const char *const series[5], struct track_row *row)
{
	const char *p[6] = {sub, series[0], series[1], series[2], series[3], series[4]};
	PGresult *res = db_exec(
	    c,
	    "SELECT v.verdict, v.change, v.base_mean, v.patched_mean, v.unit, v.change_lo, "
	    "v.change_hi FROM verdicts v JOIN "
	    "comparisons cm ON cm.id = v.comparison_id JOIN jobs j ON j.id = cm.job_id WHERE "
	    "j.submission_id = $1 AND j.machine_class = $2 AND v.workload = $3 AND v.lock = $4 "
	    "AND v.metric = $5 AND v.params_key = $6 ORDER BY cm.final DESC, cm.id DESC LIMIT 1",
	    6, p);
	int rc = 1;

	if (!res)
		return -1;
	if (PQntuples(res) == 1) {
		snprintf(row->verdict, sizeof(row->verdict), "%s", PQgetvalue(res, 0, 0));
		row->change = strtod(PQgetvalue(res, 0, 1), NULL);
		row->base_mean = strtod(PQgetvalue(res, 0, 2), NULL);
		row->patched_mean = strtod(PQgetvalue(res, 0, 3), NULL);
		snprintf(row->unit, sizeof(row->unit), "%s", PQgetvalue(res, 0, 4));
		row->change_lo = strtod(PQgetvalue(res, 0, 5), NULL);
		row->change_hi = strtod(PQgetvalue(res, 0, 6), NULL);
		rc = 0;
	}
	PQclear(res);
	return rc;
}

/* The tree of id, for track_run; strings borrowed from res (the caller clears it). */
PGresult *track_tree_of(PGconn *c, const char *id, struct track_tree *t)
{
	const char *p[1] = {id};
	PGresult *res = db_exec(c,
	                        "SELECT id, name, url, branch, track_suites::text FROM trees "
	                        "WHERE id = $1",
	                        1, p);

	if (!res)
		return NULL;
	if (PQntuples(res) != 1) {
		PQclear(res);
		return NULL;
	}
	*t =
	    (struct track_tree){PQgetvalue(res, 0, 0), PQgetvalue(res, 0, 1), PQgetvalue(res, 0, 2),
	                        PQgetvalue(res, 0, 3), PQgetvalue(res, 0, 4)};
	return res;
}
