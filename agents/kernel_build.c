/*
 * kernel_build.c - a kernel tree's job: the base kernels from the machine's
 * cache (measuring and debug, built once per commit and configuration),
 * the patched ones built on their objects in the sandbox, and the guest
 * workloads and locktorture types the paths the series touches choose.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent.h"
#include "fsutil.h"
#include "job.h"
#include "kernel_cache.h"
#include "kernel_workloads.h"
#include "log.h"
#include "sandbox.h"
#include "spawn.h"
#include "strutil.h"

/*
 * Kernel trees: `lockbench kernel build` of a worktree into an output
 * folder, untrusted (the tree carries the patch): no network, limits.  The
 * base build is kept by commit in the kernel cache and is where the patched
 * build starts from (--reuse), so a mutex.c patch recompiles a few objects.
 */
static int kernel_build(struct job *j, const char *tree, const char *out, const char *reuse,
                        const char *what, bool debug)
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
	if (debug) {
		/* lockdep and the rest on top (locklab-debug.config); a patched one says so */
		argv[k++] = "--debug";
		argv[k++] = "--variant";
		argv[k++] = reuse ? "patched" : "base";
	}
	argv[k] = NULL;
	/* the tree (its output folder inside) is written; the base build is read */
	struct spawn_result r;
	char make_log[1400];
	snprintf(make_log, sizeof(make_log), "%s/locklab-build.log", out);
	job_activity(j, make_log, "building kernel %s%s", what,
	             reuse ? " on the base's objects" : " from scratch (not cached yet)");
	if (sandboxed_build(j, argv, tree, reuse, log, 4, "kernel build", &r))
		return -1;
	return build_ended(j, &r, true, what, log);
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

/*
 * Kernel trees: the guest workloads and locktorture types the boots run,
 * the core and what the paths the series touches add (kernel_workloads.c),
 * each logged with its reason and kept in the job's workloads.txt.
 */
static void choose_kernel_workloads(struct job *j)
{
	char path[1200], line[256];
	struct spawn_result r;
	struct kw_choice c;

	if (series_changes(j, j->base_rev, false, &r, 4 << 20)) {
		agent_log("warn", j->id, "cannot list the paths the series touches: the core runs");
		kw_choose(&c, NULL, 0);
	} else {
		kw_choose(&c, r.out, r.out_len);
		spawn_result_release(&r);
	}
	snprintf(j->kworkloads, sizeof(j->kworkloads), "%s", c.workloads);
	snprintf(j->ktypes, sizeof(j->ktypes), "%s", c.types);
	/*
	 * The debug pass: the kernel-mutex workloads, and what the touched
	 * paths chose, without the core's userspace ones (lockdep sees a
	 * lock's paths, not its figures); the same locktorture types.
	 */
	snprintf(j->kdebug_workloads, sizeof(j->kdebug_workloads), "%s", KW_DEBUG_WORKLOADS);
	for (int i = 0; i < c.n; i++) {
		char hay[300], needle[64];
		snprintf(hay, sizeof(hay), ",%s,", j->kdebug_workloads);
		snprintf(needle, sizeof(needle), ",%s,", c.why[i].name);
		if (c.why[i].paths && strncmp(c.why[i].name, "locktorture:", 12) &&
		    !strstr(hay, needle) &&
		    strlen(j->kdebug_workloads) + strlen(c.why[i].name) + 2 <
		        sizeof(j->kdebug_workloads))
			strcat(strcat(j->kdebug_workloads, ","), c.why[i].name);
	}
	snprintf(path, sizeof(path), "%s/workloads.txt", j->dir);
	FILE *f = fopen(path, "w");
	for (int i = 0; i < c.n; i++) {
		kw_line(&c, i, line, sizeof(line));
		agent_log("info", j->id, "runs %s", line);
		if (f)
			fprintf(f, "%s\n", line);
	}
	if (f)
		fclose(f);
}

