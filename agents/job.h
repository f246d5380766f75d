/*
 * job.h - one job inside the agent, from claim to the last posted round,
 * and the steps it goes through, one file each: workspace.c (mirrors,
 * worktrees, git am), build.c (sandboxed builds, which locks to measure),
 * run.c (rounds), post.c (results, spool, failure); agent.c strings them
 * together.  Private to agents/.
 *
 * Every step returns 0, or -1 with j->fail_reason set to what a person
 * should read (INFRA first when the machine, not the patch, is to blame).
 */
#ifndef LOCKLAB_AGENT_JOB_H
#define LOCKLAB_AGENT_JOB_H

#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "elfimage.h"
#include "sandbox.h"
#include "spawn.h"

/* agent.h: the steps that read the agent include it (agent.c includes this file) */
struct agent;
struct agent_cfg;

#define MAX_VARIANTS 8
/* how a failure that is the machine's, not the patch's, starts its reason */
#define INFRA "infrastructure failure, not a finding about the patch"

/* The file an image was hashed from: a file with another identity is hashed again. */
struct variant_file {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime, ctime; /* ctime: no one can set it back after a write */
};

struct variant {
	char name[24];   /* base, patch-K, patched */
	char label[160]; /* a commit of a git range: "abc123456789 subject"; else "" */
	char bin[1400];  /* native: its lockbench; kernel: its bzImage */
	/* native: bin's image (elfimage.h), hashed once when it was kept; "" if it could not be */
	char image[ELFIMAGE_LEN];
	struct variant_file hashed; /* what image was hashed from */
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
	/*
	 * native: the base's build folder (objects and make's .d files) that a
	 * patched build may start from, "" for none; the commit the series
	 * tree's build folder was last built at, "" before its first build
	 */
	char base_objs[1300];
	char built_rev[128];
	char locks[1024]; /* --locks value, "" for the whole suite */
	/* the lock run only as an untouched control ("controls" of each document), "" for none */
	char controls[64];
	struct variant v[MAX_VARIANTS];
	int nv;
	int npatches;
	int ncommits; /* a git submission: commits in its range (0: not a range of the base) */
	bool kernel;  /* tree kind kernel: variants are bzImages */
	char trusted_dir[1100]; /* kernel: the checkout of the trusted lockbench */
	/* kernel: --workloads and --types of its boots, from what the series touches */
	char kworkloads[256];
	char ktypes[256];
	/*
	 * kernel: the debug pass's kernels (base-debug, patched-debug; nkdebug 0
	 * when it is off) and the guest workloads of its boots
	 */
	struct variant kdebug[2];
	int nkdebug;
	char kdebug_workloads[256];
	/* lease */
	int lease_s;
	atomic_int lost; /* heartbeat said the job is no longer ours */
	atomic_int done; /* stop the heartbeat thread */
	/*
	 * Held across a result's post and the reading of its reply: a heartbeat
	 * refused because that post ended the job takes it before calling the
	 * lease lost, and then sees done instead.
	 */
	pthread_mutex_t post_lock;
	/*
	 * What the job is doing, for the heartbeat to tell the server
	 * (job_activity): under activity_lock; activity_new wakes the heartbeat.
	 */
	pthread_mutex_t activity_lock;
	char activity[160];
	char activity_log[1400]; /* a kernel build's make log: its compiled objects count */
	struct timespec activity_since;
	atomic_int activity_new;
	pthread_t hb;
	bool hb_started;
	/* progress as the server last said it */
	int more_rounds;
	int next_round;
	int claim; /* the server's count of this job's claims: this lease, in idempotency keys */
	int confirm_from; /* 0, or the round from which a change found must be confirmed */
	char fail_reason[8192];
	bool duet_off;   /* a duet or ABBA failed (old lockbench?): one side at a time */
	bool base_clean; /* the base's lockbench ran to its end in some round of this job */
};

/*
 * agent.c: say what the job is doing now ("building patched", "round 3:
 * running base"), for the dashboard: the next heartbeat carries it, with
 * the time it has taken and, when log is set (a kernel build's make log),
 * the objects compiled so far.
 */
