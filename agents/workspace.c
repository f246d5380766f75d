/*
 * workspace.c - a job's git side: the mirror per tree, the worktrees, the
 * series applied with git am.  git is trusted and runs outside the sandbox,
 * but everything it is given from a submission is checked first (job.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <glib.h>

#include "agent.h"
#include "fsutil.h"
#include "job.h"
#include "log.h"
#include "sandbox.h"
#include "spawn.h"
#include "strutil.h"

/* What every git the agent runs is told: no prompts, no system config. */
static const char *const git_env[] = {"GIT_TERMINAL_PROMPT=0", "GIT_CONFIG_NOSYSTEM=1", NULL};

/*
 * And no automatic maintenance.  Left on, the `git am` or `git fetch` of one
 * job starts a `git gc` in the background that repacks the mirror (for a
 * kernel tree, a minute or more of CPU and minutes of disk) while the rounds
 * that follow are measured.  The mirror is kept instead by maintain_mirror,
 * in the foreground (git_foreground_gc), before anything is measured.
 */
static const char *const git_no_auto_gc[] = {
    "GIT_CONFIG_COUNT=2",       "GIT_CONFIG_KEY_0=gc.auto",
    "GIT_CONFIG_VALUE_0=0",     "GIT_CONFIG_KEY_1=maintenance.auto",
    "GIT_CONFIG_VALUE_1=false", NULL};
static const char *const git_foreground_gc[] = {
    "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=gc.autoDetach", "GIT_CONFIG_VALUE_0=false", NULL};

/*
 * Run git with git_env, then gc (how git may maintain the repository), then
 * env; its result into res.  spawn_run's return, err set when it is not 0.
 */
static int git_spawn(const char *log, const char *const argv[], const char *const *gc,
                     const char *const *env, int wall_s, struct spawn_result *res, size_t max,
                     bool capture, char *err, size_t errlen)
{
	const char *const *parts[] = {git_env, gc, env};
	const char *all[16];
	size_t n = 0;

	for (size_t p = 0; p < 3; p++)
		for (const char *const *e = parts[p];
		     e && *e && n < sizeof(all) / sizeof(all[0]) - 1; e++)
			all[n++] = *e;
	all[n] = NULL;

	struct spawn_cmd c = {.argv = argv,
	                      .env = all,
	                      .out_path = log,
	                      .capture = capture,
	                      .capture_max = max,
	                      .wall_s = wall_s};
	return spawn_run(&c, res, err, errlen);
}

/*
 * Run git (trusted, outside the sandbox) with output appended to log, or
 * captured into out (up to max bytes) when out is set; 0 on exit status 0.
 */
int git_run(struct job *j, const char *log, const char *const argv[], struct spawn_result *out,
            size_t max)
{
	return git_run_env(j, log, argv, NULL, out, max);
}

int git_run_env(struct job *j, const char *log, const char *const argv[], const char *const *env,
                struct spawn_result *out, size_t max)
{
	struct spawn_result r;
	char err[256];
	int rc = git_spawn(log, argv, git_no_auto_gc, env, 600, out ? out : &r, max, out != NULL,
	                   err, sizeof(err));
	const struct spawn_result *res = out ? out : &r;
	if (rc)
		snprintf(j->fail_reason, sizeof(j->fail_reason), "%s: git: %s", INFRA, err);
	else
		rc = res->status == 0 && !res->timed_out ? 0 : -1;
	if (!out)
		spawn_result_release(&r);
	return rc;
}

int run_git(struct job *j, const char *log, const char *const argv[])
{
	return git_run(j, log, argv, NULL, 0);
}

/*
 * A revision, ref or URL from a submission or a tree record is data: one
 * that looks like an option is refused by name, before git sees it.
 */
bool looks_like_option(const char *s)
{
	return !s[0] || s[0] == '-';
}

/* A ref to fetch: a full object name, or a name `git check-ref-format` takes. */
bool ref_ok(struct job *j, const char *ref)
{
	size_t n = strspn(ref, "0123456789abcdef");
	if (looks_like_option(ref))
		return false;
	if ((n == 40 || n == 64) && !ref[n])
		return true;
	const char *argv[] = {"git", "check-ref-format", "--allow-onelevel", ref, NULL};
	return run_git(j, "/dev/null", argv) == 0;
}

/*
 * A tree's URL the agent hands to git: no option, no line break.  An admin's
 * tree record, a local path included; a job's git URL is codesource.h's.
 */