/*
 * The base kernel in the machine's cache (kernel_cache.h), keyed by commit
 * and fragment: reused when some job of some agent built it, else built
 * here under the key's lock and kept.  base_out gets its folder.
 */
static int cached_base(struct job *j, char *base_out, size_t len, bool debug)
{
	char frag[4200], key[256], marker[2200], built[1300];
	const char *kind = debug ? "debug kernel base" : "kernel base";
	char *text = NULL;
	bool waited;
	int lock = -1, rc = -1;

	if (!kcache_fragment(j->ag->cfg.lockbench, frag, sizeof(frag)))
		text = debug ? kcache_debug_fragment(frag) : strutil_file_text(frag);
	if (!text) {
		snprintf(j->fail_reason, sizeof(j->fail_reason),
		         "%s: no kernel configuration fragment%s beside %s", INFRA,
		         debug ? " (or locklab-debug.config)" : "", j->ag->cfg.lockbench);
		return -1;
	}
	/* the debug base: both fragments' digest, its own entry (REV-CFG-debug) */
	kcache_key(j->base_rev, text, strlen(text), debug ? "debug" : NULL, key, sizeof(key));
	free(text);
	snprintf(base_out, len, "%s/%s", j->ag->cfg.kernel_cache, key);
	snprintf(marker, sizeof(marker), "%s/arch/x86/boot/bzImage", base_out);
	if (!access(marker, R_OK)) {
		agent_log("info", j->id, "%s %s built before: reusing it", kind, key);
		return 0;
	}
	if (fs_mkdirs(j->ag->cfg.kernel_cache) ||
	    (lock = kcache_lock_until(j->ag->cfg.kernel_cache, key, job_gone, j, &waited)) < 0) {
		if (errno == ECANCELED)
			snprintf(j->fail_reason, sizeof(j->fail_reason),
			         "stopped while another job built the kernel base");
		else
			snprintf(j->fail_reason, sizeof(j->fail_reason),
			         "%s: cannot lock %s/%s.lock: %s", INFRA, j->ag->cfg.kernel_cache,
			         key, strerror(errno));
		return -1;
	}
	if (waited && !access(marker, R_OK)) {
		agent_log("info", j->id, "%s %s built meanwhile by another job: reusing it", kind,
		          key);
		close(lock);
		return 0;
	}
	agent_log("info", j->id, "building %s %s into the machine's cache %s", kind, key,
	          j->ag->cfg.kernel_cache);
	snprintf(built, sizeof(built), "%s/%s", j->base_tree,
	         debug ? "locklab-debug-out" : "locklab-out");
	if ((!j->base_gitdir[0] &&
	     add_worktree(j, j->base_tree, j->base_rev, j->base_gitdir, sizeof(j->base_gitdir))) ||
	    kernel_build(j, j->base_tree, built, NULL, debug ? "base-debug" : "base", debug))
		goto out;
	/* the base is the tree's own commit (trusted): keep it for every job */
	if (kcache_keep(built, base_out)) {
		snprintf(j->fail_reason, sizeof(j->fail_reason),
		         "cannot keep the base kernel build in %s: %s", base_out, strerror(errno));
		goto out;
	}
	rc = 0;
out:
	close(lock);
	return rc;
}

/*
 * The debug pass's kernels (run_kernel_debug): the debug base in the
 * machine's cache beside the measuring one, the patched debug kernel
 * incrementally from it (--reuse), into the series tree's own
 * locklab-debug-out.
 */
