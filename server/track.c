/*
 * track.c - the tracker (track.h): polling each tracked branch into its
 * mirror (force-pushes start a new history segment), sampling inside big
 * pushes while agents idle, the history points of ended runs and the steps
 * E-Divisive proposes in them, and the thread that does it all.  Git is
 * trackgit.c, the A/B runs trackrun.c, confirmation, alerts and bisection
 * trackalert.c, the HTTP handlers trackapi.c.
 */
#include "track.h"
#include "track_internal.h"

#include <errno.h>
#include <glib.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "changepoint.h"
#include "codesource.h"
#include "compare.h"
#include "config.h"
#include "db.h"
#include "gitproto.h"
#include "netpolicy.h"
#include "sshpin.h"

/* ---- polling a branch ------------------------------------------------------ */

/*
 * Record the commits of root..head (first parent) on the branch, in order,
 * numbered from seq0, in history segment segment.
 */
static int track_commits(PGconn *c, const struct track_tree *t, const char *mirror,
                         const char *root, const char *head, int seq0, int segment)
{
	char range[128], *out = NULL, err[256];
	const char *argv[] = {"git",
	                      "-C",
	                      mirror,
	                      "log",
	                      "--first-parent",
	                      "--reverse",
	                      "--format=%H%x1f%an <%ae>%x1f%s",
	                      "--end-of-options",
	                      range,
	                      NULL};
	const char *one[] = {
	    "git", "-C", mirror, "log", "-1", "--format=%H%x1f%an <%ae>%x1f%s", "--end-of-options",
	    root,  NULL};
	char *line, *save = NULL, seg[16];
	int seq = seq0, rc = -1, pass;

	for (pass = 0; pass < 2; pass++) {
		free(out);
		out = NULL;
		if (pass == 0) {
			if (track_git(one, &out, err, sizeof(err)) != 0)
				goto out;
		} else {
			snprintf(range, sizeof(range), "%s..%s", root, head);
			if (track_git(argv, &out, err, sizeof(err)) != 0)
				goto out;
		}
		for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
			char *f1 = strchr(line, 0x1f), *f2 = f1 ? strchr(f1 + 1, 0x1f) : NULL,
			     sq[16];

			if (!f2)
				continue;
			*f1 = *f2 = '\0';
			snprintf(sq, sizeof(sq), "%d", seq++);
			snprintf(seg, sizeof(seg), "%d", segment);
			{
				const char *p[7] = {t->id,  t->branch, line, sq,
				                    f2 + 1, f1 + 1,    seg};

				if (db_run(
				        c,
				        "INSERT INTO track_commits (tree_id, branch, commit, seq, "
				        "subject, author, segment) VALUES ($1, $2, $3, $4, $5, "
				        "$6, $7) ON CONFLICT (tree_id, branch, commit) DO UPDATE "
				        "SET seq = EXCLUDED.seq, segment = EXCLUDED.segment",
				        7, p) != DB_OK)
					goto out;
			}
		}
	}
	rc = 0;
out:
	if (rc)
		fprintf(stderr, "locklab-server: tracker: %s: git log: %s\n", t->name, err);
	free(out);
	return rc;
}

static void track_set_error(PGconn *c, const char *id, const char *why)
{
	const char *p[2] = {id, why};

	fprintf(stderr, "locklab-server: tracker: tree %s: %s\n", id, why);
	db_run(c, "UPDATE trees SET track_error = $2, track_checked = now() WHERE id = $1", 2, p);
}

/* 0 when commit a is an ancestor of b (or b itself) in the mirror; 1 when not, -1 on errors. */
static int track_is_ancestor(const char *mirror, const char *a, const char *b)
{
	const char *argv[] = {
	    "git", "-C", mirror, "merge-base", "--is-ancestor", "--end-of-options", a, b, NULL};
	char err[256];
	int rc = track_git(argv, NULL, err, sizeof(err));

	return rc == 0 ? 0 : rc == 1 ? 1 : -1;
}

