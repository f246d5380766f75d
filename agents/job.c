/* job.c - one job from claim to the last posted round (agent.h). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"
#include "fsutil.h"
#include "result.h"
#include "sandbox.h"
#include "spawn.h"

#define MAX_VARIANTS 8
/* how a failure that is the machine's, not the patch's, starts its reason */
#define INFRA "infrastructure failure, not a finding about the patch"

struct variant {
	char name[24];  /* base, patch-K, patched */
	char bin[1400]; /* native: its lockbench; kernel: its bzImage */
};

struct job {
	struct agent *ag;
	long long id;
	const char *suite;
	char dir[1024];
	char base_tree[1100];
	char series_tree[1100];
	char mirror[1100];
	/*
	 * The worktrees' own git folders, read when git made them: a build may
	 * rewrite a tree's .git file, so git is never pointed at the tree alone.
	 */
	char base_gitdir[1300];
	char series_gitdir[1300];
	char base_rev[128];
	char locks[1024]; /* --locks value, "" for the whole suite */
	/* the lock run only as an untouched control ("controls" of each document), "" for none */
	char controls[64];
	struct variant v[MAX_VARIANTS];
	int nv;
	int npatches;
	bool kernel; /* tree kind kernel: variants are bzImages */
	/* lease */
	int lease_s;
	atomic_int lost; /* heartbeat said the job is no longer ours */
	atomic_int done; /* stop the heartbeat thread */
	pthread_t hb;
	bool hb_started;
	/* progress as the server last said it */
	int more_rounds;
	int next_round;
	int confirm_from; /* 0, or the round from which a change found must be confirmed */
	char fail_reason[8192];
};

void agent_log(const char *level, long long job, const char *fmt, ...)
{
	char ts[32];
	time_t t = time(NULL);
	struct tm tm;
	va_list ap;
	gmtime_r(&t, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
	fprintf(stderr, "%s level=%s", ts, level);
	if (job > 0)
		fprintf(stderr, " job=%lld", job);
	fprintf(stderr, " msg=\"");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\"\n");
}

int agent_init(struct agent *ag, const struct agent_cfg *cfg)
{
	char p[4096];
	memset(ag, 0, sizeof(*ag));
	ag->cfg = *cfg;
	snprintf(ag->accel, sizeof(ag->accel), "auto"); /* probed again at each start */
	if (fs_mkdirs(cfg->workdir)) {
		fprintf(stderr, "locklab-agent: cannot create workdir %s: %s\n", cfg->workdir,
		        strerror(errno));
		return -1;
	}
	snprintf(p, sizeof(p), "%s/spool", cfg->workdir);
	ag->spool_dir = strdup(p);
	snprintf(p, sizeof(p), "%s/mirrors", cfg->workdir);
	ag->mirrors_dir = strdup(p);
	snprintf(p, sizeof(p), "%s/jobs", cfg->workdir);
	ag->jobs_dir = strdup(p);
	if (fs_mkdirs(ag->spool_dir) || fs_mkdirs(ag->mirrors_dir) || fs_mkdirs(ag->jobs_dir)) {
		fprintf(stderr, "locklab-agent: cannot create folders in %s: %s\n", cfg->workdir,
		        strerror(errno));
		return -1;
	}
	if (api_init(&ag->api, cfg->server, cfg->token)) {
		fprintf(stderr, "locklab-agent: out of memory\n");
		return -1;
	}
	return 0;
}

void agent_release(struct agent *ag)
{
	api_release(&ag->api);
	free(ag->spool_dir);
	free(ag->mirrors_dir);
	free(ag->jobs_dir);
}

/* What every git the agent runs is told: no prompts, no system config. */
static const char *const git_env[] = {"GIT_TERMINAL_PROMPT=0", "GIT_CONFIG_NOSYSTEM=1", NULL};

/*
 * Run git (trusted, outside the sandbox) with output appended to log, or
 * captured into out (up to max bytes) when out is set; 0 on exit status 0.
 */
static int git_run(struct job *j, const char *log, const char *const argv[],
                   struct spawn_result *out, size_t max)
{
	struct spawn_cmd c = {.argv = argv,
	                      .env = git_env,
	                      .out_path = log,
	                      .capture = out != NULL,
	                      .capture_max = max,
	                      .wall_s = 600};
	struct spawn_result r;
	char err[256];
	int rc = spawn_run(&c, out ? out : &r, err, sizeof(err));
	const struct spawn_result *res = out ? out : &r;
	if (rc)
		snprintf(j->fail_reason, sizeof(j->fail_reason), "%s: git: %s", INFRA, err);
	else
		rc = res->status == 0 && !res->timed_out ? 0 : -1;
	if (!out)
		spawn_result_release(&r);
	return rc;
}

static int run_git(struct job *j, const char *log, const char *const argv[])
{
	return git_run(j, log, argv, NULL, 0);
}

/*
 * A revision, ref or URL from a submission or a tree record is data: one
 * that looks like an option is refused by name, before git sees it.
 */
static bool looks_like_option(const char *s)
{
	return !s[0] || s[0] == '-';
}

/* A ref to fetch: a full object name, or a name `git check-ref-format` takes. */
static bool ref_ok(struct job *j, const char *ref)
{
	size_t n = strspn(ref, "0123456789abcdef");
	if (looks_like_option(ref))
		return false;
	if ((n == 40 || n == 64) && !ref[n])
		return true;
	const char *argv[] = {"git", "check-ref-format", "--allow-onelevel", ref, NULL};
	return run_git(j, "/dev/null", argv) == 0;
}

/* A URL the agent hands to git: no option; submitted ones with a network scheme. */
static bool url_ok(const char *url, bool submitted)
{
	if (looks_like_option(url) || strpbrk(url, "\n\r"))
		return false;
	if (!submitted)
		return true; /* an admin's tree record: a local path is fine */
	return !strncasecmp(url, "https://", 8) || !strncasecmp(url, "http://", 7) ||
	       !strncasecmp(url, "git://", 6) || !strncasecmp(url, "ssh://", 6);
}

/*
 * The sandbox every step built from a submission runs in: the agent's
 * workdir (spool, mirrors, other jobs, the base cache), its kernel cache and
 * its token file are hidden; the caller adds what the step may write and
 * read.
 */
static void job_policy(struct job *j, struct sandbox_policy *p)
{
	memset(p, 0, sizeof(*p));
	sandbox_add(p->hidden, j->ag->cfg.workdir);
	if (j->ag->cfg.kernel_cache)
		sandbox_add(p->hidden, j->ag->cfg.kernel_cache);
	if (j->ag->cfg.token_file)
		sandbox_add(p->hidden, j->ag->cfg.token_file);
	p->tmp_mb = j->ag->cfg.sandbox_tmp_mb;
}

