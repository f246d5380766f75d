/*
 * build.c - building what the job measures, in the sandbox: lockbench per
 * variant (base cached by commit, patched builds on its objects) and which
 * locks to measure.  prepare.c readies the job and calls these.
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent.h"
#include "elfimage.h"
#include "fsutil.h"
#include "job.h"
#include "kernel_cache.h"
#include "log.h"
#include "sandbox.h"
#include "spawn.h"
#include "strutil.h"

/*
 * The sandbox every step built from a submission runs in: the agent's
 * workdir (spool, mirrors, other jobs), its base and kernel caches and its
 * token file are hidden; the caller adds what the step may write and
 * read.
 */
void job_policy(struct job *j, struct sandbox_policy *p)
{
	memset(p, 0, sizeof(*p));
	if (j->kernel) {
		/*
		 * the trusted lockbench and its kernel files (exe/../lockbench/kernel)
		 * stay visible, even when the checkout is under /tmp
		 */
		snprintf(j->trusted_dir, sizeof(j->trusted_dir), "%s", j->ag->cfg.lockbench);
		for (int up = 0; up < 2; up++) {
			char *slash = strrchr(j->trusted_dir, '/');
			if (slash && slash != j->trusted_dir)
				*slash = 0;
		}
		sandbox_add(p->visible, j->trusted_dir);
	}
	sandbox_add(p->hidden, j->ag->cfg.workdir);
	if (j->ag->cfg.kernel_cache)
		sandbox_add(p->hidden, j->ag->cfg.kernel_cache);
	if (j->ag->cfg.base_cache)
		sandbox_add(p->hidden, j->ag->cfg.base_cache);
	if (j->ag->cfg.token_file)
		sandbox_add(p->hidden, j->ag->cfg.token_file);
	p->tmp_mb = j->ag->cfg.sandbox_tmp_mb;
}

struct spawn_limits job_limits(struct job *j, int cpu_s)
{
	struct spawn_limits l = {.cpu_s = cpu_s,
	                         .mem_mb = j->ag->cfg.sandbox_mem_mb,
	                         .nproc = j->ag->cfg.sandbox_procs,
	                         .fsize_mb = j->ag->cfg.sandbox_fsize_mb};
	return l;
}

/*
 * Run a build from the submission in the sandbox: only tree is written,
 * reuse (when set) is read; output to log; r says how it ended.  -1, with
 * the reason set, when it could not start.
 */
int sandboxed_build(struct job *j, const char *const argv[], const char *tree, const char *reuse,
                    const char *log, int cpu_factor, const char *what, struct spawn_result *r)
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

/*
 * How the sandboxed build of what (a kernel build when kernel) ended: 0
 * when it exited 0, else -1 with the reason set (what happened, then the
 * last lines of log).
 */
int build_ended(struct job *j, const struct spawn_result *r, bool kernel, const char *what,
                const char *log)
{
	const char *kind = kernel ? "kernel build" : "build";
	char msg[192];

	if (r->timed_out)
		snprintf(msg, sizeof(msg), "%s of %s did not finish within %d s", kind, what,
		         j->ag->cfg.build_timeout_s);
	else if (r->status)
		snprintf(msg, sizeof(msg), "%s of %s failed (%s exited %d)", kind, what,
		         kernel ? "lockbench kernel build" : "make", r->status);
	else {
		agent_log("info", j->id, "built %s%s in %.1f s", kernel ? "kernel " : "", what,
		          r->wall_s);
		return 0;
	}
	fail_with_tail(j, msg, log, 25);
	return -1;
}

/* The version text of every lockbench the agent builds (make's variable). */
#define AGENT_BUILD_VERSION "LOCKLAB_VERSION=agent-build"

/* make's arguments after the tree and -j: what shapes the binary (the base cache's key) */
static const char *const build_args[] = {"BUILD=build", AGENT_BUILD_VERSION, "build/lockbench"};