/*
 * The branch was rewritten: head does not descend from last.  Record it,
 * start a new history segment (*segment, numbered from *seq0) whose first
 * commit (root, 41 bytes, in/out) is the old first commit when the new head
 * still has it, else the merge base of the two heads, else the new head;
 * base (41 bytes) is what the new head is measured against: the merge base
 * when it is in the segment, else its first commit.  0 or -1.
 */
static int track_rewritten(PGconn *c, const struct track_tree *t, const char *mirror,
                           const char *last, const char *head, char *root, char *base, int *seq0,
                           int *segment)
{
	const char *mbargv[] = {"git", "-C", mirror, "merge-base", "--end-of-options",
	                        last,  head, NULL};
	char *out = NULL, err[256], mb[41] = "", seg[16];
	PGresult *res = NULL;
	int rc = -1;

	if (track_git(mbargv, &out, err, sizeof(err)) == 0 && out && strlen(out) >= 40)
		snprintf(mb, sizeof(mb), "%.40s", out);
	if (track_is_ancestor(mirror, root, head) != 0)
		snprintf(root, 41, "%s", mb[0] ? mb : head);
	snprintf(base, 41, "%s", mb[0] && track_is_ancestor(mirror, root, mb) == 0 ? mb : root);
	{
		const char *p[2] = {t->id, t->branch};

		res = db_exec(c,
		              "UPDATE trees SET track_segment = track_segment + 1 WHERE id = $1 "
		              "RETURNING track_segment, (SELECT coalesce(max(seq), -1) + 1 FROM "
		              "track_commits WHERE tree_id = $1 AND branch = $2)",
		              2, p);
	}
	if (!res || PQntuples(res) != 1)
		goto out;
	*segment = atoi(PQgetvalue(res, 0, 0));
	*seq0 = atoi(PQgetvalue(res, 0, 1));
	snprintf(seg, sizeof(seg), "%d", *segment);
	{
		const char *p[6] = {t->id, t->branch, last, head, mb[0] ? mb : NULL, seg};

		if (db_run(c,
		           "INSERT INTO track_rewrites (tree_id, branch, old_head, new_head, "
		           "merge_base, segment) VALUES ($1, $2, $3, $4, $5, $6)",
		           6, p) != DB_OK)
			goto out;
	}
	fprintf(stderr,
	        "locklab-server: tracker: %s: %s was rewritten (%.12s is not an ancestor of "
	        "%.12s; merge base %.12s): history segment %d starts at %.12s\n",
	        t->name, t->branch, last, head, mb[0] ? mb : "none", *segment, root);
	rc = 0;
out:
	PQclear(res);
	free(out);
	return rc;
}

/*
 * After a rewrite: an alert whose bisection range is no longer on the
 * branch stops with the reason, and a proposed step whose commits are gone
 * is not judged (nothing is bisected or confirmed across a rewrite).
 */
static void track_rewrite_stops(PGconn *c, const struct track_tree *t, int segment)
{
	static const char why[] =
	    "the branch was force-pushed and this range is no longer on it: bisection does not "
	    "cross a rewrite";
	char seg[16];
	const char *p[4] = {t->id, t->branch, why, seg};
	PGresult *res;
	int i;

	snprintf(seg, sizeof(seg), "%d", segment);
	res = db_exec(c,
	              "UPDATE alerts a SET reason = $3, state_by = 'tracker', state_at = now() "
	              "WHERE a.tree_id = $1 AND a.branch = $2 AND a.commit IS NULL AND a.reason "
	              "IS NULL AND a.state IN ('new', 'confirmed') AND (SELECT count(*) FROM "
	              "track_commits tc WHERE tc.tree_id = a.tree_id AND tc.branch = a.branch AND "
	              "tc.segment = $4::int AND tc.commit IN (a.bisect_good, a.bisect_bad)) < 2 "
	              "RETURNING a.id, a.state",
	              4, p);
	for (i = 0; res && i < PQntuples(res); i++)
		track_event(c, PQgetvalue(res, i, 0), PQgetvalue(res, i, 1), "tracker", why);
	PQclear(res);
	p[2] = seg;
	db_run(c,
	       "UPDATE track_candidates k SET outcome = 'rewritten' WHERE k.tree_id = $1 AND "
	       "k.branch = $2 AND k.outcome IS NULL AND (SELECT count(*) FROM track_commits tc "
	       "WHERE tc.tree_id = k.tree_id AND tc.branch = k.branch AND tc.segment = $3::int "
	       "AND tc.commit IN (k.good, k.bad)) < 2",
	       3, p);
}