static struct spawn_limits job_limits(struct job *j, int cpu_s)
{
	struct spawn_limits l = {.cpu_s = cpu_s,
	                         .mem_mb = j->ag->cfg.sandbox_mem_mb,
	                         .nproc = j->ag->cfg.sandbox_procs,
	                         .fsize_mb = j->ag->cfg.sandbox_fsize_mb};
	return l;
}

/*
 * The job's reason: what failed and the log's last lines.  A log that ran out
 * of disk says so first: that is the build machine's failure, not a patch
 * that does not build.
 */
static void fail_with_tail(struct job *j, const char *what, const char *log, int lines)
{
	char *tail = sandbox_tail(log, lines);
	if (strstr(tail, "No space left on device") || strstr(tail, "Disk quota exceeded"))
		snprintf(j->fail_reason, sizeof(j->fail_reason),
		         "%s: the agent's disk is full (%s):\n%s", INFRA, what, tail);
	else
		snprintf(j->fail_reason, sizeof(j->fail_reason), "%s:\n%s", what, tail);
	free(tail);
}

/* A cached bare mirror per tree URL, fetched before each job. */
static int prepare_mirror(struct job *j, const char *url)
{
	char log[4096], name[256];
	unsigned long h = 5381;
	for (const char *p = url; *p; p++)
		h = h * 33 + (unsigned char)*p;
	snprintf(name, sizeof(name), "%lx.git", h);
	snprintf(j->mirror, sizeof(j->mirror), "%s/%s", j->ag->mirrors_dir, name);
	snprintf(log, sizeof(log), "%s/git.log", j->dir);
	if (!url_ok(url, false)) {
		snprintf(j->fail_reason, sizeof(j->fail_reason),
		         "the tree's URL '%.200s' looks like an option, not a URL", url);
		return -1;
	}
	struct stat st;
	if (stat(j->mirror, &st)) {
		const char *argv[] = {"git", "clone", "--quiet", "--mirror",
		                      "--",  url,     j->mirror, NULL};
		if (run_git(j, log, argv)) {
			fail_with_tail(j, "cannot clone the tree", log, 10);
			return -1;
		}
	} else {
		const char *argv[] = {"git",     "-C",      j->mirror, "fetch",
		                      "--quiet", "--prune", "origin",  "+refs/heads/*:refs/heads/*",
		                      NULL};
		if (run_git(j, log, argv)) {
			fail_with_tail(j, "cannot fetch the tree", log, 10);
			return -1;
		}
	}
	return 0;
}