/* Build lockbench in tree, untrusted: no network, CPU and wall limits. */
static int build_tree(struct job *j, const char *tree, const char *what)
{
	char log[4096], jobs[16];
	snprintf(log, sizeof(log), "%s/build-%s.log", j->dir, what);
	snprintf(jobs, sizeof(jobs), "-j%d", j->ag->cfg.jobs);
	/*
	 * one version text for every build: git describe differs between the
	 * base and a patched commit, and the text is in the image an A/A is
	 * told by (a README patch must build the base's image)
	 */
	const char *argv[] = {"make",        "-C",          tree,          jobs,
	                      build_args[0], build_args[1], build_args[2], NULL};
	struct spawn_result r;
	job_activity(j, NULL, "building %s", what);
	if (sandboxed_build(j, argv, tree, NULL, log, 2, "build", &r))
		return -1;
	return build_ended(j, &r, false, what, log);
}

/*
 * Whether make sees a change to path: its .d files follow every C source
 * and header; text no build reads (Markdown, docs/) changes nothing.  A
 * change to anything else (the Makefile's flags, a script it runs) may
 * change every object without make knowing.
 */
static bool make_follows(const char *path)
{
	size_t l = strlen(path);
	if (l > 2 && path[l - 2] == '.' && (path[l - 1] == 'c' || path[l - 1] == 'h'))
		return true;
	return (l > 3 && !strcmp(path + l - 3, ".md")) || !strncmp(path, "docs/", 5);
}

/*
 * The build folder of tree (a worktree of the mirror, git folder gitdir)
 * made ready for make to build on objects made at commit from: objs copied
 * in as tree/build (NULL: the folder holds them already), the objects dated
 * 2000-01-01 plus a second, every tracked file 2000-01-01 and the files
 * changed since from now, so make rebuilds exactly what the change reaches
 * through its .d files, whatever the clock did since the objects were made.
 * 0 with *n the files changed, or -1 with why: a change make does not
 * follow (it may change every object without make knowing), a new header
 * (it may stand before one of the same name on the include path, for files
 * whose .d files never named it), or a step that failed.
 */
static int reuse_objects(struct job *j, const char *gitdir, const char *tree, const char *from,
                         const char *objs, int *n, char *why, size_t whylen)
{
	const struct timespec objs_time = {DATE_BACK + 1, 0};
	struct spawn_result changed = {0}, r;
	char dir[1200];

	*n = 0;
	why[0] = 0;
	snprintf(dir, sizeof(dir), "%s/build", tree);
	if (tree_changes(j, gitdir, from, false, &changed, 4 << 20)) {
		snprintf(why, whylen, "its changes cannot be listed");
		return -1;
	}
	for (size_t off = 0; off < changed.out_len; off += strlen(changed.out + off) + 1, (*n)++)
		if (!why[0] && !make_follows(changed.out + off))
			snprintf(why, whylen, "it changes %.200s, which make does not follow",
			         changed.out + off);
	if (!why[0] && tree_changes(j, gitdir, from, true, &r, 4 << 20))
		snprintf(why, whylen, "its new files cannot be listed");
	else if (!why[0]) {
		for (size_t off = 0; off < r.out_len; off += strlen(r.out + off) + 1) {
			size_t l = strlen(r.out + off);
			if (!why[0] && l > 2 && !strcmp(r.out + off + l - 2, ".h"))
				snprintf(why, whylen, "it adds the header %.200s", r.out + off);
		}
		spawn_result_release(&r);
	}
	if (!why[0] && objs && fs_copy_tree(objs, dir))
		snprintf(why, whylen, "the objects cannot be copied: %s", strerror(errno));
	/* the changed paths listed above are the ones dated now */
	if (!why[0] && (fs_date_tree(dir, &objs_time) ||
	                tree_date_paths(j, gitdir, tree, changed.out, changed.out_len)))
		snprintf(why, whylen, "the tree cannot be dated back");
	spawn_result_release(&changed);
	return why[0] ? -1 : 0;
}