/*
 * Fetch t's branch into its mirror under --track-dir (made on the first
 * look), under the rule the agents apply to the tree's runs and the fetch
 * address policy, and read the branch's head into head.  0, or -1 with the
 * tree's track_error set.
 */
static int track_fetch(PGconn *c, const struct track_tree *t, const char *mirror, char head[41])
{
	char *headfile = g_strdup_printf("%s/HEAD", mirror);
	char *spec = g_strdup_printf("+refs/heads/%s:refs/heads/%s", t->branch, t->branch);
	char *ref = g_strdup_printf("refs/heads/%s", t->branch);
	char err[512], why[900];
	enum codesource_kind src;
	const char *check[] = {"git", "check-ref-format", "--branch", t->branch, NULL};
	const char *init[] = {"git", "init", "--quiet", "--bare", mirror, NULL};
	/* the tree's URL under the fetch address policy, git held to the checked address */
	struct netpolicy_pin pin = {.resolve = ""};
	const char *fetch[7 + NETPOLICY_GIT_ARGC + GITPROTO_ARGC + 5 + 1]; /* + NULL */
	/* an ssh:// URL: git's ssh is the server's wrapper (sshpin.h) */
	char helper[4096] = "", ssh_cmd[sizeof(helper) + 16], ssh_pin[sizeof(pin.ssh) + 32];
	const char *ssh_env[] = {ssh_cmd, ssh_pin, NULL};
	size_t n = 0;
	int rc = -1;

	if (track_git(check, NULL, err, sizeof(err)) != 0) {
		track_set_error(c, t->id, "the branch is not a branch name (git check-ref-format)");
		goto out;
	}
	if (g_mkdir_with_parents(srv_cfg.track_dir, 0700) != 0 ||
	    (access(headfile, F_OK) != 0 && track_git(init, NULL, err, sizeof(err)) != 0)) {
		track_set_error(c, t->id, "cannot make the mirror under --track-dir");
		goto out;
	}
	/* where code may come from: the rule the agents apply to this tree's runs */
	src = codesource_check(t->url, NULL, srv_cfg.allow_local_trees, err, sizeof(err));
	if (src == CODESOURCE_REFUSED) {
		snprintf(why, sizeof(why), "refused: git url '%.300s' %s", t->url, err);
		track_set_error(c, t->id, why);
		goto out;
	}
	if (src == CODESOURCE_LOCAL)
		snprintf(pin.url, sizeof(pin.url), "%s", t->url);
	else if (netpolicy_check_url(t->url, srv_cfg.fetch_allow, &pin, err, sizeof(err)) != 0) {
		snprintf(why, sizeof(why), "refused: %s", err);
		track_set_error(c, t->id, why);
		goto out;
	}
	/* the link is made (or kept) on the first ssh tree: --track-dir/bin/locklab-ssh */
	if (pin.ssh[0] && sshpin_install(srv_cfg.track_dir, helper, sizeof(helper)) != 0) {
		snprintf(why, sizeof(why),
		         "refused: cannot link %s/bin/" SSHPIN_NAME
		         " (%s), the ssh that holds git to the checked address",
		         srv_cfg.track_dir, strerror(errno));
		track_set_error(c, t->id, why);
		goto out;
	}
	snprintf(ssh_cmd, sizeof(ssh_cmd), "GIT_SSH=%s", helper);
	snprintf(ssh_pin, sizeof(ssh_pin), SSHPIN_ENV "=%s", pin.ssh);
	fetch[n++] = "git";
	fetch[n++] = "-C";
	fetch[n++] = mirror;
	fetch[n++] = "-c";
	fetch[n++] = "gc.auto=0";
	fetch[n++] = "-c";
	fetch[n++] = "maintenance.auto=false";
	n += netpolicy_git_args(&pin, fetch + n);
	n += gitproto_args(fetch + n, src == CODESOURCE_LOCAL);
	fetch[n++] = "fetch";
	fetch[n++] = "--quiet";
	fetch[n++] = "--";
	fetch[n++] = pin.url;
	fetch[n++] = spec;
	fetch[n] = NULL;
	if (track_git_env(fetch, pin.ssh[0] ? ssh_env : NULL, NULL, err, sizeof(err)) != 0) {
		snprintf(why, sizeof(why), "git fetch: %s", err);
		track_set_error(c, t->id, why);
		goto out;
	}
	if (track_rev(mirror, ref, head) != 0) {
		track_set_error(c, t->id, "the branch has no commit");
		goto out;
	}
	rc = 0;
out:
	g_free(headfile);
	g_free(spec);
	g_free(ref);
	return rc;
}

