/*
 * track.c - the tracker, alerts and bisection (track.h).
 */
#include "track.h"

#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "api.h"
#include "changepoint.h"
#include "compare.h"
#include "config.h"
#include "db.h"
#include "gitproto.h"
#include "mail.h"
#include "netpolicy.h"
#include "outbox.h"
#include "sshpin.h"
#include "strutil.h"
#include "submissions.h"

extern char **environ;

#define TRACK_GIT_SECONDS 300
#define TRACK_GIT_MAX     (8 << 20)
#define TRACK_MAX_POINTS  2000

/* ---- git, from argv ------------------------------------------------------ */

/*
 * Run git with argv (argv[0] is "git"), stdin from /dev/null, stdout
 * captured (up to TRACK_GIT_MAX) into *out (new, NUL-terminated, free(); may be
 * NULL), stderr into err (its first line; when that is the ssh wrapper's
 * saying where it held ssh, ssh's lines after it too, up to git's
 * "fatal:").  A cleared environment but PATH and HOME and the entries of
 * extra (NULL-terminated, at most 2; may be NULL); killed after
 * TRACK_GIT_SECONDS.  Returns the exit status, or -1 when it could not run.
 */
static int track_git_env(const char *const *argv, const char *const *extra, char **out, char *err,
                         size_t errlen)
{
	const char *path = getenv("PATH"), *home = getenv("HOME");
	char envpath[4096], envhome[1024];
	char *envp[] = {envpath, envhome, "GIT_TERMINAL_PROMPT=0", "LC_ALL=C", NULL, NULL, NULL};
	posix_spawn_file_actions_t fa;
	int outp[2] = {-1, -1}, errp[2] = {-1, -1}, status = -1, rc;
	struct strutil_buf o = STRUTIL_BUF_INIT, e = STRUTIL_BUF_INIT;
	time_t deadline = time(NULL) + TRACK_GIT_SECONDS;
	pid_t pid = -1;
	bool exited = false;

	snprintf(envpath, sizeof(envpath), "PATH=%s", path ? path : "/usr/bin:/bin");
	snprintf(envhome, sizeof(envhome), "HOME=%s", home ? home : "/");
	for (size_t i = 0; extra && extra[i] && i < 2; i++)
		envp[4 + i] = (char *)extra[i];
	if (out)
		*out = NULL;
	if (err && errlen)
		err[0] = '\0';
	if (pipe2(outp, O_CLOEXEC) || pipe2(errp, O_CLOEXEC)) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		goto out;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, outp[1], 1);
	posix_spawn_file_actions_adddup2(&fa, errp[1], 2);
	rc = posix_spawnp(&pid, "git", &fa, NULL, (char *const *)argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	close(outp[1]);
	close(errp[1]);
	outp[1] = errp[1] = -1;
	if (rc) {
		snprintf(err, errlen, "cannot run git: %s", strerror(rc));
		pid = -1;
		goto out;
	}
	{
		struct pollfd p[2] = {{outp[0], POLLIN, 0}, {errp[0], POLLIN, 0}};
		int open_fds = 2;

		/* until both pipes close, or the child is gone and they are drained (a
		 * process it left behind may hold them) */
		while (open_fds > 0) {
			int n = poll(p, 2, exited ? 0 : 200), i;

			if (n == 0 && exited)
				break;
			if (!exited && waitpid(pid, &status, WNOHANG) == pid)
				exited = true;

			if (time(NULL) > deadline) {
				kill(pid, SIGKILL);
				snprintf(err, errlen, "git took more than %d s", TRACK_GIT_SECONDS);
				break;
			}
			if (n < 0 && errno != EINTR)
				break;
			for (i = 0; i < 2 && n > 0; i++) {
				char buf[4096];
				ssize_t got;
				struct strutil_buf *to = i == 0 ? &o : &e;

				if (p[i].fd < 0 || !(p[i].revents & (POLLIN | POLLHUP)))
					continue;
				got = read(p[i].fd, buf, sizeof(buf));
				if (got <= 0) {
					p[i].fd = -1;
					open_fds--;
				} else if (to->len < TRACK_GIT_MAX) {
					strutil_buf_addlen(to, buf, (size_t)got);
				}
			}
		}
	}
	while (!exited && waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	if (status && err && errlen && !err[0]) {
		const char *line = strutil_buf_str(&e);
		bool held = !strncmp(line, SSHPIN_NAME ": ", strlen(SSHPIN_NAME ": "));
		size_t used = 0;

		/* the first line; after the ssh wrapper's, ssh's own up to git's "fatal:" */
		do {
			int len = (int)strcspn(line, "\n");

			if (used && (!len || !strncmp(line, "fatal: ", 7)))
				break;
			used += (size_t)snprintf(err + used, errlen - used, "%s%.*s",
			                         used ? "; " : "", len, line);
			line += len + (line[len] ? 1 : 0);
		} while (held && *line && used < errlen);
	}
	if (out)
		*out = strutil_buf_detach(&o);
out:
	if (outp[0] >= 0)
		close(outp[0]);
	if (errp[0] >= 0)
		close(errp[0]);
	if (outp[1] >= 0)
		close(outp[1]);
	if (errp[1] >= 0)
		close(errp[1]);
	strutil_buf_release(&o);
	strutil_buf_release(&e);
	return status;
}

/* track_git_env without extra variables. */
static int track_git(const char *const *argv, char **out, char *err, size_t errlen)
{
	return track_git_env(argv, NULL, out, err, errlen);
}

/* For sshpin_main: ssh in place of this process (a locklab-ssh started by git). */
static int track_replace(const char *const argv[])
{
	execvp(argv[0], (char *const *)argv);
	return -1;
}

int track_ssh_main(int argc, char **argv)
{
	return sshpin_main(argc, argv, track_replace);
}

/* The commit rev names in the mirror, hex into sha (41 bytes); 0 or -1. */
static int track_rev(const char *mirror, const char *rev, char *sha)
{
	char spec[512], *out = NULL, err[256];
	const char *argv[] = {
	    "git", "-C", mirror, "rev-parse", "--verify", "--quiet", "--end-of-options",
	    spec,  NULL};
	int rc;

	snprintf(spec, sizeof(spec), "%s^{commit}", rev);
	rc = track_git(argv, &out, err, sizeof(err));
	if (rc == 0 && out && strlen(out) >= 40) {
		memcpy(sha, out, 40);
		sha[40] = '\0';
	} else {
		rc = -1;
	}
	free(out);
	return rc ? -1 : 0;
}

/* ---- runs: A/B submissions of two commits ---------------------------------- */

struct track_tree {
	const char *id, *name, *url, *branch, *suites;
};

/*
 * The track_runs id of attempt (0 first, 1 measured again) of the A/B run
 * base -> commit on tree t, made (as a git submission asking for rounds
 * first, 0: --min-rounds) when there is none yet; -1 on failure.
 */
static long long track_run_attempt(PGconn *c, const struct track_tree *t, const char *purpose,
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
static long long track_run(PGconn *c, const struct track_tree *t, const char *purpose,
                           const char *base, const char *commit)
{
	return track_run_attempt(c, t, purpose, base, commit, 0, 0);
}

/*
 * The verdict row of submission sub for one series: its verdict word,
 * change, base and patched means.  0, 1 when the run has no such row (the
 * commits did not touch that lock), -1 on a database error.
 */
struct track_row {
	char verdict[32];
	double change, base_mean, patched_mean, change_lo, change_hi;
	char unit[32];
};

static int track_row_of(PGconn *c, const char *sub, const char *const series[5],
                        struct track_row *row)
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

static void track_event(PGconn *c, const char *alert, const char *state, const char *who,
                        const char *note)
{
	const char *p[4] = {alert, state, who, note};

	db_run(c, "INSERT INTO alert_events (alert_id, state, who, note) VALUES ($1, $2, $3, $4)",
	       4, p);
}

/* The tree of id, for track_run; strings borrowed from res (the caller clears it). */
static PGresult *track_tree_of(PGconn *c, const char *id, struct track_tree *t)
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

/* Fetch tree t's branch and run a new head.  since/head: NULL or commits. */
static void track_poll(PGconn *c, const struct track_tree *t, const char *since, const char *last)
{
	char *mirror = g_strdup_printf("%s/tree-%s.git", srv_cfg.track_dir, t->id);
	char *headfile = g_strdup_printf("%s/HEAD", mirror);
	char *spec = g_strdup_printf("+refs/heads/%s:refs/heads/%s", t->branch, t->branch);
	char *ref = g_strdup_printf("refs/heads/%s", t->branch), *root_owned = NULL;
	char err[512], head[41], root[41], base[41];
	int seq0 = 0, segment = 0;
	bool rewritten;
	const char *check[] = {"git", "check-ref-format", "--branch", t->branch, NULL};
	const char *init[] = {"git", "init", "--quiet", "--bare", mirror, NULL};
	/* the tree's URL under the fetch address policy, git held to the checked address */
	struct netpolicy_pin pin = {.resolve = ""};
	const char *fetch[7 + NETPOLICY_GIT_ARGC + GITPROTO_ARGC + 5 + 1]; /* + NULL */
	/* an ssh:// URL: git's ssh is the server's wrapper (sshpin.h) */
	char helper[4096] = "", ssh_cmd[sizeof(helper) + 16], ssh_pin[sizeof(pin.ssh) + 32];
	const char *ssh_env[] = {ssh_cmd, ssh_pin, NULL};
	size_t n = 0;

	/* a poke that comes while git fetches asks for one more look */
	{
		const char *p[1] = {t->id};

		db_run(c, "UPDATE trees SET track_poked = NULL WHERE id = $1", 1, p);
	}
	if (track_git(check, NULL, err, sizeof(err)) != 0) {
		track_set_error(c, t->id, "the branch is not a branch name (git check-ref-format)");
		goto out;
	}
	if (g_mkdir_with_parents(srv_cfg.track_dir, 0700) != 0 ||
	    (access(headfile, F_OK) != 0 && track_git(init, NULL, err, sizeof(err)) != 0)) {
		track_set_error(c, t->id, "cannot make the mirror under --track-dir");
		goto out;
	}
	if (srv_cfg.allow_local_trees &&
	    (t->url[0] == '/' || !g_ascii_strncasecmp(t->url, "file://", 7)))
		snprintf(pin.url, sizeof(pin.url), "%s", t->url);
	else if (netpolicy_check_url(t->url, srv_cfg.fetch_allow, &pin, err, sizeof(err)) != 0) {
		char why[600];

		snprintf(why, sizeof(why), "refused: %s", err);
		track_set_error(c, t->id, why);
		goto out;
	}
	/* the link is made (or kept) on the first ssh tree: --track-dir/bin/locklab-ssh */
	if (pin.ssh[0] && sshpin_install(srv_cfg.track_dir, helper, sizeof(helper)) != 0) {
		char why[600];

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
	n += gitproto_args(fetch + n, srv_cfg.allow_local_trees);
	fetch[n++] = "fetch";
	fetch[n++] = "--quiet";
	fetch[n++] = "--";
	fetch[n++] = pin.url;
	fetch[n++] = spec;
	fetch[n] = NULL;
	if (track_git_env(fetch, pin.ssh[0] ? ssh_env : NULL, NULL, err, sizeof(err)) != 0) {
		char why[600];

		snprintf(why, sizeof(why), "git fetch: %s", err);
		track_set_error(c, t->id, why);
		goto out;
	}
	if (track_rev(mirror, ref, head) != 0) {
		track_set_error(c, t->id, "the branch has no commit");
		goto out;
	}
	if (last && strcmp(last, head) == 0) {
		const char *p[1] = {t->id};

		db_run(c,
		       "UPDATE trees SET track_checked = now(), track_error = "
		       "NULL WHERE id = $1",
		       1, p);
		goto out;
	}
	/* where the history starts: the first commit of the current segment, else since, else head
	 */
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
			goto out;
		}
		segment = atoi(PQgetvalue(res, 0, 0));
		if (!PQgetisnull(res, 0, 1)) {
			root_owned = g_strdup(PQgetvalue(res, 0, 1));
			seq0 = atoi(PQgetvalue(res, 0, 2));
		}
		PQclear(res);
	}
	if (root_owned)
		snprintf(root, sizeof(root), "%s", root_owned);
	else if (since && *since) {
		if (track_rev(mirror, since, root) != 0) {
			track_set_error(c, t->id, "'since' is not a commit of the branch");
			goto out;
		}
	} else {
		snprintf(root, sizeof(root), "%s", head);
	}
	snprintf(base, sizeof(base), "%s", last ? last : root);
	/* a head that does not descend from the last one: the branch was rewritten */
	rewritten = last && root_owned && track_is_ancestor(mirror, last, head) != 0;
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
	g_free(root_owned);
	g_free(mirror);
	g_free(headfile);
	g_free(spec);
	g_free(ref);
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
 * tree has no head or sample run going, run the commit in the middle of the
 * widest gap between measured commits of its current segment against the
 * gap's older end, up to --track-samples runs per new head.  The newest
 * head runs first (track_poll); these points come after it, one at a time,
 * halving the gaps as bisection would.
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
	              "'sample') AND s.state NOT IN ('done', 'failed')) ORDER BY t.id",
	              1, p);
	for (i = 0; res && i < PQntuples(res); i++) {
		struct track_tree t = {PQgetvalue(res, i, 0), PQgetvalue(res, i, 1),
		                       PQgetvalue(res, i, 2), PQgetvalue(res, i, 3),
		                       PQgetvalue(res, i, 4)};
		const char *q[3] = {t.id, t.branch, PQgetvalue(res, i, 5)};
		/* measured: both ends of every head and sample run of the segment */
		PGresult *gap = db_exec(
		    c,
		    "WITH m AS (SELECT DISTINCT tc.seq, tc.commit FROM track_commits tc JOIN "
		    "track_runs r ON r.tree_id = tc.tree_id AND r.branch = tc.branch AND tc.commit "
		    "IN "
		    "(r.commit, r.base_commit) AND r.purpose IN ('head', 'sample') WHERE "
		    "tc.tree_id = "
		    "$1 AND tc.branch = $2 AND tc.segment = $3::int), g AS (SELECT seq AS lo, "
		    "commit, "
		    "lead(seq) OVER (ORDER BY seq) AS hi FROM m) SELECT g.commit, tc.commit FROM g "
		    "JOIN track_commits tc ON tc.tree_id = $1 AND tc.branch = $2 AND tc.segment = "
		    "$3::int AND tc.seq = (g.lo + g.hi) / 2 WHERE g.hi - g.lo >= 2 ORDER BY g.hi - "
		    "g.lo DESC, g.lo DESC LIMIT 1",
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

/* ---- confirmation, alerts, fixes ----------------------------------------------- */

static void track_judge_candidates(PGconn *c)
{
	PGresult *res = db_exec(
	    c,
	    "SELECT k.id, k.tree_id, k.branch, k.machine_class, k.workload, k.lock, k.metric, "
	    "k.params_key, k.good, k.bad, k.expect, r.submission_id, s.state FROM track_candidates "
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
		/* $1..$9 the series and the step (good, bad), both queries; $10..$14 the alert's */
		char change[32], before[32], after[32];
		const char *p[14] = {PQgetvalue(res, i, 1),
		                     PQgetvalue(res, i, 2),
		                     series[0],
		                     series[1],
		                     series[2],
		                     series[3],
		                     series[4],
		                     PQgetvalue(res, i, 8),
		                     PQgetvalue(res, i, 9),
		                     change,
		                     before,
		                     after,
		                     row.unit,
		                     kid};

		if (strcmp(expect, "regression") == 0) {
			PGresult *ins;

			snprintf(change, sizeof(change), "%.6f", row.change);
			snprintf(before, sizeof(before), "%.6g", row.base_mean);
			snprintf(after, sizeof(after), "%.6g", row.patched_mean);
			ins = db_exec(
			    c,
			    "INSERT INTO alerts (tree_id, branch, machine_class, workload, "
			    "lock, metric, params_key, state, good, bad, bisect_good, "
			    "bisect_bad, change, before_mean, after_mean, unit, confirm_run) "
			    "VALUES ($1, $2, $3, $4, $5, $6, $7, 'confirmed', $8, $9, $8, $9, "
			    "$10, $11, $12, $13, (SELECT run_id FROM track_candidates WHERE id "
			    "= $14)) ON CONFLICT DO NOTHING RETURNING id",
			    14, p);
			if (ins && PQntuples(ins) == 1) {
				const char *aid = PQgetvalue(ins, 0, 0);

				track_event(c, aid, "new", "tracker",
				            "proposed by the change-point detector");
				track_event(c, aid, "confirmed", "tracker",
				            "the A/B of the two commits: regression");
				fprintf(stderr,
				        "locklab-server: tracker: alert %s: %s %s %s %+.1f%%\n",
				        aid, series[1], series[2], series[3], 100 * row.change);
			}
			PQclear(ins);
		} else {
			/* a confirmed improvement after an open alert's step reverses it */
			PGresult *fx = db_exec(
			    c,
			    "UPDATE alerts a SET state = 'fixed', fixed_by = $9, state_by = "
			    "'tracker', "
			    "state_at = now() FROM track_commits ab, track_commits g WHERE "
			    "a.tree_id = $1 "
			    "AND a.branch = $2 AND a.machine_class = $3 AND a.workload = $4 AND "
			    "a.lock = "
			    "$5 AND a.metric = $6 AND a.params_key = $7 AND a.state IN ('new', "
			    "'confirmed', 'bisected') AND ab.tree_id = a.tree_id AND ab.branch = "
			    "a.branch AND ab.commit = a.bad AND g.tree_id = a.tree_id AND g.branch "
			    "= "
			    "a.branch AND g.commit = $8 AND ab.seq <= g.seq RETURNING a.id",
			    9, p);
			int k;

			for (k = 0; fx && k < PQntuples(fx); k++)
				track_event(c, PQgetvalue(fx, k, 0), "fixed", "tracker",
				            "a later step reverses it (confirmed by A/B)");
			PQclear(fx);
		}
	}
	PQclear(res);
}

/* ---- the alert as a mail ------------------------------------------------------- */

/*
 * Queue the mail of a bisected alert to the commit's author, Cc the tree's
 * list when it has one, in the kernel test robot's manner: the finding first, the commit, the
 * before/after table, how to reproduce with lockbench.  Kept in the outbox (kind 'alert', held in a
 * dry run) under the confirming A/B's submission.
 */
static void track_mail_alert(PGconn *c, const char *aid)
{
	const char *p[1] = {aid};
	PGresult *res = db_exec(
	    c,
	    "SELECT a.commit, a.subject, a.author, t.name, a.branch, t.url, a.good, a.bad, "
	    "a.machine_class, a.workload, a.lock, a.metric, a.params_key, a.change, a.before_mean, "
	    "a.after_mean, a.unit, r.submission_id, (SELECT count(*) FROM bisect_steps st WHERE "
	    "st.alert_id = a.id), a.bisect_good, t.list FROM alerts a JOIN trees t ON t.id = "
	    "a.tree_id "
	    "JOIN "
	    "track_runs r ON r.id = a.confirm_run WHERE a.id = $1 AND a.commit IS NOT NULL AND NOT "
	    "EXISTS (SELECT 1 FROM outbox o WHERE o.kind = 'alert' AND o.subject LIKE '%alert ' "
	    "|| a.id || ']%')",
	    1, p);
	char *body = NULL, *subject = NULL, *msg = NULL, *msgid = NULL, *to = NULL, err[256];
	const char *public_url = *srv_cfg.public_url ? srv_cfg.public_url : srv_cfg.listen;
	double change;

	if (!res || PQntuples(res) != 1)
		goto out;
	change = strtod(PQgetvalue(res, 0, 13), NULL);
	subject = g_strdup_printf("[locklab alert %s] %.12s %s: %+.1f%% %s regression", aid,
	                          PQgetvalue(res, 0, 0), PQgetvalue(res, 0, 1), 100 * change,
	                          PQgetvalue(res, 0, 11));
	body = g_strdup_printf(
	    "Greeting,\n\n"
	    "locklab found a %+.1f%% change of %s (%s) in %s on the %s lock (%s), on the\n"
	    "%s machines, and bisected it with interleaved A/B runs to:\n\n"
	    "commit: %s\n(\"%s\")\nauthor: %s\n"
	    "tree:   %s %s\nrange:  %.12s..%.12s, %s A/B steps\n\n"
	    "%16.12s %28.12s\n---------------- ---------------------------\n"
	    "%16.6g %+10.1f%% %16.6g  %s.%s.%s.%s\n\n"
	    "To reproduce (the lockbench of each commit, A/B):\n\n"
	    "  git clone %s tree && cd tree\n"
	    "  git checkout %.12s && make build/lockbench && cp build/lockbench /tmp/lb-base\n"
	    "  git checkout %.12s && make build/lockbench\n"
	    "  for r in 0 1 2; do\n"
	    "    /tmp/lb-base run --suite smoke --locks %s --workloads %s --round $r --json "
	    "base-$r.json\n"
	    "    build/lockbench run --suite smoke --locks %s --workloads %s --variant patched "
	    "--round $r --json patched-$r.json\n"
	    "  done\n"
	    "  build/lockbench compare base-0.json,base-1.json,base-2.json "
	    "patched-0.json,patched-1.json,patched-2.json\n\n"
	    "The alert, its history and steps: %s%s/#/alerts\n\n"
	    "Thanks,\nlocklab\n",
	    100 * change, PQgetvalue(res, 0, 11), PQgetvalue(res, 0, 16), PQgetvalue(res, 0, 9),
	    PQgetvalue(res, 0, 10), PQgetvalue(res, 0, 12), PQgetvalue(res, 0, 8),
	    PQgetvalue(res, 0, 0), PQgetvalue(res, 0, 1), PQgetvalue(res, 0, 2),
	    PQgetvalue(res, 0, 3), PQgetvalue(res, 0, 4), PQgetvalue(res, 0, 6),
	    PQgetvalue(res, 0, 7), PQgetvalue(res, 0, 18), PQgetvalue(res, 0, 19),
	    PQgetvalue(res, 0, 0), strtod(PQgetvalue(res, 0, 14), NULL), 100 * change,
	    strtod(PQgetvalue(res, 0, 15), NULL), PQgetvalue(res, 0, 9), PQgetvalue(res, 0, 10),
	    PQgetvalue(res, 0, 11), PQgetvalue(res, 0, 12), PQgetvalue(res, 0, 5),
	    PQgetvalue(res, 0, 19), PQgetvalue(res, 0, 0), PQgetvalue(res, 0, 10),
	    PQgetvalue(res, 0, 9), PQgetvalue(res, 0, 10), PQgetvalue(res, 0, 9),
	    strncmp(public_url, "http", 4) ? "http://" : "", public_url);
	to = mail_addr_spec(PQgetvalue(res, 0, 2));
	{
		struct mail_reply m = {.from = srv_cfg.mail_from,
		                       .to = PQgetvalue(res, 0, 2),
		                       .cc = db_value(res, 0, 20),
		                       .subject = subject,
		                       .domain = srv_cfg.mail_domain,
		                       .body = body,
		                       .tag = strtoll(aid, NULL, 10),
		                       .date = time(NULL),
		                       .new_thread = true};

		msg = mail_build_reply(&m, &msgid, err, sizeof(err));
	}
	if (!msg || !to) {
		fprintf(stderr, "locklab-server: tracker: alert %s: no mail: %s\n", aid,
		        msg ? "no author address" : err);
		goto out;
	}
	{
		const char *list = db_value(res, 0, 20);
		char *rcpt = list ? g_strdup_printf("%s, %s", to, list) : g_strdup(to);
		const char *q[6] = {PQgetvalue(res, 0, 17),
		                    rcpt,
		                    subject,
		                    msg,
		                    msgid,
		                    outbox_sending() ? "queued" : "held"};

		db_run(c,
		       "INSERT INTO outbox (submission_id, kind, recipients, subject, message, "
		       "message_id, state) VALUES ($1, 'alert', $2, $3, $4, $5, $6)",
		       6, q);
		g_free(rcpt);
	}
out:
	g_free(body);
	g_free(subject);
	free(msg);
	free(msgid);
	free(to);
	PQclear(res);
}

/* ---- bisection ---------------------------------------------------------------- */

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
		if (strcmp(state, "done") == 0) {
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
			if (strcmp(moves, "regression") == 0)
				db_run(c, "UPDATE alerts SET bisect_bad = $2 WHERE id = $1", 2, q);
			else if (strcmp(moves, "skip") != 0)
				db_run(c, "UPDATE alerts SET bisect_good = $2 WHERE id = $1", 2, q);
		}
		fprintf(stderr, "locklab-server: tracker: alert %s: %.12s is %s\n", aid, commit,
		        verdict);
	}
	PQclear(res);
	return running;
}

/* One move of each open bisection: read its steps, then name or test. */
static void track_bisect(PGconn *c)
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
			track_sample(c);
			track_read_heads(c);
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

/* ---- HTTP ------------------------------------------------------------------------ */

enum handler_rc api_tree_poke(struct http_request *req, long long id)
{
	char idbuf[24];
	const char *p[1] = {idbuf};
	PGconn *c = db_conn();
	PGresult *res;
	enum handler_rc rc;

	snprintf(idbuf, sizeof(idbuf), "%lld", id);
	if (!c)
		return api_reply_db_error(req, "cannot poke the tree");
	res = db_exec(
	    c, "UPDATE trees SET track_poked = now() WHERE id = $1 AND track RETURNING id", 1, p);
	if (!res)
		return api_reply_db_error(req, "cannot poke the tree");
	if (PQntuples(res) == 0)
		rc = http_reply_error(req, 404, "not-found", "no tracked tree %lld", id);
	else
		rc = http_reply_json(req, 202,
		                     json_pack("{s:I, s:b}", "id", (json_int_t)id, "poked", 1));
	PQclear(res);
	pthread_mutex_lock(&tracker_lock);
	pthread_cond_signal(&tracker_wake);
	pthread_mutex_unlock(&tracker_lock);
	return rc;
}

#define ALERT_JSON                                                                                 \
	"json_build_object('id', a.id, 'tree', t.name, 'branch', a.branch, 'state', a.state, "     \
	"'commit', coalesce(a.commit, ''), 'subject', a.subject, 'author', a.author, 'range', "    \
	"a.good || '..' || a.bad, 'bisect_range', a.bisect_good || '..' || a.bisect_bad, "         \
	"'machine_class', a.machine_class, 'workload', a.workload, 'lock', a.lock, 'metric', "     \
	"a.metric, 'params', a.params_key, 'change', a.change, 'before', a.before_mean, 'after', " \
	"a.after_mean, 'unit', a.unit, 'reason', a.reason, 'fixed_by', a.fixed_by, 'state_by', "   \
	"a.state_by, 'state_at', a.state_at, 'created', a.created, 'steps', (SELECT "              \
	"coalesce(json_agg(json_build_object('commit', st.commit, 'good', st.good, 'verdict', "    \
	"st.verdict, 'change', st.change, 'submission', r.submission_id) ORDER BY st.created), "   \
	"'[]') FROM bisect_steps st JOIN track_runs r ON r.id = st.run_id WHERE st.alert_id = "    \
	"a.id), 'events', (SELECT coalesce(json_agg(json_build_object('state', e.state, 'who', "   \
	"e.who, 'at', e.at, 'note', e.note) ORDER BY e.at), '[]') FROM alert_events e WHERE "      \
	"e.alert_id = a.id), 'history', (SELECT coalesce(json_agg(json_build_object('seq', "       \
	"tc.seq, 'commit', p.commit, 'value', p.value) ORDER BY tc.seq), '[]') FROM track_points " \
	"p JOIN track_commits tc ON tc.tree_id = p.tree_id AND tc.branch = p.branch AND "          \
	"tc.commit "                                                                               \
	"= p.commit WHERE p.tree_id = a.tree_id AND p.branch = a.branch AND p.machine_class = "    \
	"a.machine_class AND p.workload = a.workload AND p.lock = a.lock AND p.metric = a.metric " \
	"AND p.params_key = a.params_key AND tc.segment = (SELECT segment FROM track_commits "     \
	"WHERE tree_id = a.tree_id AND branch = a.branch AND commit = a.bad)), 'seqs', (SELECT "   \
	"json_object_agg(CASE tc.commit WHEN "                                                     \
	"a.good THEN 'good' WHEN a.bad THEN 'bad' ELSE 'commit' END, tc.seq) FROM track_commits "  \
	"tc "                                                                                      \
	"WHERE tc.tree_id = a.tree_id AND tc.branch = a.branch AND tc.commit IN (a.good, a.bad, "  \
	"coalesce(a.commit, a.good))))"

enum handler_rc api_alert_list(struct http_request *req)
{
	const char *state = http_query(req, "state"), *tree = http_query(req, "tree");
	const char *p[2] = {state, tree};

	return api_reply_sql(req,
	                     "SELECT json_build_object('alerts', coalesce(json_agg(" ALERT_JSON
	                     " ORDER BY a.id DESC), '[]')) FROM alerts a JOIN trees t ON t.id = "
	                     "a.tree_id WHERE ($1::text IS NULL OR a.state = $1) AND ($2::text "
	                     "IS NULL OR t.name = $2)",
	                     2, p, "alerts");
}

enum handler_rc api_alert_update(struct http_request *req, long long id)
{
	static const char *const states[] = {"new",   "confirmed", "bisected",
	                                     "fixed", "invalid",   "wontfix"};
	const char *state, *who = "admin", *note = NULL;
	char idbuf[24];
	json_t *doc = http_body_json(req);
	json_error_t jerr;
	PGconn *c;
	PGresult *res = NULL;
	enum handler_rc rc;
	size_t i;

	if (!doc)
		return HANDLER_HANDLED;
	if (json_unpack_ex(doc, &jerr, JSON_STRICT, "{s:s, s?s, s?s}", "state", &state, "who", &who,
	                   "note", &note) != 0) {
		rc = http_reply_error(req, 400, "invalid", "%s", jerr.text);
		goto out;
	}
	for (i = 0; i < sizeof(states) / sizeof(states[0]); i++)
		if (strcmp(state, states[i]) == 0)
			break;
	if (i == sizeof(states) / sizeof(states[0])) {
		rc = http_reply_error(req, 400, "invalid",
		                      "state: new, confirmed, bisected, fixed, invalid or wontfix");
		goto out;
	}
	if (!*who || strlen(who) > 200 || (note && strlen(note) > 2000)) {
		rc = http_reply_error(req, 400, "invalid",
		                      "who: 1 to 200 bytes; note: at most 2000");
		goto out;
	}
	c = db_conn();
	if (!c) {
		rc = api_reply_db_error(req, "cannot change the alert");
		goto out;
	}
	snprintf(idbuf, sizeof(idbuf), "%lld", id);
	{
		const char *p[3] = {idbuf, state, who};

		res = db_exec(c,
		              "UPDATE alerts SET state = $2, state_by = $3, state_at = now() WHERE "
		              "id = $1 RETURNING id",
		              3, p);
	}
	if (!res) {
		rc = api_reply_db_error(req, "cannot change the alert");
		goto out;
	}
	if (PQntuples(res) == 0) {
		rc = http_reply_error(req, 404, "not-found", "no alert %lld", id);
		goto out;
	}
	track_event(c, idbuf, state, who, note);
	{
		const char *p[1] = {idbuf};

		PQclear(res);
		res = NULL;
		rc = api_reply_sql(req,
		                   "SELECT " ALERT_JSON " FROM alerts a JOIN trees t ON t.id = "
		                   "a.tree_id WHERE a.id = $1",
		                   1, p, "alert");
	}
out:
	PQclear(res);
	json_decref(doc);
	return rc;
}