/* The commit rev names in the mirror, by git's own rules (--verify, --end-of-options). */
static int rev_parse(struct job *j, const char *rev, char *out, size_t outlen)
{
	char spec[1100];
	struct spawn_result r;
	if (looks_like_option(rev) || strlen(rev) > 1000)
		return -1;
	snprintf(spec, sizeof(spec), "%s^{commit}", rev);
	const char *argv[] = {"git",     "-C",       j->mirror,          "rev-parse",
	                      "--quiet", "--verify", "--end-of-options", spec,
	                      NULL};
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

/*
 * A worktree of the mirror at path, detached at rev (a commit name the agent
 * resolved or its own ref); its git folder is kept in gitdir, read from the
 * .git file git just wrote, before anything untrusted ran in the tree.
 */
static int add_worktree(struct job *j, const char *path, const char *rev, char *gitdir,
                        size_t gitdir_len)
{
	char log[4096], dotgit[1200];
	snprintf(log, sizeof(log), "%s/git.log", j->dir);
	const char *argv[] = {"git",      "-C", j->mirror, "worktree", "add", "--quiet",
	                      "--detach", "--", path,      rev,        NULL};
	if (run_git(j, log, argv)) {
		fail_with_tail(j, "cannot make a worktree", log, 10);
		return -1;
	}
	snprintf(dotgit, sizeof(dotgit), "%s/.git", path);
	char *text = agent_read_file(dotgit);
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

/*
 * Run a build from the submission in the sandbox: only tree is written,
 * reuse (when set) is read; output to log; r says how it ended.  -1, with
 * the reason set, when it could not start.
 */
static int sandboxed_build(struct job *j, const char *const argv[], const char *tree,
                           const char *reuse, const char *log, int cpu_factor, const char *what,
                           struct spawn_result *r)
{
	struct sandbox_policy sb;
	char err[512];
	job_policy(j, &sb);
	sandbox_add(sb.writable, tree);
	if (reuse)
		sandbox_add(sb.readable, reuse);
	sb.chdir = tree;
	struct spawn_cmd c = {.argv = argv,
	                      .out_path = log,
	                      .wall_s = j->ag->cfg.build_timeout_s,
	                      .lim = job_limits(j, j->ag->cfg.build_timeout_s * cpu_factor),
	                      .sandbox = &sb};
	int rc = spawn_run(&c, r, err, sizeof(err));
	spawn_result_release(r);
	if (rc)
		snprintf(j->fail_reason, sizeof(j->fail_reason), "%s: %s: %s", INFRA, what, err);
	return rc;
}

/* Build lockbench in tree, untrusted: no network, CPU and wall limits. */
static int build_tree(struct job *j, const char *tree, const char *what)
{
	char log[4096], jobs[16];
	snprintf(log, sizeof(log), "%s/build-%s.log", j->dir, what);
	snprintf(jobs, sizeof(jobs), "-j%d", j->ag->cfg.jobs);
	const char *argv[] = {"make", "-C", tree, jobs, "BUILD=build", "build/lockbench", NULL};
	struct spawn_result r;
	if (sandboxed_build(j, argv, tree, NULL, log, 2, "build", &r))
		return -1;
	if (r.timed_out) {
		snprintf(j->fail_reason, sizeof(j->fail_reason),
		         "build of %s did not finish within %d s", what,
		         j->ag->cfg.build_timeout_s);
		return -1;
	}
	if (r.status) {
		char msg[128];
		snprintf(msg, sizeof(msg), "build of %s failed (make exited %d)", what, r.status);
		fail_with_tail(j, msg, log, 25);
		return -1;
	}
	agent_log("info", j->id, "built %s in %.1f s", what, r.wall_s);
	return 0;
}

static int keep_binary(struct job *j, const char *tree, const char *variant)
{
	struct variant *v = &j->v[j->nv];
	char dir[1200], from[1200];
	snprintf(dir, sizeof(dir), "%s/bin/%s", j->dir, variant);
	if (fs_mkdirs(dir))
		return -1;
	snprintf(v->bin, sizeof(v->bin), "%s/lockbench", dir);
	snprintf(from, sizeof(from), "%s/build/lockbench", tree);
	if (fs_copy_file(from, v->bin)) {
		snprintf(j->fail_reason, sizeof(j->fail_reason), "cannot copy the %s build",
		         variant);
		return -1;
	}
	snprintf(v->name, sizeof(v->name), "%s", variant);
	j->nv++;
	return 0;
}

/*
 * Base builds are cached by commit: every job on the same base measures the
 * same binary, and the agent does not rebuild it.  Trusted: the base is the
 * tree's own commit, not a submitted patch.
 */
static void base_cache_path(struct job *j, char *out, size_t len)
{
	snprintf(out, len, "%s/base-cache/%s/lockbench", j->ag->cfg.workdir, j->base_rev);
}

static bool base_from_cache(struct job *j)
{
	char path[4096];
	struct variant *v = &j->v[j->nv];
	base_cache_path(j, path, sizeof(path));
	if (access(path, X_OK) || strlen(path) >= sizeof(v->bin))
		return false;
	memcpy(v->bin, path, strlen(path) + 1); /* fits: checked above */
	snprintf(v->name, sizeof(v->name), "base");
	j->nv++;
	return true;
}

static void base_to_cache(struct job *j)
{
	char path[4096], dir[4096];
	base_cache_path(j, path, sizeof(path));
	snprintf(dir, sizeof(dir), "%s", path);
	*strrchr(dir, '/') = 0;
	if (fs_mkdirs(dir) || fs_copy_file(j->v[0].bin, path))
		agent_log("warn", j->id, "cannot cache the base build in %s", path);
}

/*
 * Kernel trees: `lockbench kernel build` of a worktree into an output
 * folder, untrusted (the tree carries the patch): no network, limits.  The
 * base build is kept by commit in the kernel cache and is where the patched
 * build starts from (--reuse), so a mutex.c patch recompiles a few objects.
 */
static int kernel_build(struct job *j, const char *tree, const char *out, const char *reuse,
                        const char *what)
{
	char log[4096], jobs[16];
	snprintf(log, sizeof(log), "%s/build-%s.log", j->dir, what);
	snprintf(jobs, sizeof(jobs), "%d", j->ag->cfg.jobs);
	const char *argv[16];
	int k = 0;
	argv[k++] = j->ag->cfg.lockbench;
	argv[k++] = "kernel";
	argv[k++] = "build";
	argv[k++] = "--tree";
	argv[k++] = tree;
	argv[k++] = "--out";
	argv[k++] = out;
	argv[k++] = "--jobs";
	argv[k++] = jobs;
	if (reuse) {
		argv[k++] = "--reuse";
		argv[k++] = reuse;
	}
	argv[k] = NULL;
	/* the tree (its output folder inside) is written; the base build is read */
	struct spawn_result r;
	if (sandboxed_build(j, argv, tree, reuse, log, 4, "kernel build", &r))
		return -1;
	if (r.timed_out || r.status) {
		char msg[160];
		if (r.timed_out)
			snprintf(msg, sizeof(msg), "kernel build of %s did not finish within %d s",
			         what, j->ag->cfg.build_timeout_s);
		else
			snprintf(msg, sizeof(msg), "kernel build of %s failed", what);
		fail_with_tail(j, msg, log, 25);
		return -1;
	}
	agent_log("info", j->id, "built kernel %s in %.1f s", what, r.wall_s);
	return 0;
}

static int kernel_variant(struct job *j, const char *out, const char *name)
{
	struct variant *v = &j->v[j->nv];
	snprintf(v->bin, sizeof(v->bin), "%.1300s/arch/x86/boot/bzImage", out);
	if (access(v->bin, R_OK)) {
		snprintf(j->fail_reason, sizeof(j->fail_reason), "kernel build of %s left no %s",
		         name, v->bin);
		return -1;
	}
	snprintf(v->name, sizeof(v->name), "%s", name);
	j->nv++;
	return 0;
}

/* Split the server's mbox into one message per patch (file names). */
static int split_mbox(struct job *j, const char *mbox, char files[][4096], int max)
{
	int n = 0;
	const char *sep = "From locklab Mon Sep 17 00:00:00 2001\n";
	const char *p = strstr(mbox, sep);
	while (p && n < max) {
		const char *next = strstr(p + strlen(sep), sep);
		size_t len = next ? (size_t)(next - p) : strlen(p);
		snprintf(files[n], 4096, "%s/patch-%d.mbox", j->dir, n + 1);
		FILE *f = fopen(files[n], "w");
		if (!f || fwrite(p, 1, len, f) != len || fclose(f))
			return -1;
		n++;
		p = next;
	}
	return n;
}

static int git_am(struct job *j, const char *file, int k)
{
	char log[4096], gd[1400], wt[1200];
	snprintf(log, sizeof(log), "%s/am.log", j->dir);
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
	                      "--",
	                      file,
	                      NULL};
	if (run_git(j, log, argv)) {
		char msg[128];
		const char *abort_argv[] = {"git", "-C", j->series_tree, gd,
		                            wt,    "am", "--abort",      NULL};
		snprintf(msg, sizeof(msg), "patch %d of %d does not apply (git am -3)", k,
		         j->npatches);
		fail_with_tail(j, msg, log, 15);
		run_git(j, "/dev/null", abort_argv);
		return -1;
	}
	return 0;
}

/*
 * Names of the locks the real build lists (`lockbench list`).  The binary
 * was built from the submission: it runs in the sandbox like a round.
 */
static int known_locks(struct job *j, const char *bin, char names[][64], int max)
{
	char dir[1200];
	int n = 0;
	bool in_locks = false;
	snprintf(dir, sizeof(dir), "%s", bin);
	*strrchr(dir, '/') = 0;
	const char *argv[] = {bin, "list", NULL};
	struct sandbox_policy sb;
	job_policy(j, &sb);
	sandbox_add(sb.readable, dir);
	struct spawn_cmd c = {.argv = argv,
	                      .capture = true,
	                      .capture_max = 64 << 10,
	                      .wall_s = 60,
	                      .lim = job_limits(j, 60),
	                      .sandbox = &sb};
	struct spawn_result r;
	char err[512];
	if (spawn_run(&c, &r, err, sizeof(err)) || r.status) {
		agent_log("warn", j->id, "`lockbench list` of %s failed (%s): the whole suite runs",
		          bin, r.status ? "non-zero exit" : err);
		spawn_result_release(&r);
		return 0;
	}
	for (char *line = r.out, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		if (!strncmp(line, "locks:", 6)) {
			in_locks = true;
			continue;
		}
		if (line[0] != ' ') {
			in_locks = false;
			continue;
		}
		if (in_locks && n < max && sscanf(line, " %63s", names[n]) == 1)
			n++;
	}
	spawn_result_release(&r);
	return n;
}

/*
 * Narrow the suite to the locks the series touches: a change only to lock
 * implementation files (lockbench/locks/<file>.c other than the registry)
 * runs those files' locks and pthread; a change to anything else under
 * lockbench/ is shared code and runs the whole suite.
 */
static void choose_locks(struct job *j)
{
	char names[64][64], gd[1400];
	char chosen[1024] = "pthread";
	bool shared = false, any_lock = false, pthread_touched = false;
	int nnames = known_locks(j, j->v[j->nv - 1].bin, names, 64);
	struct spawn_result r;

	/* the series' commits against the base, read from its git folder (not the tree) */
	snprintf(gd, sizeof(gd), "--git-dir=%s", j->series_gitdir);
	const char *argv[] = {"git", "-C",        j->mirror, gd,   "diff", "--name-only",
	                      "-z",  j->base_rev, "HEAD",    "--", NULL};
	if (git_run(j, "/dev/null", argv, &r, 4 << 20)) {
		spawn_result_release(&r);
		return;
	}
	for (size_t off = 0; off < r.out_len; off += strlen(r.out + off) + 1) {
		const char *path = r.out + off;
		if (strncmp(path, "lockbench/", 10))
			continue; /* docs, server, ...: no effect on lockbench */
		size_t l = strlen(path);
		if (strncmp(path, "lockbench/locks/", 16) || l < 3 || strcmp(path + l - 2, ".c") ||
		    !strcmp(path, "lockbench/locks/registry.c")) {
			shared = true;
			continue;
		}
		char full[8192];
		snprintf(full, sizeof(full), "%s/%s", j->series_tree, path);
		FILE *f = fopen(full, "r");
		bool found = false;
		if (f) {
			char line[1024];
			while (fgets(line, sizeof(line), f)) {
				for (int i = 0; i < nnames; i++) {
					char quoted[4200];
					snprintf(quoted, sizeof(quoted), "\"%s\"", names[i]);
					if (!strstr(line, quoted))
						continue;
					if (!strcmp(names[i], "pthread")) {
						pthread_touched = true;
						continue;
					}
					found = true;
					char with[4200];
					snprintf(with, sizeof(with), ",%s,", names[i]);
					char hay[5300];
					snprintf(hay, sizeof(hay), ",%s,", chosen);
					if (!strstr(hay, with) &&
					    strlen(chosen) + strlen(names[i]) + 2 <
					        sizeof(chosen)) {
						strcat(chosen, ",");
						strcat(chosen, names[i]);
					}
				}
			}
			fclose(f);
		}
		if (!found)
			shared = true; /* a deleted or renamed lock file */
		any_lock |= found;
	}
	spawn_result_release(&r);
	if (!shared && any_lock)
		snprintf(j->locks, sizeof(j->locks), "%s", chosen);
	/* pthread, untouched, is measured beside the changed locks as a live A/A */
	if (!shared && any_lock && !pthread_touched)
		snprintf(j->controls, sizeof(j->controls), "pthread");
	agent_log("info", j->id, "measuring %s%s",
	          j->locks[0] ? j->locks : "the whole suite (shared code changed)",
	          j->controls[0] ? " (pthread as the untouched control)" : "");
}

static void *heartbeat_thread(void *arg)
{
	struct job *j = arg;
	struct api a;
	char path[128], err[512];
	int period = j->lease_s > 3 ? j->lease_s / 3 : 1;

	if (api_init(&a, j->ag->cfg.server, j->ag->cfg.token))
		return NULL;
	snprintf(path, sizeof(path), "/api/v1/jobs/%lld/heartbeat", j->id);
	while (!atomic_load(&j->done)) {
		for (int i = 0; i < period * 10 && !atomic_load(&j->done); i++) {
			struct timespec d = {0, 100 * 1000000};
			nanosleep(&d, NULL);
		}
		if (atomic_load(&j->done))
			break;
		json_t *reply = NULL;
		long st = api_post(&a, path, NULL, NULL, &reply, err, sizeof(err));
		json_decref(reply);
		if (st == 403 || st == 404 || st == 409) {
			agent_log("warn", j->id, "lease lost: %s", err);
			atomic_store(&j->lost, 1);
			spawn_request_stop();
			break;
		}
		if (st < 0 || st >= 500)
			agent_log("warn", j->id, "heartbeat failed: %s", err);
	}
	api_release(&a);
	return NULL;
}

static void update_progress(struct job *j, json_t *reply)
{
	json_int_t more = -1, next = -1;
	json_t *from = json_object_get(reply, "confirm_from");

	if (reply && !json_unpack(reply, "{s:I, s:I}", "more_rounds", &more, "next_round", &next)) {
		j->more_rounds = (int)more;
		j->next_round = (int)next;
	}
	if (json_is_integer(from) && json_integer_value(from) > 0 && !j->confirm_from) {
		j->confirm_from = (int)json_integer_value(from);
		agent_log("info", j->id,
		          "rounds 0-%d found a change: rounds %d and later must confirm it",
		          j->confirm_from - 1, j->confirm_from);
	}
}

/* Post one document; on failure spool it and retry until delivered. */
static int post_result(struct job *j, const char *variant, int round, const char *doc)
{
	char key[128], path[128], err[1024];
	snprintf(key, sizeof(key), "job%lld-%s-r%d", j->id, variant, round);
	snprintf(path, sizeof(path), "/api/v1/jobs/%lld/results", j->id);
	int delay = 1;
	bool spooled = false;
	for (;;) {
		json_t *reply = NULL;
		long st = api_post(&j->ag->api, path, doc, key, &reply, err, sizeof(err));
		if (st >= 200 && st < 300) {
			update_progress(j, reply);
			json_decref(reply);
			if (spooled) {
				char f[4096];
				snprintf(f, sizeof(f), "%s/%lld.%s.json", j->ag->spool_dir, j->id,
				         key);
				unlink(f);
				agent_log("info", j->id, "spooled result %s delivered", key);
			}
			return 0;
		}
		json_decref(reply);
		if (st >= 400 && st < 500 && st != 408 && st != 429) {
			snprintf(j->fail_reason, sizeof(j->fail_reason),
			         "the server refused the %s round %d result: %s", variant, round,
			         err);
			if (st == 403 || st == 404 || st == 409)
				atomic_store(&j->lost, 1);
			return -1;
		}
		if (!spooled) {
			agent_log("warn", j->id, "cannot post %s: %s", key, err);
			spool_put(j->ag, j->id, key, doc);
			spooled = true;
		}
		if (atomic_load(&j->ag->stop))
			return -1; /* stays in the spool for the next start */
		sleep((unsigned)delay);
		delay = delay < 30 ? delay * 2 : 30;
	}
}

struct stack_arg {
	char path[4096];
};

static void capture_stacks(pid_t pid, void *arg)
{
	struct stack_arg *s = arg;
	pid_t pids[256];
	int n = spawn_descendants(pid, pids, 256);
	FILE *f = fopen(s->path, "w");
	if (!f)
		return;
	/* every process under the run: lockbench and the benchmark child, one gdb each */
	for (int i = 0; i < n; i++) {
		char pidstr[16], cmdline[512];
		spawn_cmdline(pids[i], cmdline, sizeof(cmdline));
		snprintf(pidstr, sizeof(pidstr), "%d", (int)pids[i]);
		fprintf(f, "--- process %d: %s\n", (int)pids[i], cmdline);
		fflush(f);
		const char *argv[] = {
		    "gdb", "-nx", "-batch", "-p", pidstr, "-ex", "thread apply all bt", NULL};
		struct spawn_cmd c = {
		    .argv = argv, .capture = true, .capture_max = 256 << 10, .wall_s = 30};
		struct spawn_result r;
		char err[256];
		if (spawn_run(&c, &r, err, sizeof(err)) == 0 && r.out) {
			for (char *line = r.out, *next; *line; line = next) {
				next = strchr(line, '\n');
				next = next ? next + 1 : line + strlen(line);
				if (strncmp(line, "[New LWP", 8))
					fwrite(line, 1, (size_t)(next - line), f);
			}
		} else {
			fprintf(f, "(gdb: %s)\n", err);
		}
		spawn_result_release(&r);
	}
	fclose(f);
}

/* A document saying lockbench itself hung, with the stacks captured. */
static char *deadline_document(struct job *j, const char *variant, int round, const char *stacks)
{
	struct lb_result r;
	char msg[512];
	result_init(&r);
	result_fill_machine(&r);
	r.suite = strdup(j->suite);
	r.variant = strdup(variant);
	r.round = round;
	struct lb_run *run = result_add_run(&r, "lockbench", j->locks[0] ? j->locks : "all");
	snprintf(msg, sizeof(msg),
	         "lockbench did not finish within the agent's %d s deadline and was killed",
	         j->ag->cfg.run_timeout_s);
	run_set_lockup(run, "deadline", msg, stacks);
	json_t *doc = result_to_json(&r);
	char *text = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
	json_decref(doc);
	result_release(&r);
	return text;
}

/*
 * Keep the accelerator a kernel run settled on (its machine.model says
 * "QEMU KVM guest ..." or "QEMU TCG guest ...") for the agent's lifetime.
 */
static void note_accel(struct job *j, const char *doc)
{
	json_t *d = json_loads(doc, 0, NULL);
	const char *model =
	    json_string_value(json_object_get(json_object_get(d, "machine"), "model"));
	const char *now = NULL;
	if (model && !strncmp(model, "QEMU KVM guest", 14))
		now = "kvm";
	else if (model && !strncmp(model, "QEMU TCG guest", 14))
		now = "tcg";
	if (now && strcmp(now, j->ag->accel)) {
		agent_log("info", j->id,
		          "kernel runs use %s from now on (until the agent restarts)", now);
		snprintf(j->ag->accel, sizeof(j->ag->accel), "%s", now);
	}
	json_decref(d);
}

/* Run one variant for one round and post it. */
static int run_variant_once(struct job *j, const struct variant *v, int round, bool *retry)
{
	char out[4096], log[4096], rs[24], outdir[2048], bindir[1400];
	struct stack_arg sa;
	/* the one folder the run may write: its document goes there */
	snprintf(outdir, sizeof(outdir), "%s/out-%s-r%d", j->dir, v->name, round);
	fs_remove_tree(outdir);
	if (fs_mkdirs(outdir)) {
		snprintf(j->fail_reason, sizeof(j->fail_reason), "%s: cannot create %s: %s", INFRA,
		         outdir, strerror(errno));
		return -1;
	}
	snprintf(out, sizeof(out), "%s/result.json", outdir);
	snprintf(bindir, sizeof(bindir), "%s", v->bin);
	*strrchr(bindir, '/') = 0;
	snprintf(log, sizeof(log), "%s/run-%s-r%d.log", j->dir, v->name, round);
	snprintf(sa.path, sizeof(sa.path), "%s/stacks-%s-r%d.txt", j->dir, v->name, round);
	snprintf(rs, sizeof(rs), "%d", round);
	const char *argv[24];
	int k = 0;
	if (j->kernel) {
		/* boot the variant's kernel; any suite but smoke is the quick one */
		argv[k++] = j->ag->cfg.lockbench;
		argv[k++] = "kernel";
		argv[k++] = "run";
		argv[k++] = "--kernel";
		argv[k++] = v->bin;
		argv[k++] = "--suite";
		argv[k++] = strcmp(j->suite, "smoke") ? "quick" : "smoke";
		argv[k++] = "--accel";
		argv[k++] = j->ag->accel;
	} else {
		argv[k++] = v->bin;
		argv[k++] = "run";
		argv[k++] = "--suite";
		argv[k++] = j->suite;
	}
	if (j->locks[0]) {
		argv[k++] = "--locks";
		argv[k++] = j->locks;
	}
	argv[k++] = "--variant";
	argv[k++] = v->name;
	argv[k++] = "--round";
	argv[k++] = rs;
	argv[k++] = "--json";
	argv[k++] = out;
	argv[k] = NULL;
	/*
	 * Native: the binary was built from the submission.  Kernel: the trusted
	 * lockbench boots the submission's kernel in qemu, which is the guest's
	 * sandbox; bubblewrap still hides the agent's folders, and qemu's large
	 * mappings get no address-space limit.
	 */
	struct sandbox_policy sb;
	job_policy(j, &sb);
	sandbox_add(sb.writable, outdir);
	sandbox_add(sb.readable, bindir);
	sb.chdir = outdir;
	sb.kvm = j->kernel;
	struct spawn_cmd c = {.argv = argv,
	                      .out_path = log,
	                      .wall_s = j->ag->cfg.run_timeout_s,
	                      .lim = job_limits(j, j->ag->cfg.run_timeout_s * 4),
	                      .sandbox = &sb,
	                      .on_deadline = capture_stacks,
	                      .arg = &sa};
	if (j->kernel)
		c.lim.mem_mb = 0;
	struct spawn_result r;
	char err[512];
	agent_log("info", j->id, "round %d: running %s", round, v->name);
	*retry = false;
	int src = spawn_run(&c, &r, err, sizeof(err));
	spawn_result_release(&r);
	if (src) {
		snprintf(j->fail_reason, sizeof(j->fail_reason),
		         "%s: cannot start lockbench in the sandbox: %s", INFRA, err);
		return -1;
	}
	if (atomic_load(&j->lost) || atomic_load(&j->ag->stop))
		return -1;
	char *doc = NULL;
	if (r.timed_out) {
		char *stacks = agent_read_file(sa.path);
		doc = deadline_document(j, v->name, round, stacks ? stacks : "");
		free(stacks);
		agent_log("warn", j->id, "round %d: %s hung; posting a lockup", round, v->name);
	} else if (r.status == 128 + SIGXCPU || r.status == 128 + SIGXFSZ) {
		/* the submission's code went past a limit of the sandbox: its own doing */
		char msg[256];
		snprintf(msg, sizeof(msg), "lockbench (%s, round %d) went past the sandbox's %s",
		         v->name, round,
		         r.status == 128 + SIGXCPU ? "CPU time limit" : "file size limit");
		fail_with_tail(j, msg, log, 15);
		return -1;
	} else if (r.status >= 128) {
		/* not the watchdog's kill: the OOM killer, an operator, a limit */
		char msg[256];
		snprintf(msg, sizeof(msg),
		         "%s: lockbench (%s, round %d) was killed by signal %d (%s)%s", INFRA,
		         v->name, round, r.status - 128, strsignal(r.status - 128),
		         r.status - 128 == SIGKILL ? "; the OOM killer? see dmesg" : "");
		fail_with_tail(j, msg, log, 15);
		*retry = true;
		return -1;
	} else if (j->kernel && r.status == 1) {
		/* a boot that qemu could not run (it says why), or a guest with no result */
		fail_with_tail(j,
		               "lockbench kernel run failed: qemu or the guest gave no result "
		               "(infrastructure, not a finding about the patch)",
		               log, 15);
		*retry = true;
		return -1;
	} else if (r.status == 0 || r.status == 3 || r.status == 1) {
		doc = agent_read_file(
		    out); /* 3: lockups inside, still a result; 1: some points failed */
		if (doc && j->kernel)
			note_accel(j, doc);
		if (doc && j->kernel) {
			/* `kernel run` names its suite kernel-S; the round belongs to the job's */
			json_t *d = json_loads(doc, 0, NULL);
			free(doc);
			doc = NULL;
			if (d && !json_object_set_new(d, "suite", json_string(j->suite)))
				doc = json_dumps(d, JSON_COMPACT);
			json_decref(d);
		} else if (doc) {
			/*
			 * Which lock is a control is the agent's word, not the measured
			 * (untrusted) binary's: set or remove "controls".
			 */
			json_t *d = json_loads(doc, 0, NULL);
			char *t = NULL;

			if (d && j->controls[0])
				json_object_set_new(d, "controls", json_pack("[s]", j->controls));
			else if (d)
				json_object_del(d, "controls");
			if (d)
				t = json_dumps(d, JSON_COMPACT);
			if (t) {
				free(doc);
				doc = t;
			} /* else posted as it is: the server says what is wrong with it */
			json_decref(d);
		}
	}
	if (!doc) {
		fail_with_tail(j, "lockbench failed", log, 15);
		return -1;
	}
	agent_log("info", j->id, "round %d: %s finished in %.1f s (exit %d)", round, v->name,
	          r.wall_s, r.status);
	int rc = post_result(j, v->name, round, doc);
	free(doc);
	return rc;
}

/*
 * Run one variant for one round and post it.  A run that failed for the
 * machine's reasons (killed, qemu failing) is tried once more before the
 * job fails with the reason; nothing of it is posted as a finding.
 */
static int run_variant(struct job *j, const struct variant *v, int round)
{
	bool retry = false;
	int rc = run_variant_once(j, v, round, &retry);
	if (rc && retry && !atomic_load(&j->lost) && !atomic_load(&j->ag->stop)) {
		agent_log("warn", j->id, "round %d: %s failed (%s); trying once more", round,
		          v->name, j->fail_reason);
		rc = run_variant_once(j, v, round, &retry);
	}
	return rc;
}

/*
 * Every tracked file of the series tree dated 2000-01-01, then the files
 * the series changed dated now; 0 or -1.
 */
static int date_tree_back(struct job *j)
{
	const struct timespec y2k = {946684800, 0};
	char gd[1400], wt[1200];
	struct spawn_result files = {0}, changed = {0};
	worktree_args(j->series_gitdir, j->series_tree, gd, sizeof(gd), wt, sizeof(wt));
	const char *ls[] = {"git", "-C", j->series_tree, gd, wt, "ls-files", "-z", NULL};
	const char *diff[] = {"git", "-C",          j->series_tree, gd,     wt,   "diff",
	                      "-z",  "--name-only", j->base_rev,    "HEAD", "--", NULL};
	int rc = git_run(j, "/dev/null", ls, &files, 256 << 20) ||
	                 git_run(j, "/dev/null", diff, &changed, 64 << 20) || files.out_truncated
	             ? -1
	             : 0;
	if (!rc && (fs_date_paths(j->series_tree, files.out, files.out_len, &y2k) ||
	            fs_date_paths(j->series_tree, changed.out, changed.out_len, NULL)))
		rc = -1;
	spawn_result_release(&files);
	spawn_result_release(&changed);
	return rc;
}

/*
 * Kernel trees: base (cached by commit) and patched kernels.  Each output
 * folder is a direct child of its tree, so kbuild's command lines use the
 * relative srctree and the patched build, started from a copy of the base
 * objects (--reuse), recompiles only what the series changed.
 */
static int prepare_kernel(struct job *j, json_t *git, const char *mbox, char files[][4096])
{
	char base_out[2048], built[1300], patched_out[1300], marker[2100], tmp[2100];
	snprintf(base_out, sizeof(base_out), "%s/%s", j->ag->cfg.kernel_cache, j->base_rev);
	snprintf(marker, sizeof(marker), "%s/arch/x86/boot/bzImage", base_out);
	if (!access(marker, R_OK)) {
		agent_log("info", j->id, "kernel base %.12s built before: reusing it", j->base_rev);
	} else {
		snprintf(built, sizeof(built), "%s/locklab-out", j->base_tree);
		if (fs_mkdirs(j->ag->cfg.kernel_cache) ||
		    add_worktree(j, j->base_tree, j->base_rev, j->base_gitdir,
		                 sizeof(j->base_gitdir)) ||
		    kernel_build(j, j->base_tree, built, NULL, "base"))
			return -1;
		/* the base is the tree's own commit (trusted): keep it by commit */
		snprintf(tmp, sizeof(tmp), "%s.tmp", base_out);
		if (fs_remove_tree(tmp) || rename(built, tmp) || rename(tmp, base_out)) {
			snprintf(j->fail_reason, sizeof(j->fail_reason),
			         "cannot keep the base kernel build in %s", base_out);
			return -1;
		}
	}
	if (kernel_variant(j, base_out, "base"))
		return -1;
	if (json_is_object(git)) {
		char ref[128];
		snprintf(ref, sizeof(ref), "refs/locklab/job%lld", j->id);
		if (add_worktree(j, j->series_tree, ref, j->series_gitdir,
		                 sizeof(j->series_gitdir)))
			return -1;
		j->npatches = 1;
	} else {
		j->npatches = mbox ? split_mbox(j, mbox, files, 64) : 0;
		if (j->npatches <= 0) {
			snprintf(j->fail_reason, sizeof(j->fail_reason), "job has no patches");
			return -1;
		}
		if (add_worktree(j, j->series_tree, j->base_rev, j->series_gitdir,
		                 sizeof(j->series_gitdir)))
			return -1;
		for (int k = 1; k <= j->npatches; k++)
			if (git_am(j, files[k - 1], k))
				return -1;
	}
	/*
	 * A fresh checkout stamps every file with now, newer than the base's
	 * objects, and make would rebuild the whole kernel: date the tree back,
	 * then only the files the series changed are newer than the objects.
	 */
	if (date_tree_back(j))
		agent_log("warn", j->id,
		          "cannot date the patched tree back: a full rebuild follows");
	snprintf(patched_out, sizeof(patched_out), "%s/locklab-out", j->series_tree);
	if (kernel_build(j, j->series_tree, patched_out, base_out, "patched") ||
	    kernel_variant(j, patched_out, "patched"))
		return -1;
	j->locks[0] = 0;
	j->controls[0] = 0;
	return 0;
}

static int prepare(struct job *j, json_t *desc)
{
	json_t *tree = json_object_get(desc, "tree"), *git = json_object_get(desc, "git");
	const char *url = j->ag->cfg.native_tree, *branch = "HEAD", *mbox = NULL;
	const char *kind = "native";
	char files[64][4096], log[4096];

	if (json_is_object(tree)) {
		json_unpack(tree, "{s?s, s?s, s?s}", "url", &url, "branch", &branch, "kind", &kind);
		if (strcmp(kind, "native") && strcmp(kind, "kernel")) {
			snprintf(j->fail_reason, sizeof(j->fail_reason),
			         "tree kind '%s' is not supported by this agent", kind);
			return -1;
		}
		j->kernel = !strcmp(kind, "kernel");
		if (j->kernel && access(j->ag->cfg.lockbench, X_OK)) {
			snprintf(j->fail_reason, sizeof(j->fail_reason),
			         "kernel job, but no lockbench at %s (--lockbench)",
			         j->ag->cfg.lockbench);
			return -1;
		}
	}
	json_unpack(desc, "{s?s}", "mbox", &mbox);
	if (prepare_mirror(j, url))
		return -1;
	snprintf(log, sizeof(log), "%s/git.log", j->dir);
	const char *base = branch;
	if (json_is_object(git)) {
		const char *gurl = NULL, *ref = NULL, *gbase = NULL;
		json_unpack(git, "{s?s, s?s, s?s}", "url", &gurl, "ref", &ref, "base", &gbase);
		if (!gurl || !ref) {
			snprintf(j->fail_reason, sizeof(j->fail_reason),
			         "git submission without url/ref");
			return -1;
		}
		if (!url_ok(gurl, true)) {
			snprintf(j->fail_reason, sizeof(j->fail_reason),
			         "refused: git url '%.300s' is not an http, https, git or ssh URL",
			         gurl);
			return -1;
		}
		if (!ref_ok(j, ref)) {
			snprintf(j->fail_reason, sizeof(j->fail_reason),
			         "refused: git ref '%.300s' is not a ref name by git's rules "
			         "(git check-ref-format) nor a full commit name",
			         ref);
			return -1;
		}
		char spec[1024];
		snprintf(spec, sizeof(spec), "+%s:refs/locklab/job%lld", ref, j->id);
		/* a submitted URL only over the network protocols, never ext:: or file:// */
		const char *argv[] = {"git",
		                      "-C",
		                      j->mirror,
		                      "-c",
		                      "protocol.allow=never",
		                      "-c",
		                      "protocol.https.allow=always",
		                      "-c",
		                      "protocol.http.allow=always",
		                      "-c",
		                      "protocol.git.allow=always",
		                      "-c",
		                      "protocol.ssh.allow=always",
		                      "fetch",
		                      "--quiet",
		                      "--",
		                      gurl,
		                      spec,
		                      NULL};
		if (run_git(j, log, argv)) {
			fail_with_tail(j, "cannot fetch the submitted ref", log, 10);
			return -1;
		}
		if (gbase && *gbase)
			base = gbase;
	}
	if (looks_like_option(base)) {
		snprintf(j->fail_reason, sizeof(j->fail_reason),
		         "refused: base '%.300s' looks like an option, not a revision", base);
		return -1;
	}
	if (rev_parse(j, base, j->base_rev, sizeof(j->base_rev))) {
		snprintf(j->fail_reason, sizeof(j->fail_reason),
		         "base '%.300s' is not a commit of %s (git rev-parse --verify)", base, url);
		return -1;
	}
	snprintf(j->base_tree, sizeof(j->base_tree), "%s/base", j->dir);
	snprintf(j->series_tree, sizeof(j->series_tree), "%s/series", j->dir);
	if (j->kernel)
		return prepare_kernel(j, git, mbox, files);
	if (base_from_cache(j))
		agent_log("info", j->id, "base %.12s built before: reusing it", j->base_rev);
	else if (add_worktree(j, j->base_tree, j->base_rev, j->base_gitdir,
	                      sizeof(j->base_gitdir)) ||
	         build_tree(j, j->base_tree, "base") || keep_binary(j, j->base_tree, "base"))
		return -1;
	else
		base_to_cache(j);

	if (json_is_object(git)) {
		char ref[128];
		snprintf(ref, sizeof(ref), "refs/locklab/job%lld", j->id);
		j->npatches = 1;
		if (add_worktree(j, j->series_tree, ref, j->series_gitdir,
		                 sizeof(j->series_gitdir)) ||
		    build_tree(j, j->series_tree, "patched") ||
		    keep_binary(j, j->series_tree, "patched"))
			return -1;
	} else {
		if (!mbox) {
			snprintf(j->fail_reason, sizeof(j->fail_reason), "job has no patches");
			return -1;
		}
		j->npatches = split_mbox(j, mbox, files, 64);
		if (j->npatches <= 0) {
			snprintf(j->fail_reason, sizeof(j->fail_reason), "job has no patches");
			return -1;
		}
		if (add_worktree(j, j->series_tree, j->base_rev, j->series_gitdir,
		                 sizeof(j->series_gitdir)))
			return -1;
		/* every patch applied and (for short series) built: patch-1 ... patched */
		bool prefixes = j->npatches > 1 && j->npatches <= j->ag->cfg.max_prefixes &&
		                j->npatches < MAX_VARIANTS - 1;
		for (int k = 1; k <= j->npatches; k++) {
			if (git_am(j, files[k - 1], k))
				return -1;
			if (k < j->npatches && !prefixes)
				continue;
			char name[24];
			if (k == j->npatches)
				snprintf(name, sizeof(name), "patched");
			else
				snprintf(name, sizeof(name), "patch-%d", k);
			if (build_tree(j, j->series_tree, name) ||
			    keep_binary(j, j->series_tree, name))
				return -1;
		}
	}
	choose_locks(j);
	return 0;
}

static void post_fail(struct job *j)
{
	char path[128], err[512];
	json_t *body = json_pack("{s:s}", "reason", j->fail_reason);
	char *text = json_dumps(body, JSON_COMPACT);
	json_t *reply = NULL;
	snprintf(path, sizeof(path), "/api/v1/jobs/%lld/fail", j->id);
	long st = api_post(&j->ag->api, path, text, NULL, &reply, err, sizeof(err));
	if (st < 200 || st >= 300)
		agent_log("error", j->id, "cannot report the failure: %s", err);
	json_decref(reply);
	free(text);
	json_decref(body);
}

/* Give the job back to the queue (SIGTERM): another agent takes it over. */
static void post_release(struct job *j)
{
	char path[128], err[512];
	json_t *reply = NULL;
	snprintf(path, sizeof(path), "/api/v1/jobs/%lld/release", j->id);
	long st = api_post(&j->ag->api, path, NULL, NULL, &reply, err, sizeof(err));
	json_decref(reply);
	if (st >= 200 && st < 300)
		agent_log("info", j->id, "job handed back to the queue");
	else
		agent_log("warn", j->id, "cannot hand the job back (%s); its lease will expire",
		          err);
}

/*
 * The job's worktrees go (removed in C: submitted code may have left
 * symbolic links in them), then git forgets them; the logs stay.
 */
static void remove_worktrees(struct job *j)
{
	if (!j->mirror[0])
		return;
	if (fs_remove_tree(j->base_tree) || fs_remove_tree(j->series_tree))
		agent_log("warn", j->id, "cannot remove the job's worktrees: %s", strerror(errno));
	const char *argv[] = {"git", "-C", j->mirror, "worktree", "prune", NULL};
	run_git(j, "/dev/null", argv); /* leftovers are pruned at the next job */
}

static int run_job(struct agent *ag, json_t *desc)
{
	struct job *j = calloc(1, sizeof(*j));
	json_int_t id = 0, lease = 60, more = 0, next = 0;
	int rc = 1;

	if (!j)
		return -1;
	j->ag = ag;
	if (json_unpack(desc, "{s:I, s:s, s?I, s?I, s?I}", "id", &id, "suite", &j->suite,
	                "lease_seconds", &lease, "more_rounds", &more, "next_round", &next)) {
		agent_log("error", 0, "the server sent a job without id or suite");
		free(j);
		return -1;
	}
	j->id = id;
	j->lease_s = (int)lease;
	j->more_rounds = (int)more;
	j->next_round = (int)next;
	snprintf(j->dir, sizeof(j->dir), "%s/%lld", ag->jobs_dir, j->id);
	if (fs_mkdirs(j->dir)) {
		snprintf(j->fail_reason, sizeof(j->fail_reason), "cannot create %s", j->dir);
		post_fail(j);
		free(j);
		return 1;
	}
	if (!atomic_load(&ag->stop))
		spawn_clear_stop(); /* a lease lost in the last job does not stop this one */
	agent_log("info", j->id, "claimed: suite %s, %d rounds to go from round %d", j->suite,
	          j->more_rounds, j->next_round);
	if (pthread_create(&j->hb, NULL, heartbeat_thread, j) == 0)
		j->hb_started = true;

	if (prepare(j, desc)) {
		if (!atomic_load(&j->lost)) {
			agent_log("warn", j->id, "job failed: %s", j->fail_reason);
			post_fail(j);
		}
		goto out;
	}
	while (j->more_rounds > 0 && !atomic_load(&j->lost) && !atomic_load(&ag->stop)) {
		int round = j->next_round;
		/* ABBA: base first on even rounds, last on odd ones, so drift
		 * over time hits both sides alike */
		for (int i = 0; i < j->nv; i++) {
			int idx = round % 2 == 0 ? i : j->nv - 1 - i;
			if (run_variant(j, &j->v[idx], round)) {
				if (!atomic_load(&j->lost) && !atomic_load(&ag->stop)) {
					agent_log("warn", j->id, "job failed: %s", j->fail_reason);
					post_fail(j);
				}
				goto out;
			}
		}
		if (j->next_round == round && j->more_rounds > 0) {
			/* the server still misses this round: it refused nothing, so this
			 * is a protocol mismatch; stop rather than loop */
			snprintf(j->fail_reason, sizeof(j->fail_reason),
			         "server did not count round %d", round);
			post_fail(j);
			goto out;
		}
	}
	if (atomic_load(&ag->stop) && j->more_rounds > 0)
		post_release(j);
	else if (!atomic_load(&j->lost))
		agent_log("info", j->id, "job done");
out:
	atomic_store(&j->done, 1);
	if (j->hb_started)
		pthread_join(j->hb, NULL);
	remove_worktrees(j);
	free(j);
	return rc;
}

int agent_step(struct agent *ag)
{
	char err[1024];
	json_t *reply = NULL;

	if (spool_flush(ag) > 0)
		return -1; /* the server is not taking results: do not start more work */
	long st = api_post(&ag->api, "/api/v1/jobs/claim", NULL, NULL, &reply, err, sizeof(err));
	if (st < 0 || st >= 500) {
		agent_log("warn", 0, "cannot claim: %s", err);
		json_decref(reply);
		return -1;
	}
	if (st != 200) {
		agent_log("error", 0, "claim refused: %s", err);
		json_decref(reply);
		return -2;
	}
	json_t *job = json_object_get(reply, "job");
	if (!json_is_object(job)) {
		json_decref(reply);
		return 0;
	}
	int rc = run_job(ag, job);
	json_decref(reply);
	return rc;
}