/*
 * Where t's history starts: the first commit of its current segment (its
 * seq in *seq0; the segment in *segment), else since, else head.  The
 * commit in root; 0, or -1 (track_error set when the fault is the tree's).
 */
static int track_root(PGconn *c, const struct track_tree *t, const char *mirror, const char *since,
                      const char *head, char root[41], int *seq0, int *segment, bool *owned)
{
	const char *p[2] = {t->id, t->branch};
	PGresult *res = db_exec(c,
	                        "SELECT tr.track_segment, tc.commit, tc.seq FROM trees tr "
	                        "LEFT JOIN LATERAL (SELECT commit, seq FROM track_commits "
	                        "WHERE tree_id = tr.id AND branch = $2 AND segment = "
	                        "tr.track_segment ORDER BY seq LIMIT 1) tc ON true WHERE "
	                        "tr.id = $1",
	                        2, p);

	if (!res || PQntuples(res) != 1) {
		PQclear(res);
		return -1;
	}
	*segment = atoi(PQgetvalue(res, 0, 0));
	*owned = !PQgetisnull(res, 0, 1);
	if (*owned) {
		snprintf(root, 41, "%s", PQgetvalue(res, 0, 1));
		*seq0 = atoi(PQgetvalue(res, 0, 2));
	}
	PQclear(res);
	if (*owned)
		return 0;
	if (since && *since) {
		if (track_rev(mirror, since, root) != 0) {
			track_set_error(c, t->id, "'since' is not a commit of the branch");
			return -1;
		}
	} else {
		snprintf(root, 41, "%s", head);
	}
	return 0;
}

