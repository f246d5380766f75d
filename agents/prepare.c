/*
 * prepare.c - a claimed job made ready to run: the submission's commits
 * fetched (git) or its mails applied (mbox) in a worktree of the mirror,
 * a variant built for each prefix of the series (build.c), or a kernel
 * tree's job handed to kernel_build.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent.h"
#include "codesource.h"
#include "gitproto.h"
#include "job.h"
#include "log.h"
#include "netpolicy.h"
#include "sshpin.h"
#include "strutil.h"

/* The variant of the first k of n patches (or commits): patch-K, the last one patched. */
static void prefix_name(int k, int n, char *out, size_t len)
{
	if (k == n)
		snprintf(out, len, "patched");
	else
		snprintf(out, len, "patch-%d", k);
}

/*
 * Fetch a git submission's ref into the mirror as refs/locklab/jobID, from
 * where the code may come (codesource.h: the tree's own path, else the
 * network under the fetch policy, pinned to the addresses checked); 0, or
 * -1 with the reason.
 */
static int fetch_submitted(struct job *j, const char *url, const char *gurl, const char *ref)
{
	char log[4096], why[512];
	struct netpolicy_pin pin = {.resolve = ""};

	snprintf(log, sizeof(log), "%s/git.log", j->dir);
	job_activity(j, NULL, "fetching the submitted ref");
	/* where the code may come from: the server's rule (codesource.h) */
	enum codesource_kind src =
	    codesource_check(gurl, url, j->ag->cfg.allow_local_trees, why, sizeof(why));
	if (src == CODESOURCE_REFUSED) {
		snprintf(j->fail_reason, sizeof(j->fail_reason), "refused: git url '%.300s' %s",
		         gurl, why);
		return -1;
	}
	if (src == CODESOURCE_LOCAL) {
		/* its tree's own path: no network, nothing to pin */
		snprintf(pin.url, sizeof(pin.url), "%s", gurl);
	} else if (netpolicy_check_url(gurl, j->ag->cfg.fetch_allow, &pin, why, sizeof(why))) {
		snprintf(j->fail_reason, sizeof(j->fail_reason), "refused: git url '%.300s': %s",
		         gurl, why);
		return -1;
	}
	if (pin.ssh[0] && !j->ag->ssh_helper[0]) {
		snprintf(j->fail_reason, sizeof(j->fail_reason),
		         "refused: git url '%.300s': this agent has no ssh wrapper to hold "
		         "ssh to the checked address (see its start-up log)",
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
	/*
	 * a submitted URL only over the network protocols, never ext:: and
	 * file:// only for the tree's own path, and only to the addresses
	 * just checked (netpolicy.h): no redirects, the name pinned
	 */
	const char *argv[3 + GITPROTO_ARGC + NETPOLICY_GIT_ARGC + 5 + 1]; /* + NULL */
	/* an ssh:// URL: git's ssh is the agent's wrapper, held to the checked address */
	char ssh_cmd[sizeof(j->ag->ssh_helper) + 16], ssh_pin[sizeof(pin.ssh) + 32];
	const char *ssh_env[] = {ssh_cmd, ssh_pin, NULL};

	snprintf(ssh_cmd, sizeof(ssh_cmd), "GIT_SSH=%s", j->ag->ssh_helper);
	snprintf(ssh_pin, sizeof(ssh_pin), SSHPIN_ENV "=%s", pin.ssh);
	size_t n = 0;

	argv[n++] = "git";
	argv[n++] = "-C";
	argv[n++] = j->mirror;
	n += gitproto_args(argv + n, src == CODESOURCE_LOCAL);
	n += netpolicy_git_args(&pin, argv + n);
	argv[n++] = "fetch";
	argv[n++] = "--quiet";
	argv[n++] = "--";
	argv[n++] = pin.url;
	argv[n++] = spec;
	argv[n] = NULL;
	if (git_run_env(j, log, argv, pin.ssh[0] ? ssh_env : NULL, NULL, 0)) {
		fail_with_tail(j, "cannot fetch the submitted ref", log, 10);
		return -1;
	}
	return 0;
}

/*
 * The patched variants of a git submission: a pull request's range of
 * commits, each built on the one before, or the ref as one patch.
 */
static int native_git_variants(struct job *j, bool pull)
{
	/*
	 * a pull request's range of commits on the base: each commit
	 * measured as a series' patch is, patch-1 ... patched, when it
	 * has as few as a series' prefixes; else the range is one patch
	 * (and so is every other git submission: a tracked tree's push
	 * is bisected, not measured commit by commit)
	 */
	char ref[128], commits[MAX_VARIANTS][48];
	snprintf(ref, sizeof(ref), "refs/locklab/job%lld", j->id);
	int n = pull ? range_commits(j, j->base_rev, ref, commits, MAX_VARIANTS) : 0;
	bool each = n > 1 && n <= j->ag->cfg.max_prefixes && n < MAX_VARIANTS - 1;
	j->ncommits = n > 0 ? n : 0;
	j->npatches = each ? n : 1;
	if (n > 1 && !each)
		agent_log("info", j->id,
		          "the range has %d commits, more than %d (--max-prefixes): "
		          "measured as one patch",
		          n,
		          j->ag->cfg.max_prefixes < MAX_VARIANTS - 2 ? j->ag->cfg.max_prefixes
		                                                     : MAX_VARIANTS - 2);
	if (add_worktree(j, j->series_tree, each ? commits[0] : ref, j->series_gitdir,
	                 sizeof(j->series_gitdir)))
		return -1;
	for (int k = 1; k <= j->npatches; k++) {
		char name[24];
		prefix_name(k, j->npatches, name, sizeof(name));
		if ((k > 1 && checkout_commit(j, commits[k - 1])) || build_series(j, name) ||
		    keep_binary(j, j->series_tree, name))
			return -1;
		struct variant *v = &j->v[j->nv - 1];
		commit_label(j, each ? commits[k - 1] : ref, v->label, sizeof(v->label));
		if (each)
			agent_log("info", j->id, "%s is commit %d of %d of the range: %s", name, k,
			          n, v->label);
	}
	return 0;
}

/* The patched variants of a series: every patch applied and (for short series) built. */
static int native_mail_variants(struct job *j, json_t *mails)
{
	if (series_from_mails(j, mails))
		return -1;
	/* every patch applied and (for short series) built: patch-1 ... patched */
	bool prefixes = j->npatches > 1 && j->npatches <= j->ag->cfg.max_prefixes &&
	                j->npatches < MAX_VARIANTS - 1;
	for (int k = 1; k <= j->npatches; k++) {
		if (git_am(j, k))
			return -1;
		if (k < j->npatches && !prefixes)
			continue;
		char name[24];
		prefix_name(k, j->npatches, name, sizeof(name));
		if (build_series(j, name) || keep_binary(j, j->series_tree, name))
			return -1;
	}
	return 0;
}

int job_prepare(struct job *j, json_t *desc)
{
	json_t *tree = json_object_get(desc, "tree"), *git = json_object_get(desc, "git");
	const char *url = j->ag->cfg.native_tree, *branch = "HEAD";
	json_t *mails = json_object_get(desc, "mails");
	const char *kind = "native";

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
	if (prepare_mirror(j, url))
		return -1;
	const char *base = branch;
	char pull_base[64];
	bool pull = false;
	if (json_is_object(git)) {
		const char *gurl = NULL, *ref = NULL, *gbase = NULL;
		json_unpack(git, "{s?s, s?s, s?s}", "url", &gurl, "ref", &ref, "base", &gbase);
		/* apart: the unpack stops at a null base, before any key after it */
		pull = json_is_true(json_object_get(git, "pull"));
		if (!gurl || !ref) {
			snprintf(j->fail_reason, sizeof(j->fail_reason),
			         "git submission without url/ref");
			return -1;
		}
		if (fetch_submitted(j, url, gurl, ref))
			return -1;
		if (gbase && *gbase) {
			base = gbase;
		} else if (pull) {
			/* a pull request changes what lies between the tree and its ref */
			char tip[64], spec[64];
			snprintf(spec, sizeof(spec), "refs/locklab/job%lld", j->id);
			if (rev_parse(j, base, tip, sizeof(tip)) ||
			    merge_base(j, tip, spec, pull_base, sizeof(pull_base))) {
				snprintf(j->fail_reason, sizeof(j->fail_reason),
				         "the pulled ref has no merge base with %s of %s", base,
				         url);
				return -1;
			}
			base = pull_base;
			agent_log("info", j->id,
			          "pull request: base %.12s, the merge base of %s and %s",
			          pull_base, branch, ref);
		}
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
		return prepare_kernel(j, git, mails);
	if (prepare_base(j))
		return -1;

	if (json_is_object(git) ? native_git_variants(j, pull) : native_mail_variants(j, mails))
		return -1;
	choose_locks(j);
	return 0;
}