bool url_ok(const char *url)
{
	return !looks_like_option(url) && !strpbrk(url, "\n\r");
}

/*
 * The job's reason: what failed and the log's last lines.  A log that ran out
 * of disk says so first: that is the build machine's failure, not a patch
 * that does not build.
 */
void fail_with_tail(struct job *j, const char *what, const char *log, int lines)
{
	char *tail = sandbox_tail(log, lines);
	if (strstr(tail, "No space left on device") || strstr(tail, "Disk quota exceeded"))
		snprintf(j->fail_reason, sizeof(j->fail_reason),
		         "%s: the agent's disk is full (%s):\n%s", INFRA, what, tail);
	else
		snprintf(j->fail_reason, sizeof(j->fail_reason), "%s:\n%s", what, tail);
	free(tail);
}

/*
 * `git gc --auto` in the mirror, in the foreground: git's own thresholds
 * (6,700 loose objects, 50 packs) decide whether there is anything to do,
 * and when there is, the job waits for it here, before its builds and
 * rounds, rather than measuring beside it.  A failure is logged, not fatal:
 * the mirror still works unpacked.
 */
static void maintain_mirror(struct job *j, const char *log)
{
	const char *argv[] = {"git", "-C", j->mirror, "gc", "--auto", "--quiet", NULL};
	struct spawn_result r;
	char err[256];

	job_activity(j, NULL, "maintaining the tree's mirror (git gc --auto)");
	if (git_spawn(log, argv, git_foreground_gc, NULL, 3600, &r, 0, false, err, sizeof(err)))
		agent_log("warn", j->id, "git gc --auto in %s did not run: %s", j->mirror, err);
	else if (r.status || r.timed_out)
		agent_log("warn", j->id, "git gc --auto in %s failed (status %d%s): see %s",
		          j->mirror, r.status, r.timed_out ? ", past an hour" : "", log);
	spawn_result_release(&r);
}

/* A cached bare mirror per tree URL, fetched before each job. */
int prepare_mirror(struct job *j, const char *url)
{
	char log[4096], name[256];
	unsigned long h = 5381;
	for (const char *p = url; *p; p++)
		h = h * 33 + (unsigned char)*p;
	snprintf(name, sizeof(name), "%lx.git", h);
	snprintf(j->mirror, sizeof(j->mirror), "%s/%s", j->ag->mirrors_dir, name);
	snprintf(log, sizeof(log), "%s/git.log", j->dir);
	job_activity(j, NULL, "fetching the tree");
	if (!url_ok(url)) {
		snprintf(j->fail_reason, sizeof(j->fail_reason),
		         "the tree's URL '%.200s' looks like an option, not a URL", url);
		return -1;
	}
	struct stat st;
	if (stat(j->mirror, &st)) {
		const char *argv[] = {"git", "clone", "--quiet", "--mirror",
		                      "--",  url,     j->mirror, NULL};
		time_t t0 = time(NULL);
		agent_log("info", j->id, "cloning the tree %s into a mirror of its own", url);
		if (run_git(j, log, argv)) {
			fail_with_tail(j, "cannot clone the tree", log, 10);
			return -1;
		}
		agent_log("info", j->id, "cloned the tree in %lld s", (long long)(time(NULL) - t0));
	} else {
		const char *argv[] = {"git",     "-C",      j->mirror, "fetch",
		                      "--quiet", "--prune", "origin",  "+refs/heads/*:refs/heads/*",
		                      NULL};
		if (run_git(j, log, argv)) {
			fail_with_tail(j, "cannot fetch the tree", log, 10);
			return -1;
		}
	}
	maintain_mirror(j, log);
	return 0;
}

/* Run git (argv) in the mirror; its first line of output, a full commit name, into out. */
static int git_commit_name(struct job *j, const char *const argv[], char *out, size_t outlen)
{
	struct spawn_result r;
	int rc = git_run(j, "/dev/null", argv, &r, 256);
	if (!rc && r.out) {
		r.out[strcspn(r.out, "\n")] = 0;
		if (strlen(r.out) >= 40 && strlen(r.out) < outlen)
			memcpy(out, r.out, strlen(r.out) + 1);
		else
			rc = -1;
	}
	spawn_result_release(&r);
	return rc ? -1 : 0;
}

/* The commit rev names in the mirror, by git's own rules (--verify, --end-of-options). */
int rev_parse(struct job *j, const char *rev, char *out, size_t outlen)
{
	char spec[1100];
	if (looks_like_option(rev) || strlen(rev) > 1000)
		return -1;
	snprintf(spec, sizeof(spec), "%s^{commit}", rev);
	const char *argv[] = {"git",     "-C",       j->mirror,          "rev-parse",
	                      "--quiet", "--verify", "--end-of-options", spec,
	                      NULL};
	return git_commit_name(j, argv, out, outlen);
}