/* Fetch tree t's branch and run a new head.  since/last: NULL or commits. */
static void track_poll(PGconn *c, const struct track_tree *t, const char *since, const char *last)
{
	char *mirror = g_strdup_printf("%s/tree-%s.git", srv_cfg.track_dir, t->id);
	char head[41], root[41], base[41];
	int seq0 = 0, segment = 0;
	bool rewritten, owned = false;

	/* a poke that comes while git fetches asks for one more look */
	{
		const char *p[1] = {t->id};

		db_run(c, "UPDATE trees SET track_poked = NULL WHERE id = $1", 1, p);
	}
	if (track_fetch(c, t, mirror, head) != 0)
		goto out;
	if (last && strcmp(last, head) == 0) {
		const char *p[1] = {t->id};

		db_run(c,
		       "UPDATE trees SET track_checked = now(), track_error = "
		       "NULL WHERE id = $1",
		       1, p);
		goto out;
	}
	if (track_root(c, t, mirror, since, head, root, &seq0, &segment, &owned) != 0)
		goto out;
	snprintf(base, sizeof(base), "%s", last ? last : root);
	/* a head that does not descend from the last one: the branch was rewritten */
	rewritten = last && owned && track_is_ancestor(mirror, last, head) != 0;
	if (rewritten &&
	    track_rewritten(c, t, mirror, last, head, root, base, &seq0, &segment) != 0)
		goto out;
	if (track_commits(c, t, mirror, root, head, seq0, segment) != 0) {
		track_set_error(c, t->id, "cannot read the branch's commits");
		goto out;
	}
	if (rewritten)
		track_rewrite_stops(c, t, segment);
	/* the newest head against the last one run; commits between are sampled
	 * while agents are idle (track_sample), and by bisection */
	if (strcmp(base, head) != 0 && track_run(c, t, "head", base, head) < 0)
		goto out;
	{
		const char *p[2] = {t->id, head};

		db_run(c,
		       "UPDATE trees SET track_head = $2, track_checked = now(), "
		       "track_error = NULL, track_sampled = 0 WHERE id = $1",
		       2, p);
	}
out:
	g_free(mirror);
}

static void track_poll_due(PGconn *c)
{
	char interval[24];
	const char *p[1] = {interval};
	PGresult *res;
	int i;

	snprintf(interval, sizeof(interval), "%d", srv_cfg.track_interval);
	res = db_exec(c,
	              "SELECT id, name, url, branch, track_suites::text, track_since, track_head "
	              "FROM trees WHERE track AND (track_poked IS NOT NULL OR track_checked IS "
	              "NULL OR track_checked < now() - make_interval(secs => $1::int)) ORDER BY id",
	              1, p);
	if (!res)
		return;
	for (i = 0; i < PQntuples(res); i++) {
		struct track_tree t = {PQgetvalue(res, i, 0), PQgetvalue(res, i, 1),
		                       PQgetvalue(res, i, 2), PQgetvalue(res, i, 3),
		                       PQgetvalue(res, i, 4)};

		track_poll(c, &t, db_value(res, i, 5), db_value(res, i, 6));
	}
	PQclear(res);
}

/*
 * Sampling inside a push of many commits: while no job waits anywhere and a
 * tree has no head or sample run going (or ended and not yet read by
 * track_read_heads: its A/B may open an alert), run the commit in the middle of a
 * gap between measured commits of its current segment against the gap's
 * older end, up to --track-samples runs per new head: the widest gap inside
 * the range of one of its alerts (a head or sample run regressed there, or a
 * change point was confirmed) first, else the widest.  The newest
 * head runs first (track_poll); these points come after it, one at a time,
 * halving the gaps as bisection would.  While an alert of the tree is being
 * bisected, sampling waits: the A/B that regressed already named the range
 * that holds the step, bisection splits that range next (its runs are not
 * counted against --track-samples), and a sample run that regresses inside
 * it narrows it (track_ab_steps).
 */