/*
 * A patched lockbench is built on the build before it: the first on the
 * base's objects, each later prefix on the one before, so a patch to one
 * lock recompiles one file and links (reuse_objects).  A change make does
 * not follow, or any step failing, means a clean build.
 */
static void ready_build_folder(struct job *j, const char *what)
{
	const char *from = j->built_rev[0] ? j->built_rev : j->base_rev;
	char dir[1200], why[320] = "";
	int n = 0;

	snprintf(dir, sizeof(dir), "%s/build", j->series_tree);
	if (!j->built_rev[0] && !j->base_objs[0])
		snprintf(why, sizeof(why), "the base's objects are not at hand");
	else
		reuse_objects(j, j->series_gitdir, j->series_tree, from,
		              j->built_rev[0] ? NULL : j->base_objs, &n, why, sizeof(why));
	if (why[0]) {
		if (fs_remove_tree(dir))
			agent_log("warn", j->id, "cannot remove %s: %s", dir, strerror(errno));
		agent_log("info", j->id, "%s: a clean build: %s", what, why);
	} else {
		agent_log("info", j->id, "%s: built on the %s objects (%d file%s changed)", what,
		          j->built_rev[0] ? "last build's" : "base's", n, n == 1 ? "" : "s");
	}
}

/* Build the series tree as it stands for variant what: on the last build (above). */
int build_series(struct job *j, const char *what)
{
	ready_build_folder(j, what);
	if (build_tree(j, j->series_tree, what))
		return -1;
	if (series_head(j, j->built_rev, sizeof(j->built_rev)))
		j->built_rev[0] = 0; /* the next build is clean */
	return 0;
}

static void variant_file_of(const struct stat *st, struct variant_file *f)
{
	f->dev = st->st_dev;
	f->ino = st->st_ino;
	f->size = st->st_size;
	f->mtime = st->st_mtim;
	f->ctime = st->st_ctim;
}

static bool variant_file_same(const struct variant_file *a, const struct variant_file *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	       a->mtime.tv_sec == b->mtime.tv_sec && a->mtime.tv_nsec == b->mtime.tv_nsec &&
	       a->ctime.tv_sec == b->ctime.tv_sec && a->ctime.tv_nsec == b->ctime.tv_nsec;
}

void variant_hash(struct job *j, struct variant *v)
{
	char err[256];
	struct stat st;

	v->image[0] = 0;
	/* the file's identity first: a change while it is read shows at the next look */
	if (stat(v->bin, &st) != 0) {
		agent_log("warn", j->id, "no image of %s: %s: %s", v->name, v->bin,
		          strerror(errno));
		return;
	}
	variant_file_of(&st, &v->hashed);
	if (elfimage_sha256(v->bin, v->image, err, sizeof(err)) != 0) {
		v->image[0] = 0;
		agent_log("warn", j->id, "no image of %s: %s", v->name, err);
		return;
	}
	agent_log("info", j->id, "image of %s: %s", v->name, v->image);
}

int variant_image(struct job *j, const struct variant *v, char out[ELFIMAGE_LEN], char *err,
                  size_t errlen)
{
	struct variant_file now;
	struct stat st;

	if (stat(v->bin, &st) != 0) {
		snprintf(err, errlen, "%s: %s", v->bin, strerror(errno));
		return -1;
	}
	variant_file_of(&st, &now);
	if (v->image[0] && variant_file_same(&now, &v->hashed)) {
		memcpy(out, v->image, ELFIMAGE_LEN);
		return 0;
	}
	if (elfimage_sha256(v->bin, out, err, errlen) != 0)
		return -1;
	agent_log("warn", j->id, "image of %s hashed again: %s (the file is not the one kept)",
	          v->name, out);
	return 0;
}