/* The best common ancestor of commits a and b in the mirror (git merge-base). */
int merge_base(struct job *j, const char *a, const char *b, char *out, size_t outlen)
{
	if (looks_like_option(a) || looks_like_option(b))
		return -1;
	const char *argv[] = {"git", "-C", j->mirror, "merge-base", "--end-of-options", a, b, NULL};
	return git_commit_name(j, argv, out, outlen);
}

/*
 * The commits of base..tip, oldest first, along first parents (a merge in
 * the range is one commit: what it brought in is part of it), up to max of
 * them into out; the count when the oldest one's first parent is base (the
 * range is base plus those commits, in order), else -1.
 */
int range_commits(struct job *j, const char *base, const char *tip, char (*out)[48], int max)
{
	char range[300];
	struct spawn_result r = {0};
	int n = 0, rc = -1;

	if (looks_like_option(base) || looks_like_option(tip) ||
	    (size_t)snprintf(range, sizeof(range), "%s..%s", base, tip) >= sizeof(range))
		return -1;
	const char *argv[] = {"git",       "-C",
	                      j->mirror,   "rev-list",
	                      "--reverse", "--first-parent",
	                      "--parents", "--end-of-options",
	                      range,       NULL};
	if (git_run(j, "/dev/null", argv, &r, 1 << 20) || !r.out || r.out_truncated)
		goto out;
	for (char *line = r.out, *next; *line; line = next) {
		next = line + strcspn(line, "\n");
		if (*next)
			*next++ = 0;
		char *parent = strchr(line, ' ');
		if (!n && (!parent || strncmp(parent + 1, base, strlen(base)) ||
		           (parent[1 + strlen(base)] != ' ' && parent[1 + strlen(base)])))
			goto out; /* the range does not start at base */
		if (parent)
			*parent = 0;
		if (n < max && strlen(line) < sizeof(out[0]))
			memcpy(out[n], line, strlen(line) + 1);
		n++;
	}
	rc = n;
out:
	spawn_result_release(&r);
	return rc;
}

/* "abc123456789 subject" of commit in the mirror into out; "" when git cannot say. */
void commit_label(struct job *j, const char *commit, char *out, size_t outlen)
{
	struct spawn_result r = {0};
	const char *argv[] = {"git",         "-C",
	                      j->mirror,     "show",
	                      "-s",          "--format=%h %s",
	                      "--abbrev=12", "--end-of-options",
	                      commit,        NULL};
	out[0] = 0;
	if (!looks_like_option(commit) && !git_run(j, "/dev/null", argv, &r, 4096) && r.out)
		snprintf(out, outlen, "%.*s", (int)strcspn(r.out, "\n"), r.out);
	spawn_result_release(&r);
}

/*
 * A worktree of the mirror at path, detached at rev (a commit name the agent
 * resolved or its own ref); its git folder is kept in gitdir, read from the
 * .git file git just wrote, before anything untrusted ran in the tree.
 */
int add_worktree(struct job *j, const char *path, const char *rev, char *gitdir, size_t gitdir_len)
{
	char log[4096], dotgit[1200];
	struct stat st;
	snprintf(log, sizeof(log), "%s/git.log", j->dir);
	const char *argv[] = {"git",      "-C", j->mirror, "worktree", "add", "--quiet",
	                      "--detach", "--", path,      rev,        NULL};
	const char *prune[] = {"git", "-C", j->mirror, "worktree", "prune", NULL};
	const char *slash = strrchr(path, '/');
	job_activity(j, NULL, "checking out the %s tree", slash ? slash + 1 : path);
	/*
	 * A tree left by an earlier run of this job on this machine (an agent
	 * killed before it cleaned up, then started again) goes first, and git
	 * forgets it: the job starts over in a fresh tree.
	 */
	if (lstat(path, &st) == 0) {
		agent_log("warn", j->id, "%s is left from an earlier run of this job: removed",
		          path);
		if (fs_remove_tree(path) || run_git(j, log, prune)) {
			snprintf(j->fail_reason, sizeof(j->fail_reason),
			         "%s: cannot remove the leftover worktree %s", INFRA, path);
			return -1;
		}
	}
	if (run_git(j, log, argv)) {
		fail_with_tail(j, "cannot make a worktree", log, 10);
		return -1;
	}
	snprintf(dotgit, sizeof(dotgit), "%s/.git", path);
	char *text = strutil_file_text(dotgit);
	if (!text || strncmp(text, "gitdir: ", 8) || strlen(text + 8) >= gitdir_len) {
		free(text);
		snprintf(j->fail_reason, sizeof(j->fail_reason), "%s: git made no worktree in %s",
		         INFRA, path);
		return -1;
	}
	text[strcspn(text, "\n")] = 0;
	snprintf(gitdir, gitdir_len, "%s", text + 8);
	free(text);
	return 0;
}