static void track_sample(PGconn *c)
{
	char limit[16];
	const char *p[1] = {limit};
	PGresult *res;
	int i;

	if (srv_cfg.track_samples <= 0)
		return;
	snprintf(limit, sizeof(limit), "%d", srv_cfg.track_samples);
	res = db_exec(c,
	              "SELECT t.id, t.name, t.url, t.branch, t.track_suites::text, t.track_segment "
	              "FROM trees t WHERE t.track AND t.track_head IS NOT NULL AND "
	              "t.track_sampled < $1::int AND NOT EXISTS (SELECT 1 FROM jobs WHERE state = "
	              "'queued') AND NOT EXISTS (SELECT 1 FROM track_runs r JOIN submissions s ON "
	              "s.id = r.submission_id WHERE r.tree_id = t.id AND r.purpose IN ('head', "
	              "'sample') AND (s.state NOT IN ('done', 'failed') OR r.processed IS NULL)) "
	              "AND NOT EXISTS (SELECT 1 "
	              "FROM alerts a WHERE a.tree_id = t.id AND a.state = 'confirmed' AND a.commit "
	              "IS NULL AND a.reason IS NULL) ORDER BY t.id",
	              1, p);
	for (i = 0; res && i < PQntuples(res); i++) {
		struct track_tree t = {PQgetvalue(res, i, 0), PQgetvalue(res, i, 1),
		                       PQgetvalue(res, i, 2), PQgetvalue(res, i, 3),
		                       PQgetvalue(res, i, 4)};
		const char *q[3] = {t.id, t.branch, PQgetvalue(res, i, 5)};
		/*
		 * measured: both ends of every head, sample and bisection run of
		 * the segment; the gap to halve is the widest inside the range of
		 * one of its alerts (a step was seen there: the evidence), else the
		 * widest
		 */
		PGresult *gap = db_exec(
		    c,
		    "WITH m AS (SELECT DISTINCT tc.seq, tc.commit FROM track_commits tc JOIN "
		    "track_runs r ON r.tree_id = tc.tree_id AND r.branch = tc.branch AND tc.commit "
		    "IN (r.commit, r.base_commit) AND r.purpose IN ('head', 'sample', 'bisect') "
		    "WHERE tc.tree_id = $1 AND tc.branch = $2 AND tc.segment = $3::int), g AS "
		    "(SELECT seq AS lo, commit, lead(seq) OVER (ORDER BY seq) AS hi FROM m), s AS "
		    "(SELECT lo.seq AS lo, hi.seq AS hi FROM alerts a JOIN track_commits lo ON "
		    "lo.tree_id = a.tree_id AND lo.branch = a.branch AND lo.commit = a.good JOIN "
		    "track_commits hi ON hi.tree_id = a.tree_id AND hi.branch = a.branch AND "
		    "hi.commit = a.bad WHERE a.tree_id = $1 AND a.branch = $2 AND a.state NOT IN "
		    "('invalid', 'wontfix') AND lo.segment = $3::int AND hi.segment = $3::int) "
		    "SELECT g.commit, tc.commit FROM g JOIN track_commits tc ON tc.tree_id = $1 "
		    "AND "
		    "tc.branch = $2 AND tc.segment = $3::int AND tc.seq = (g.lo + g.hi) / 2 WHERE "
		    "g.hi - g.lo >= 2 ORDER BY EXISTS (SELECT 1 FROM s WHERE s.lo <= g.lo AND g.hi "
		    "<= s.hi) DESC, g.hi - g.lo DESC, g.lo DESC LIMIT 1",
		    3, q);
		const char *u[2] = {t.id, limit};

		if (gap && PQntuples(gap) == 1 &&
		    track_run(c, &t, "sample", PQgetvalue(gap, 0, 0), PQgetvalue(gap, 0, 1)) > 0)
			db_run(c,
			       "UPDATE trees SET track_sampled = track_sampled + 1 WHERE id = $1",
			       1, u);
		else if (gap && PQntuples(gap) == 0)
			/* no gap left to halve until the next head */
			db_run(c, "UPDATE trees SET track_sampled = $2::int WHERE id = $1", 2, u);
		PQclear(gap);
	}
	PQclear(res);
}

/* ---- history and change points -------------------------------------------------- */