int keep_binary(struct job *j, const char *tree, const char *variant)
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
	variant_hash(j, v);
	j->nv++;
	return 0;
}

/*
 * Base builds are cached by commit and build configuration: every job on
 * the same base measures the same binary, and the agent does not rebuild
 * it (nor, for the most part, its patched variant: ready_build_folder).  Trusted: the base is the
 * tree's own commit, not a submitted patch. The cache (--base-cache, else WORKDIR/base-cache) may
 * be shared by several agents on one machine: KEY.lock is held while one of them builds a base the
 * cache lacks, so the others wait and take its build, and an entry is written into KEY.tmp and
 * renamed into place, so a reader sees a whole entry or none.  KEY is the commit and a digest of
 * the make arguments that shape the binary (build_args), so an agent that builds differently never
 * takes another's binary.
 */
static void base_cache_key(struct job *j, char *out, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
	for (size_t i = 0; i < sizeof(build_args) / sizeof(build_args[0]); i++)
		for (const char *c = build_args[i];; c++) {
			h = (h ^ (unsigned char)*c) * 0x100000001b3ull;
			if (!*c)
				break;
		}
	snprintf(out, len, "%s-%016llx", j->base_rev, (unsigned long long)h);
}

static bool base_from_cache(struct job *j)
{
	char key[256], path[4200];
	struct variant *v = &j->v[j->nv];
	base_cache_key(j, key, sizeof(key));
	snprintf(path, sizeof(path), "%s/%s/lockbench", j->ag->cfg.base_cache, key);
	if (access(path, X_OK) || strlen(path) >= sizeof(v->bin))
		return false;
	memcpy(v->bin, path, strlen(path) + 1); /* fits: checked above */
	struct stat st;
	snprintf(path, sizeof(path), "%s/%s/build", j->ag->cfg.base_cache, key);
	if (!lstat(path, &st) && S_ISDIR(st.st_mode) && strlen(path) < sizeof(j->base_objs))
		memcpy(j->base_objs, path, strlen(path) + 1);
	snprintf(v->name, sizeof(v->name), "base");
	variant_hash(j, v);
	j->nv++;
	return true;
}

/*
 * Keep the base binary as the cache's entry (kernel_cache.c's discipline),
 * with its build folder (objects, make's .d files), where patched builds
 * start from; an entry without the folder still serves the binary.
 */
static void base_to_cache(struct job *j)
{
	char key[256], dest[4200], built[4300], bin[4400], objs[4400];
	base_cache_key(j, key, sizeof(key));
	snprintf(dest, sizeof(dest), "%s/%s", j->ag->cfg.base_cache, key);
	snprintf(built, sizeof(built), "%s.build", dest);
	snprintf(bin, sizeof(bin), "%s/lockbench", built);
	snprintf(objs, sizeof(objs), "%s/build", built);
	if (fs_remove_tree(built) || fs_mkdirs(built) || fs_copy_file(j->v[0].bin, bin)) {
		agent_log("warn", j->id, "cannot cache the base build in %s: %s", dest,
		          strerror(errno));
		fs_remove_tree(built);
		return;
	}
	if (j->base_objs[0] && fs_copy_tree(j->base_objs, objs)) {
		agent_log("warn", j->id, "cannot cache the base's objects in %s: %s", dest,
		          strerror(errno));
		fs_remove_tree(objs);
	}
	if (kcache_keep(built, dest))
		agent_log("warn", j->id, "cannot cache the base build in %s: %s", dest,
		          strerror(errno));
	fs_remove_tree(built);
}

/*
 * A base the cache lacks is built on the objects of the cached base nearest
 * to it (reuse_objects), so on a tracked tree each new head, sample and
 * bisection step is a build of the files it changes, not of the whole tree.
 * Nearest: of the newest BASE_NEAR_TRIES entries with this agent's build
 * arguments and a build folder, the one fewest files away whose commit is on
 * one of the tree's own branches (a git submission may name its own base:
 * objects built from it serve no other job).  Nothing near, or
 * reuse_objects refusing, means a clean build.
 */