/* "--git-dir=..." and "--work-tree=..." for git in a worktree, in a and b. */
static void worktree_args(const char *gitdir, const char *tree, char *a, size_t alen, char *b,
                          size_t blen)
{
	snprintf(a, alen, "--git-dir=%s", gitdir);
	snprintf(b, blen, "--work-tree=%s", tree);
}

/* Where patch k's message is kept in the job's folder. */
static void mail_path(const struct job *j, int k, char *out, size_t n)
{
	snprintf(out, n, "%s/patch-%d.eml", j->dir, k);
}

/*
 * Write the server's "mails" (each patch's message as the list sent it,
 * base64) one per file, for git am.  Returns how many, or -1.
 */
int write_mails(struct job *j, json_t *mails)
{
	size_t i;
	json_t *v;

	if (!json_is_array(mails))
		return 0;
	json_array_foreach(mails, i, v)
	{
		char path[4096];
		gsize len = 0;
		guchar *raw;
		FILE *f;
		int bad;

		if (!json_is_string(v))
			return -1;
		raw = g_base64_decode(json_string_value(v), &len);
		mail_path(j, (int)i + 1, path, sizeof(path));
		f = fopen(path, "w");
		bad = !f || fwrite(raw, 1, len, f) != len;
		if (f && fclose(f))
			bad = 1;
		g_free(raw);
		if (bad)
			return -1;
	}
	return (int)json_array_size(mails);
}

int series_from_mails(struct job *j, json_t *mails)
{
	j->npatches = write_mails(j, mails);
	if (j->npatches <= 0) {
		snprintf(j->fail_reason, sizeof(j->fail_reason), "job has no patches");
		return -1;
	}
	return add_worktree(j, j->series_tree, j->base_rev, j->series_gitdir,
	                    sizeof(j->series_gitdir));
}

/* git am of file in the series tree, -p0 when asked; aborted when it fails. 0 or -1. */
static int am_once(struct job *j, const char *file, const char *log, bool p0)
{
	char gd[1400], wt[1200];
	worktree_args(j->series_gitdir, j->series_tree, gd, sizeof(gd), wt, sizeof(wt));
	const char *argv[] = {"git",
	                      "-C",
	                      j->series_tree,
	                      gd,
	                      wt,
	                      "-c",
	                      "user.name=locklab-agent",
	                      "-c",
	                      "user.email=agent@locklab.invalid",
	                      "am",
	                      "-3",
	                      "--quiet",
	                      "--patch-format=mbox",
	                      p0 ? "-p0" : "--",
	                      p0 ? "--" : file,
	                      p0 ? file : NULL,
	                      NULL};
	if (run_git(j, log, argv)) {
		const char *abort_argv[] = {"git", "-C", j->series_tree, gd,
		                            wt,    "am", "--abort",      NULL};
		run_git(j, "/dev/null", abort_argv);
		return -1;
	}
	return 0;
}

int git_am(struct job *j, int k)
{
	char log[4096], p0log[4096], file[4096];
	snprintf(log, sizeof(log), "%s/am.log", j->dir);
	snprintf(p0log, sizeof(p0log), "%s/am-p0.log", j->dir);
	mail_path(j, k, file, sizeof(file));
	if (am_once(j, file, log, false) == 0)
		return 0;
	/* what a maintainer tries next by hand: a patch made with --no-prefix */
	if (am_once(j, file, p0log, true) == 0) {
		agent_log("info", j->id,
		          "patch %d of %d applied with git am -p0 (no a/ b/ prefixes)", k,
		          j->npatches);
		return 0;
	}
	char msg[128];
	snprintf(msg, sizeof(msg), "patch %d of %d does not apply (git am -3)", k, j->npatches);
	fail_with_tail(j, msg, log, 15);
	return -1;
}