/* Propose the steps of one series (tree, branch, class, workload, lock, metric, params). */
static void track_detect(PGconn *c, const struct track_tree *t, const char *const series[5])
{
	const char *p[7] = {t->id,     t->branch, series[0], series[1],
	                    series[2], series[3], series[4]};
	struct changepoint_opts o;
	struct changepoint_step steps[16];
	PGresult *res;
	double *x = NULL;
	int n, i, found;

	res = db_exec(c,
	              "SELECT p.value, p.commit, p.higher_better FROM track_points p JOIN "
	              "track_commits tc ON tc.tree_id = p.tree_id AND tc.branch = p.branch AND "
	              "tc.commit = p.commit WHERE p.tree_id = $1 AND p.branch = $2 AND "
	              "p.machine_class = $3 AND p.workload = $4 AND p.lock = $5 AND p.metric = $6 "
	              "AND p.params_key = $7 AND tc.segment = (SELECT track_segment FROM trees "
	              "WHERE id = $1) ORDER BY tc.seq LIMIT 2000",
	              7, p);
	if (!res)
		return;
	n = PQntuples(res);
	x = calloc(n ? n : 1, sizeof(*x));
	if (!x)
		goto out;
	for (i = 0; i < n; i++)
		x[i] = strtod(PQgetvalue(res, i, 0), NULL);
	changepoint_defaults(&o);
	o.min_effect = srv_cfg.min_effect;
	found = changepoint_find(x, (size_t)n, &o, steps, 16);
	for (i = 0; i < found; i++) {
		const char *good = PQgetvalue(res, steps[i].at - 1, 1);
		const char *bad = PQgetvalue(res, steps[i].at, 1);
		bool higher = PQgetvalue(res, 0, 2)[0] == 't';
		bool worse = higher ? steps[i].change < 0 : steps[i].change > 0;
		char change[32], pv[32], runid[24];
		long long run;
		PGresult *ins;

		snprintf(change, sizeof(change), "%.6f", steps[i].change);
		snprintf(pv, sizeof(pv), "%.6f", steps[i].p);
		{
			const char *q[9] = {t->id,     t->branch, series[0], series[1], series[2],
			                    series[3], series[4], good,      bad};
			PGresult *has = db_exec(
			    c,
			    "SELECT 1 FROM track_candidates WHERE tree_id = $1 AND branch = $2 AND "
			    "machine_class = $3 AND workload = $4 AND lock = $5 AND metric = $6 "
			    "AND "
			    "params_key = $7 AND good = $8 AND bad = $9",
			    9, q);
			bool known = !has || PQntuples(has) > 0;

			PQclear(has);
			if (known)
				continue;
		}
		run = track_run(c, t, "confirm", good, bad);
		if (run < 0)
			continue;
		snprintf(runid, sizeof(runid), "%lld", run);
		{
			const char *q[13] = {t->id,     t->branch,
			                     series[0], series[1],
			                     series[2], series[3],
			                     series[4], good,
			                     bad,       worse ? "regression" : "improvement",
			                     change,    pv,
			                     runid};

			ins = db_exec(
			    c,
			    "INSERT INTO track_candidates (tree_id, branch, machine_class, "
			    "workload, lock, metric, params_key, good, bad, expect, change, "
			    "p, run_id) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, "
			    "$11, $12, $13) ON CONFLICT DO NOTHING",
			    13, q);
			PQclear(ins);
		}
		fprintf(stderr,
		        "locklab-server: tracker: %s: %s %s %s %s: step %+.1f%% at %.12s (p %.3f), "
		        "an A/B of %.12s..%.12s decides\n",
		        t->name, series[1], series[2], series[3], series[4], 100 * steps[i].change,
		        bad, steps[i].p, good, bad);
	}
out:
	free(x);
	PQclear(res);
}