void job_activity(struct job *j, const char *log, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* workspace.c: git, with every submitted value checked first */
int git_run(struct job *j, const char *log, const char *const argv[], struct spawn_result *out,
            size_t max);
/* The same with extra "NAME=value" entries in git's environment (env: NULL-terminated). */
int git_run_env(struct job *j, const char *log, const char *const argv[], const char *const *env,
                struct spawn_result *out, size_t max);
int run_git(struct job *j, const char *log, const char *const argv[]);
bool looks_like_option(const char *s);
bool ref_ok(struct job *j, const char *ref);
bool url_ok(const char *url);
void fail_with_tail(struct job *j, const char *what, const char *log, int lines);
int prepare_mirror(struct job *j, const char *url);
int rev_parse(struct job *j, const char *rev, char *out, size_t outlen);
/* git merge-base a b in the mirror into out (a full commit name); 0 or -1 */
int merge_base(struct job *j, const char *a, const char *b, char *out, size_t outlen);
int add_worktree(struct job *j, const char *path, const char *rev, char *gitdir, size_t gitdir_len);
/* the series' messages as the list sent them, one file each (patch-K.eml) */
int write_mails(struct job *j, json_t *mails);
/* the mails written (npatches set) and the series tree at the base; 0, or -1 with the reason */
int series_from_mails(struct job *j, json_t *mails);
int git_am(struct job *j, int k);
/*
 * range_commits: the commits of base..tip oldest first along first parents,
 * up to max into out; how many, or -1 when the range does not start at base.
 * commit_label: "abc123456789 subject" of a commit ("" when unknown).
 * checkout_commit: the series tree at a commit of the mirror.
 */
int range_commits(struct job *j, const char *base, const char *tip, char (*out)[48], int max);
void commit_label(struct job *j, const char *commit, char *out, size_t outlen);
int checkout_commit(struct job *j, const char *commit);
/*
 * series_changes: the paths that differ between commit from and the series
 * tree's HEAD (both paths of a rename; only those added when added),
 * NUL-separated (git diff -z --name-only) in out, up to max bytes; 0, or
 * -1 (out released) when git fails or the list is longer.
 * series_head: the commit the series tree is at, into out.
 * date_tree_back: every tracked file of the series tree dated 2000-01-01
 * (DATE_BACK), those changed since commit from dated now; 0 or -1.
 * date_tree_paths: the same with the changed paths given (NUL-separated).
 * tree_changes, tree_date_paths: the same for any worktree of the mirror
 * (its git folder gitdir, checked out at tree).
 */
int series_changes(struct job *j, const char *from, bool added, struct spawn_result *out,
                   size_t max);
int tree_changes(struct job *j, const char *gitdir, const char *from, bool added,
                 struct spawn_result *out, size_t max);
int tree_date_paths(struct job *j, const char *gitdir, const char *tree, const char *changed,
                    size_t len);
int series_head(struct job *j, char *out, size_t outlen);
#define DATE_BACK 946684800
int date_tree_back(struct job *j, const char *from);
/* date_changes_now: only the files changed since commit from dated now; 0 or -1. */
int date_changes_now(struct job *j, const char *from);
int date_tree_paths(struct job *j, const char *changed, size_t len);
void remove_worktrees(struct job *j);

/* build.c: the sandboxed builds; prepare.c: the job readied (job_prepare) */
void job_policy(struct job *j, struct sandbox_policy *p);
struct spawn_limits job_limits(struct job *j, int cpu_s);
int job_prepare(struct job *j, json_t *desc);
/*
 * sandboxed_build: run argv from the submission in the sandbox, only tree
 * written and reuse (when set) read, output to log, r how it ended; -1 with
 * the reason set when it could not start.  build_ended: 0 when r exited 0,
 * else -1 with the reason (what happened, the log's last lines).
 * job_gone: whether the job was lost or the agent told to stop (a wait's
 * test, arg the job).
 */
int sandboxed_build(struct job *j, const char *const argv[], const char *tree, const char *reuse,
                    const char *log, int cpu_factor, const char *what, struct spawn_result *r);
int build_ended(struct job *j, const struct spawn_result *r, bool kernel, const char *what,
                const char *log);
bool job_gone(void *arg);
/*
 * What prepare.c builds with: build_series builds the series tree as it
 * stands for variant what; keep_binary keeps tree's lockbench as the next
 * variant; prepare_base readies the base lockbench (from the cache, else
 * built and cached); choose_locks narrows the suite to the locks the
 * series touches.  0, or -1 with the reason set.
 */
int build_series(struct job *j, const char *what);
int keep_binary(struct job *j, const char *tree, const char *variant);
int prepare_base(struct job *j);
void choose_locks(struct job *j);

/* kernel_build.c: a kernel tree's job prepared (base kernels cached, patched built on them) */
int prepare_kernel(struct job *j, json_t *git, json_t *mails);
/*
 * variant_hash: hash v->bin's image into v->image once, when the binary is
 * kept (logged "image of NAME: sha256:..."), and note the file it came from;
 * v->image is "" when it cannot be hashed (logged).  variant_image: the image
 * of v->bin as it is now into out: v->image while the file is the one that
 * was hashed (same device, inode, size, mtime and ctime), else hashed again
 * (logged).  0, or -1 with a reason in err.
 */
void variant_hash(struct job *j, struct variant *v);
int variant_image(struct job *j, const struct variant *v, char out[ELFIMAGE_LEN], char *err,
                  size_t errlen);

/*
 * run_round runs every variant of one round (ABBA order by round); with two
 * variants on a native tree the single-thread points run first as a pair,
 * as job_pairing (run_paired.c) decides: lockstep by default (both pinned to one
 * CPU, taking turns of 0.5 ms), a duet with cfg.duet (both at once, each
 * pinned to its own half of the CPUs), or ABBA with cfg.abba (a sample a
 * side); then the rest of the suite one variant after the other.  Returns
 * 0, or -1 with fail_reason.
 */
int run_round(struct job *j, int round);
/*
 * job_users_suite: whether the job runs the users suite (or its old name,
 * seeds), AIM7's bands of users, a kernel boot per band, far longer than
 * any other suite's round; job_run_timeout: the wall-clock limit of one of
 * its runs (--users-run-timeout for that suite, else --run-timeout).
 */
bool job_users_suite(const struct job *j);
int job_run_timeout(const struct job *j);
/*
 * Kernel jobs: the debug pass before the rounds, base-debug then
 * patched-debug booted once each (lockdep, might_sleep, hung tasks) and
 * posted as round 0 of those variants; the server ends the job when the
 * patched kernel printed a splat the base did not, or locked up (then
 * more_rounds is 0).  Returns 0, or -1 with fail_reason.
 */
int run_kernel_debug(struct job *j);
/*
 * One round of the two variants v as run_round runs a job's (paired, in
 * the sandbox, with one retry for the machine's failures), their documents
 * handed back in docs[i] (new strings) instead of posted: the noise
 * measurement's A/A rounds (noise.c).
 */
int run_pair(struct job *j, const struct variant v[2], int round, char *docs[2]);

/*
 * noise.c: when --noise-interval says the machine's noise is due for the
 * job's suite (never measured in this workdir, or longer ago than the
 * interval), run the job's base lockbench against itself for
 * --noise-rounds paired rounds, compare them with compare_results and post
 * each point's spread to POST /api/v1/noise.  Native jobs only.  A failure
 * is logged and costs the job nothing; returns -1 when the job was lost or
 * the agent is stopping (the caller sees j->lost and the stop flag).
 */
int noise_measure(struct job *j);

/* post.c: talking to the server about the job */
int post_result(struct job *j, const char *variant, int round, const char *doc);
/* Take the agent's token, credentials, keys and paths out of s (cap bytes). */
void post_redact(const struct agent_cfg *cfg, char *s, size_t cap);
void post_fail(struct job *j);
void post_release(struct job *j);

#endif