#define BASE_NEAR_TRIES 32
#define BASE_NEAR_SCAN  512

struct base_entry {
	char rev[72];
	struct timespec at;
};

static int base_entry_newer(const void *pa, const void *pb)
{
	const struct base_entry *a = pa, *b = pb;
	if (a->at.tv_sec != b->at.tv_sec)
		return a->at.tv_sec < b->at.tv_sec ? 1 : -1;
	return a->at.tv_nsec < b->at.tv_nsec ? 1 : a->at.tv_nsec > b->at.tv_nsec ? -1 : 0;
}

/* Whether commit rev is on a branch of the tree (the mirror's refs/heads/). */
static bool on_tree_branch(struct job *j, const char *rev)
{
	const char *argv[] = {"git",        "-C",         j->mirror, "for-each-ref", "--count=1",
	                      "--format=x", "--contains", rev,       "refs/heads/",  NULL};
	struct spawn_result r = {0};
	bool on =
	    !looks_like_option(rev) && !git_run(j, "/dev/null", argv, &r, 4096) && r.out_len > 0;
	spawn_result_release(&r);
	return on;
}

/* The nearest cached base (above): its commit into rev, its objects into objs; 0 or -1. */
static int base_nearest(struct job *j, char *rev, size_t revlen, char *objs, size_t objslen)
{
	const char *cache = j->ag->cfg.base_cache;
	struct base_entry *e;
	char key[256], path[4200];
	size_t best_n = SIZE_MAX;
	int ne = 0, best = -1;
	struct stat st;

	base_cache_key(j, key, sizeof(key));
	const char *suffix = strrchr(key, '-');
	size_t sl = strlen(suffix);
	DIR *d = opendir(cache);
	if (!d)
		return -1;
	if (!(e = calloc(BASE_NEAR_SCAN, sizeof(*e)))) {
		closedir(d);
		return -1;
	}
	for (struct dirent *de; ne < BASE_NEAR_SCAN && (de = readdir(d));) {
		size_t l = strlen(de->d_name);
		if (l <= sl || l - sl >= sizeof(e[0].rev) || strcmp(de->d_name + l - sl, suffix) ||
		    strspn(de->d_name, "0123456789abcdef") != l - sl)
			continue;
		snprintf(path, sizeof(path), "%s/%s/build", cache, de->d_name);
		if (lstat(path, &st) || !S_ISDIR(st.st_mode))
			continue;
		memcpy(e[ne].rev, de->d_name, l - sl);
		e[ne].rev[l - sl] = 0;
		e[ne].at = st.st_mtim;
		if (strcmp(e[ne].rev, j->base_rev))
			ne++;
	}
	closedir(d);
	qsort(e, (size_t)ne, sizeof(e[0]), base_entry_newer);
	for (int i = 0; i < ne && i < BASE_NEAR_TRIES; i++) {
		struct spawn_result r;
		size_t n = 0;
		if (tree_changes(j, j->base_gitdir, e[i].rev, false, &r, 4 << 20))
			continue; /* not a commit of this tree's mirror */
		for (size_t off = 0; off < r.out_len; off += strlen(r.out + off) + 1)
			n++;
		spawn_result_release(&r);
		if (n < best_n && on_tree_branch(j, e[i].rev)) {
			best = i;
			best_n = n;
		}
	}
	if (best >= 0) {
		snprintf(rev, revlen, "%s", e[best].rev);
		snprintf(objs, objslen, "%s/%s%s/build", cache, e[best].rev, suffix);
	}
	free(e);
	return best >= 0 ? 0 : -1;
}