/* Head runs that ended: their numbers become history, then look for steps. */
static void track_read_heads(PGconn *c)
{
	PGresult *res = db_exec(c,
	                        "SELECT r.id, r.tree_id, r.submission_id, s.state FROM track_runs "
	                        "r JOIN submissions s ON s.id = r.submission_id WHERE r.processed "
	                        "IS NULL AND s.state IN ('done', 'failed') ORDER BY r.id",
	                        0, NULL);
	int i, k;

	if (!res)
		return;
	for (i = 0; i < PQntuples(res); i++) {
		const char *p[1] = {PQgetvalue(res, i, 0)};
		struct track_tree t;
		PGresult *tr, *ser;

		/* both ends: the new head's numbers, and the base's where it has none yet */
		if (db_run(
		        c,
		        "INSERT INTO track_points (tree_id, branch, commit, machine_class, "
		        "workload, lock, metric, params_key, higher_better, value, run_id) "
		        "SELECT r.tree_id, r.branch, CASE WHEN side THEN r.commit ELSE "
		        "r.base_commit END, j.machine_class, v.workload, v.lock, v.metric, "
		        "v.params_key, v.higher_better, CASE WHEN side THEN v.patched_mean ELSE "
		        "v.base_mean END, r.id FROM track_runs r JOIN jobs j ON j.submission_id = "
		        "r.submission_id JOIN comparisons cm ON cm.job_id = j.id JOIN verdicts v "
		        "ON "
		        "v.comparison_id = cm.id CROSS JOIN (VALUES (true), (false)) AS s(side) "
		        "WHERE r.id = $1 AND r.purpose IN ('head', 'sample') AND v.verdict <> "
		        "'lockup' ON CONFLICT DO NOTHING",
		        1, p) != DB_OK ||
		    db_run(c, "UPDATE track_runs SET processed = now() WHERE id = $1", 1, p) !=
		        DB_OK)
			continue;
		/* a head or sample run that itself ended regression is a confirmed step */
		track_ab_steps(c, p[0]);
		/* and one whose job ended with a fault (splat, lockup, crash) */
		track_fault_steps(c, p[0]);
		tr = track_tree_of(c, PQgetvalue(res, i, 1), &t);
		if (!tr)
			continue;
		ser = db_exec(
		    c,
		    "SELECT DISTINCT machine_class, workload, lock, metric, params_key FROM "
		    "track_points WHERE run_id = $1",
		    1, p);
		for (k = 0; ser && k < PQntuples(ser); k++) {
			const char *series[5] = {PQgetvalue(ser, k, 0), PQgetvalue(ser, k, 1),
			                         PQgetvalue(ser, k, 2), PQgetvalue(ser, k, 3),
			                         PQgetvalue(ser, k, 4)};

			if (compare_metric_is_headline(series[3]))
				track_detect(c, &t, series);
		}
		PQclear(ser);
		PQclear(tr);
	}
	PQclear(res);
}

/* ---- the thread ------------------------------------------------------------------ */

static pthread_t tracker;
static bool tracker_running;
static atomic_bool tracker_stop;
static pthread_mutex_t tracker_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t tracker_wake = PTHREAD_COND_INITIALIZER;

static void *track_main(void *arg)
{
	while (!atomic_load(&tracker_stop)) {
		PGconn *c = db_conn();
		struct timespec until;

		if (c) {
			track_poll_due(c);
			track_read_heads(c);
			track_sample(c);
			track_judge_candidates(c);
			track_bisect(c);
		}
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += 1;
		pthread_mutex_lock(&tracker_lock);
		if (!atomic_load(&tracker_stop))
			pthread_cond_timedwait(&tracker_wake, &tracker_lock, &until);
		pthread_mutex_unlock(&tracker_lock);
	}
	return NULL;
}

int track_start(void)
{
	if (pthread_create(&tracker, NULL, track_main, NULL) != 0)
		return -1;
	tracker_running = true;
	return 0;
}

void track_stop(void)
{
	if (!tracker_running)
		return;
	pthread_mutex_lock(&tracker_lock);
	atomic_store(&tracker_stop, true);
	pthread_cond_signal(&tracker_wake);
	pthread_mutex_unlock(&tracker_lock);
	pthread_join(tracker, NULL);
	tracker_running = false;
}

/* A poke (trackapi.c): the thread looks at the trees now, not at its next second. */
void track_wake(void)
{
	pthread_mutex_lock(&tracker_lock);
	pthread_cond_signal(&tracker_wake);
	pthread_mutex_unlock(&tracker_lock);
}