static int prepare_kernel_debug(struct job *j)
{
	char base_out[2048], patched_out[1300];
	struct variant *v = j->kdebug;

	if (cached_base(j, base_out, sizeof(base_out), true))
		return -1;
	/*
	 * The debug base may have been built just now, after prepare_kernel
	 * dated the series tree: its objects would be newer than the files the
	 * series changed, and make would keep the base's objects for them (a
	 * patched-debug kernel without the patch).  The changed files are dated
	 * now again, after every object the build starts from (the rest of the
	 * tree stays as prepare_kernel dated it).
	 */
	if (date_changes_now(j, j->base_rev)) {
		snprintf(j->fail_reason, sizeof(j->fail_reason),
		         "%s: cannot date the series' changes after the debug base", INFRA);
		return -1;
	}
	snprintf(patched_out, sizeof(patched_out), "%s/locklab-debug-out", j->series_tree);
	if (kernel_build(j, j->series_tree, patched_out, base_out, "patched-debug", true))
		return -1;
	snprintf(v[0].bin, sizeof(v[0].bin), "%.1300s/arch/x86/boot/bzImage", base_out);
	snprintf(v[1].bin, sizeof(v[1].bin), "%.1290s/arch/x86/boot/bzImage", patched_out);
	snprintf(v[0].name, sizeof(v[0].name), "base-debug");
	snprintf(v[1].name, sizeof(v[1].name), "patched-debug");
	for (int i = 0; i < 2; i++)
		if (access(v[i].bin, R_OK)) {
			snprintf(j->fail_reason, sizeof(j->fail_reason),
			         "kernel build of %s left no %s", v[i].name, v[i].bin);
			return -1;
		}
	j->nkdebug = 2;
	return 0;
}

/*
 * A pull request to a kernel tree: its range of commits on the base is
 * measured as one patch, whatever its length.  A commit's own figures would
 * take a kernel build and the boots of every round (minutes each under
 * TCG), and a kernel series is one patch too; the documents say how many
 * commits the patch holds, and the reply says so.
 */
static void kernel_pull_range(struct job *j, const char *ref)
{
	char commits[1][48];
	int n = range_commits(j, j->base_rev, ref, commits, 1);

	j->ncommits = n > 0 ? n : 0;
	if (n > 1)
		agent_log("info", j->id,
		          "the pulled range has %d commits: a kernel tree's range is measured "
		          "as one patch",
		          n);
}

/*
 * Kernel trees: base (in the machine's cache) and patched kernels.  Each output
 * folder is a direct child of its tree, so kbuild's command lines use the
 * relative srctree and the patched build, started from a copy of the base
 * objects (--reuse), recompiles only what the series changed.
 */
int prepare_kernel(struct job *j, json_t *git, json_t *mails)
{
	char base_out[2048], patched_out[1300];
	if (cached_base(j, base_out, sizeof(base_out), false))
		return -1;
	if (kernel_variant(j, base_out, "base"))
		return -1;
	char ref[128] = "";
	if (json_is_object(git)) {
		snprintf(ref, sizeof(ref), "refs/locklab/job%lld", j->id);
		if (add_worktree(j, j->series_tree, ref, j->series_gitdir,
		                 sizeof(j->series_gitdir)))
			return -1;
		j->npatches = 1;
		if (json_is_true(json_object_get(git, "pull")))
			kernel_pull_range(j, ref);
	} else {
		if (series_from_mails(j, mails))
			return -1;
		for (int k = 1; k <= j->npatches; k++)
			if (git_am(j, k))
				return -1;
	}
	/*
	 * A fresh checkout stamps every file with now, newer than the base's
	 * objects, and make would rebuild the whole kernel: date the tree back,
	 * then only the files the series changed are newer than the objects.
	 */
	if (date_tree_back(j, j->base_rev))
		agent_log("warn", j->id,
		          "cannot date the patched tree back: a full rebuild follows");
	snprintf(patched_out, sizeof(patched_out), "%s/locklab-out", j->series_tree);
	if (kernel_build(j, j->series_tree, patched_out, base_out, "patched", false) ||
	    kernel_variant(j, patched_out, "patched"))
		return -1;
	if (j->ncommits > 0) /* the documents name the range's last commit */
		commit_label(j, ref, j->v[j->nv - 1].label, sizeof(j->v[j->nv - 1].label));
	j->locks[0] = 0;
	j->controls[0] = 0;
	choose_kernel_workloads(j);
	return j->ag->cfg.kernel_debug ? prepare_kernel_debug(j) : 0;
}