/* The base tree's build folder on the nearest cached base's objects, when one serves. */
static bool ready_base_folder(struct job *j)
{
	char rev[72], objs[4400], why[320], dir[1200];
	int n;

	if (base_nearest(j, rev, sizeof(rev), objs, sizeof(objs)))
		return false;
	if (!reuse_objects(j, j->base_gitdir, j->base_tree, rev, objs, &n, why, sizeof(why))) {
		agent_log("info", j->id,
		          "base: built on the objects of base %.12s (%d file%s changed)", rev, n,
		          n == 1 ? "" : "s");
		return true;
	}
	snprintf(dir, sizeof(dir), "%s/build", j->base_tree);
	if (fs_remove_tree(dir))
		agent_log("warn", j->id, "cannot remove %s: %s", dir, strerror(errno));
	agent_log("info", j->id, "base: a clean build: %s (the nearest cached base is %.12s)", why,
	          rev);
	return false;
}

/*
 * Build the base tree: on the nearest cached base's objects when one
 * serves, and clean when that build fails (objects of another commit must
 * never be why a base does not build).
 */
static int build_base(struct job *j)
{
	if (!ready_base_folder(j))
		return build_tree(j, j->base_tree, "base");
	if (!build_tree(j, j->base_tree, "base"))
		return 0;
	char dir[1200];
	snprintf(dir, sizeof(dir), "%s/build", j->base_tree);
	agent_log("warn", j->id, "base: the build on cached objects failed: building it clean");
	if (fs_remove_tree(dir))
		return -1;
	j->fail_reason[0] = 0;
	return build_tree(j, j->base_tree, "base");
}

bool job_gone(void *arg)
{
	struct job *j = arg;
	return atomic_load(&j->lost) || atomic_load(&j->ag->stop);
}

/*
 * The cache's lock of this job's base: an open descriptor, -1 without one
 * (the base is then built unshared), or -2 when the job was lost or the
 * agent told to stop while another agent held it.
 */
static int base_cache_lock(struct job *j)
{
	char key[256];
	bool waited;
	base_cache_key(j, key, sizeof(key));
	int fd = fs_mkdirs(j->ag->cfg.base_cache)
	             ? -1
	             : kcache_lock_until(j->ag->cfg.base_cache, key, job_gone, j, &waited);
	if (fd < 0 && errno == ECANCELED) {
		snprintf(j->fail_reason, sizeof(j->fail_reason),
		         "stopped while another agent built the base");
		return -2;
	}
	if (fd < 0)
		agent_log("warn", j->id, "cannot lock %s/%s.lock: %s (building the base unshared)",
		          j->ag->cfg.base_cache, key, strerror(errno));
	return fd;
}

/* The base lockbench: from the cache, else built (and then cached). */
int prepare_base(struct job *j)
{
	if (base_from_cache(j)) {
		agent_log("info", j->id, "base %.12s built before: reusing it", j->base_rev);
		return 0;
	}
	int fd = base_cache_lock(j), rc = 0;
	if (fd == -2)
		return -1;
	if (base_from_cache(j)) /* another agent built it while this one waited */
		agent_log("info", j->id, "base %.12s built beside: reusing it", j->base_rev);
	else if (add_worktree(j, j->base_tree, j->base_rev, j->base_gitdir,
	                      sizeof(j->base_gitdir)) ||
	         build_base(j) || keep_binary(j, j->base_tree, "base"))
		rc = -1;
	else {
		snprintf(j->base_objs, sizeof(j->base_objs), "%s/build", j->base_tree);
		base_to_cache(j);
	}
	if (fd >= 0)
		close(fd);
	return rc;
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
void choose_locks(struct job *j)
{
	char names[64][64];
	char chosen[1024] = "pthread";
	bool shared = false, any_lock = false, pthread_touched = false;
	int nnames = known_locks(j, j->v[j->nv - 1].bin, names, 64);
	struct spawn_result r;

	/* the series' commits against the base */
	if (series_changes(j, j->base_rev, false, &r, 4 << 20))
		return;
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
