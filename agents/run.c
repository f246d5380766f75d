/*
 * run.c - the rounds: one variant of one round in the sandbox, a hung run
 * turned into a lockup document with stacks, a failed one retried once when
 * the machine is to blame; a kernel job's debug pass.  What a run's
 * outcome becomes is run_document.c, base and patched run paired
 * run_paired.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent.h"
#include "fsutil.h"
#include "job.h"
#include "log.h"
#include "run_internal.h"
#include "sandbox.h"
#include "spawn.h"
#include "strutil.h"

/*
 * The command of one variant's round into argv (at most 28 entries): the
 * submission's lockbench run, or, for a kernel job, the trusted lockbench
 * booting the variant's kernel.  rs and budget are the caller's buffers the
 * entries point into.
 */

bool job_users_suite(const struct job *j)
{
	return !strcmp(j->suite, "users") || !strcmp(j->suite, "seeds");
}

int job_run_timeout(const struct job *j)
{
	return job_users_suite(j) ? j->ag->cfg.users_timeout_s : j->ag->cfg.run_timeout_s;
}

static void variant_argv(const struct job *j, const struct variant *v, const char *duet,
                         const char *out, const char *rs, char budget[16], const char *argv[28])
{
	bool debug = debug_variant(j, v);
	int k = 0;

	if (j->kernel) {
		/*
		 * boot the variant's kernel: smoke, users (a boot per band, its
		 * own workloads; the debug pass boots once, as quick's), or else
		 * the quick suite
		 */
		bool users = job_users_suite(j) && !debug;
		argv[k++] = j->ag->cfg.lockbench;
		argv[k++] = "kernel";
		argv[k++] = "run";
		if (debug)
			argv[k++] = "--debug"; /* lockups and splats, no figures */
		argv[k++] = "--kernel";
		argv[k++] = v->bin;
		argv[k++] = "--suite";
		argv[k++] = users ? "users" : strcmp(j->suite, "smoke") ? "quick" : "smoke";
		argv[k++] = "--accel";
		argv[k++] = j->ag->accel;
		/*
		 * A boot that keeps making progress may run past its deadline up
		 * to lockbench's cap; --budget-s ends it before this run's limit
		 * (what the locktorture boots left of it, less 30 s to write the
		 * result), so the limit never cuts short a guest that progresses
		 */
		snprintf(budget, 16, "%d",
		         job_run_timeout(j) > 60 ? job_run_timeout(j) - 30 : job_run_timeout(j));
		argv[k++] = "--budget-s";
		argv[k++] = budget;
		/* what the series touches chose (build.c), beside the core */
		if (debug || (j->kworkloads[0] && !users)) {
			argv[k++] = "--workloads";
			argv[k++] = debug ? j->kdebug_workloads : j->kworkloads;
		}
		if (j->ktypes[0]) {
			argv[k++] = "--types";
			argv[k++] = j->ktypes;
		}
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
	if (duet) {
		argv[k++] = "--skip-workloads";
		argv[k++] = paired_workloads(job_pairing(j));
	}
	/* lockbench knows base and patched: a debug variant is renamed in its document */
	argv[k++] = "--variant";
	argv[k++] = !debug ? v->name : strncmp(v->name, "base", 4) ? "patched" : "base";
	argv[k++] = "--round";
	argv[k++] = rs;
	argv[k++] = "--json";
	argv[k++] = out;
	argv[k] = NULL;
}

/* Whether v is one of the debug pass's kernels (base-debug, patched-debug). */
bool debug_variant(const struct job *j, const struct variant *v)
{
	return j->kernel && v >= j->kdebug && v < j->kdebug + 2;
}

/* Run one variant for one round and post it; duet: its duet document or NULL. */
static int run_variant_once(struct job *j, const struct variant *v, int round, const char *duet,
                            bool *retry, char **keep)
{
	char out[4096], log[4096], rs[24], outdir[2048], bindir[1400], budget[16], err[512];
	const char *argv[28];
	struct stack_arg sa;
	struct sandbox_policy sb;
	struct spawn_result r;
	char *doc;
	int rc;

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
	variant_argv(j, v, duet, out, rs, budget, argv);
	/*
	 * Native: the binary was built from the submission.  Kernel: the trusted
	 * lockbench boots the submission's kernel in qemu, which is the guest's
	 * sandbox; bubblewrap still hides the agent's folders, and qemu's large
	 * mappings get no address-space limit.
	 */
	job_policy(j, &sb);
	sandbox_add(sb.writable, outdir);
	sandbox_add(sb.readable, bindir);
	sb.chdir = outdir;
	sb.kvm = j->kernel;
	struct spawn_cmd c = {.argv = argv,
	                      .out_path = log,
	                      .wall_s = job_run_timeout(j),
	                      .lim = job_limits(j, job_run_timeout(j) * 4),
	                      .sandbox = &sb,
	                      .on_deadline = capture_stacks,
	                      .arg = &sa};
	if (j->kernel)
		c.lim.mem_mb = 0;
	/* the operator's log says what ran: the command line, the lockbench path aside */
	struct strutil_buf cmd = STRUTIL_BUF_INIT;
	for (int i = 1; argv[i]; i++)
		strutil_buf_addf(&cmd, " %s", argv[i]);
	agent_log("info", j->id, "round %d: running %s: lockbench%s", round, v->name,
	          strutil_buf_str(&cmd));
	strutil_buf_release(&cmd);
	if (job_users_suite(j)) /* the dashboard says how long this may take */
		job_activity(j, NULL, "round %d: running %s (the users suite: up to %d min)", round,
		             v->name, (job_run_timeout(j) + 59) / 60);
	else
		job_activity(j, NULL, "round %d: running %s", round, v->name);
	*retry = false;
	rc = spawn_run(&c, &r, err, sizeof(err));
	spawn_result_release(&r);
	if (rc) {
		snprintf(j->fail_reason, sizeof(j->fail_reason),
		         "%s: cannot start lockbench in the sandbox: %s", INFRA, err);
		return -1;
	}
	if (atomic_load(&j->lost) || atomic_load(&j->ag->stop))
		return -1;
	doc = variant_outcome(j, v, round, &r, log, out, sa.path, duet, retry);
	if (!doc)
		return -1;
	agent_log("info", j->id, "round %d: %s finished in %.1f s (exit %d)", round, v->name,
	          r.wall_s, r.status);
	if (r.status == 0 && strcmp(v->name, "base") == 0)
		j->base_clean = true;
	if (keep) {
		*keep = doc;
		return 0;
	}
	rc = post_result(j, v->name, round, doc);
	free(doc);
	return rc;
}

/*
 * Run one variant for one round and post it.  A run that failed for the
 * machine's reasons (killed, qemu failing) is tried once more before the
 * job fails with the reason; nothing of it is posted as a finding.
 */
static int run_variant(struct job *j, const struct variant *v, int round, const char *duet,
                       char **keep)
{
	bool retry = false;
	int rc = run_variant_once(j, v, round, duet, &retry, keep);
	if (rc && retry && !atomic_load(&j->lost) && !atomic_load(&j->ag->stop)) {
		agent_log("warn", j->id, "round %d: %s failed (%s); trying once more", round,
		          v->name, j->fail_reason);
		rc = run_variant_once(j, v, round, duet, &retry, keep);
	}
	return rc;
}

/*
 * One round of two variants: their single-thread points paired (a duet,
 * lockstep or ABBA, as the job pairs them), then each variant's run of the
 * rest, base first on even rounds and last on odd ones, so drift over time
 * hits both sides alike.  keep NULL: each document is posted; otherwise
 * handed back in keep[i] for v[i].
 */
static int run_two(struct job *j, const struct variant v[2], int round, char **keep)
{
	char duet[2][2100];
	bool with_duet = job_pairing(j) != PAIR_NONE && run_duet(j, v, round, duet) == 0;

	if (atomic_load(&j->lost) || atomic_load(&j->ag->stop))
		return -1;
	for (int i = 0; i < 2; i++) {
		int idx = round % 2 == 0 ? i : 1 - i;
		if (run_variant(j, &v[idx], round, with_duet ? duet[idx] : NULL,
		                keep ? &keep[idx] : NULL))
			return -1;
	}
	return 0;
}

int run_round(struct job *j, int round)
{
	if (j->nv == 2)
		return run_two(j, j->v, round, NULL);
	if (atomic_load(&j->lost) || atomic_load(&j->ag->stop))
		return -1;
	/* a series' prefixes: one variant after the other, reversed on odd rounds */
	for (int i = 0; i < j->nv; i++) {
		int idx = round % 2 == 0 ? i : j->nv - 1 - i;
		if (run_variant(j, &j->v[idx], round, NULL, NULL))
			return -1;
	}
	return 0;
}

/* Log the splats and lockups of a debug pass's document (its kernel's words). */
static void log_findings(struct job *j, const struct variant *v, const char *doc)
{
	json_t *d = json_loads(doc, 0, NULL), *x;
	size_t i, nsplats = json_array_size(json_object_get(d, "splats"));

	json_array_foreach(json_object_get(d, "splats"), i, x)
	{
		agent_log("info", j->id, "debug pass: %s: splat found: %s", v->name,
		          json_string_value(json_object_get(x, "message")));
	}
	json_array_foreach(json_object_get(d, "runs"), i, x)
	{
		json_t *l = json_object_get(x, "lockup");
		if (json_is_object(l))
			agent_log("info", j->id, "debug pass: %s: lockup at %s: %s", v->name,
			          json_string_value(json_object_get(x, "workload")),
			          json_string_value(json_object_get(l, "message")));
	}
	if (!nsplats)
		agent_log("info", j->id, "debug pass: %s: no splat", v->name);
	json_decref(d);
}

int run_kernel_debug(struct job *j)
{
	agent_log("info", j->id,
	          "debug pass: booting the base and patched debug kernels (lockdep, might_sleep, "
	          "hung tasks) under %s and locktorture %s",
	          j->kdebug_workloads, j->ktypes);
	for (int i = 0; i < 2; i++) {
		char *doc = NULL;
		if (atomic_load(&j->lost) || atomic_load(&j->ag->stop))
			return -1;
		if (run_variant(j, &j->kdebug[i], 0, NULL, &doc))
			return -1;
		log_findings(j, &j->kdebug[i], doc);
		int rc = post_result(j, j->kdebug[i].name, 0, doc);
		free(doc);
		if (rc)
			return -1;
	}
	if (j->more_rounds == 0)
		agent_log("info", j->id,
		          "debug pass: the server ended the job on the patched debug kernel's "
		          "report: no measuring round runs");
	else
		agent_log("info", j->id, "debug pass clean: on to the measuring rounds");
	return 0;
}

int run_pair(struct job *j, const struct variant v[2], int round, char *docs[2])
{
	docs[0] = docs[1] = NULL;
	return run_two(j, v, round, docs);
}