/* The series tree at commit (of the mirror), as git checkout leaves it; 0 or -1. */
int checkout_commit(struct job *j, const char *commit)
{
	char gd[1400], wt[1200], log[4096];
	snprintf(log, sizeof(log), "%s/git.log", j->dir);
	worktree_args(j->series_gitdir, j->series_tree, gd, sizeof(gd), wt, sizeof(wt));
	const char *argv[] = {"git",     "-C",      j->series_tree, gd,     wt,   "checkout",
	                      "--quiet", "--force", "--detach",     commit, "--", NULL};
	if (looks_like_option(commit) || run_git(j, log, argv)) {
		snprintf(j->fail_reason, sizeof(j->fail_reason),
		         "%s: cannot check out commit %.64s of the range", INFRA, commit);
		return -1;
	}
	return 0;
}

int tree_changes(struct job *j, const char *gitdir, const char *from, bool added,
                 struct spawn_result *out, size_t max)
{
	char gd[1400];
	/* from its git folder, not the tree: a build may have rewritten the tree's .git */
	snprintf(gd, sizeof(gd), "--git-dir=%s", gitdir);
	const char *argv[14];
	size_t n = 0;
	argv[n++] = "git";
	argv[n++] = "-C";
	argv[n++] = j->mirror;
	argv[n++] = gd;
	argv[n++] = "diff";
	argv[n++] = "--name-only";
	argv[n++] = "--no-renames"; /* a rename is both of its paths */
	argv[n++] = "-z";
	if (added)
		argv[n++] = "--diff-filter=A";
	argv[n++] = from;
	argv[n++] = "HEAD";
	argv[n++] = "--";
	argv[n] = NULL;
	memset(out, 0, sizeof(*out));
	if (looks_like_option(from) || git_run(j, "/dev/null", argv, out, max) ||
	    out->out_truncated) {
		spawn_result_release(out);
		return -1;
	}
	return 0;
}

int series_changes(struct job *j, const char *from, bool added, struct spawn_result *out,
                   size_t max)
{
	return tree_changes(j, j->series_gitdir, from, added, out, max);
}

int series_head(struct job *j, char *out, size_t outlen)
{
	char gd[1400];
	snprintf(gd, sizeof(gd), "--git-dir=%s", j->series_gitdir);
	const char *argv[] = {"git", "-C", j->mirror, gd, "rev-parse", "--verify", "HEAD", NULL};
	return git_commit_name(j, argv, out, outlen);
}

int tree_date_paths(struct job *j, const char *gitdir, const char *tree, const char *changed,
                    size_t len)
{
	const struct timespec y2k = {DATE_BACK, 0};
	char gd[1400], wt[1200];
	struct spawn_result files = {0};
	worktree_args(gitdir, tree, gd, sizeof(gd), wt, sizeof(wt));
	const char *ls[] = {"git", "-C", tree, gd, wt, "ls-files", "-z", NULL};
	int rc = git_run(j, "/dev/null", ls, &files, 256 << 20) || files.out_truncated ? -1 : 0;
	if (!rc && (fs_date_paths(tree, files.out, files.out_len, &y2k) ||
	            fs_date_paths(tree, changed, len, NULL)))
		rc = -1;
	spawn_result_release(&files);
	return rc;
}

int date_tree_paths(struct job *j, const char *changed, size_t len)
{
	return tree_date_paths(j, j->series_gitdir, j->series_tree, changed, len);
}

int date_tree_back(struct job *j, const char *from)
{
	struct spawn_result changed;
	if (series_changes(j, from, false, &changed, 64 << 20))
		return -1;
	int rc = date_tree_paths(j, changed.out, changed.out_len);
	spawn_result_release(&changed);
	return rc;
}

int date_changes_now(struct job *j, const char *from)
{
	struct spawn_result changed;
	if (series_changes(j, from, false, &changed, 64 << 20))
		return -1;
	int rc = fs_date_paths(j->series_tree, changed.out, changed.out_len, NULL);
	spawn_result_release(&changed);
	return rc;
}

/*
 * The job's worktrees go (removed in C: submitted code may have left
 * symbolic links in them), then git forgets them; the logs stay.
 */
void remove_worktrees(struct job *j)
{
	if (!j->mirror[0])
		return;
	if (fs_remove_tree(j->base_tree) || fs_remove_tree(j->series_tree))
		agent_log("warn", j->id, "cannot remove the job's worktrees: %s", strerror(errno));
	const char *argv[] = {"git", "-C", j->mirror, "worktree", "prune", NULL};
	run_git(j, "/dev/null", argv); /* leftovers are pruned at the next job */
}
