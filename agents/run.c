/*
 * run.c - the rounds: one variant of one round in the sandbox, a hung run
 * turned into a lockup document with stacks, a failed one retried once when
 * the machine is to blame.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"
#include "elfimage.h"
#include "fsutil.h"
#include "job.h"
#include "log.h"
#include "result.h"
#include "sandbox.h"
#include "spawn.h"
#include "strutil.h"

/*
 * The workloads a duet (or ABBA) runs: single-thread points, which fit half
 * of 2 CPUs.  Lockstep runs hot too: its sides take turns of 1 ms on every
 * CPU (lockbench's --cpus pins only the single-thread points).
 */
#define DUET_WORKLOADS     "uncontended"
#define LOCKSTEP_WORKLOADS "uncontended,hot"

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

/*
 * A document of one lockup of lockbench itself (workload "lockbench" on the
 * job's locks): kind, message and stacks as given.
 */
static char *lockbench_lockup_document(struct job *j, const char *variant, int round,
                                       const char *kind, const char *msg, const char *stacks)
{
	struct lb_result r;
	result_init(&r);
	result_fill_machine(&r);
	r.suite = strdup(j->suite);
	r.variant = strdup(variant);
	r.round = round;
	struct lb_run *run = result_add_run(&r, "lockbench", j->locks[0] ? j->locks : "all");
	run_set_lockup(run, kind, msg, stacks);
	json_t *doc = result_to_json(&r);
	char *text = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
	json_decref(doc);
	result_release(&r);
	return text;
}

/* A document saying lockbench itself hung, with the stacks captured. */
static char *deadline_document(struct job *j, const char *variant, int round, const char *stacks)
{
	char msg[512];
	snprintf(msg, sizeof(msg),
	         "lockbench did not finish within the agent's %d s deadline and was killed",
	         j->ag->cfg.run_timeout_s);
	return lockbench_lockup_document(j, variant, round, "deadline", msg, stacks);
}

/* Whether the file at path holds text. */
static bool log_says(const char *path, const char *text)
{
	char *all = strutil_file_text(path);
	bool yes = all && strstr(all, text);
	free(all);
	return yes;
}

/*
 * A crash of the patched lockbench itself, a finding about the patch: the
 * process died of a signal no one outside sends (not KILL, TERM, XCPU or
 * XFSZ), or exited with a sanitizer's report, while the base's lockbench has
 * run to its end in this job.  Its "why" into why; false when it is none
 * (a crash on both sides, or before the base ran, stays the machine's).
 */
static bool patched_crash(const struct job *j, const struct variant *v,
                          const struct spawn_result *r, const char *log, char *why, size_t len)
{
	static const char *const reports[] = {"ERROR: AddressSanitizer", "ERROR: LeakSanitizer",
	                                      "runtime error:", "WARNING: ThreadSanitizer"};
	int sig = r->status >= 128 ? r->status - 128 : 0;

	if (j->kernel || !j->base_clean || strcmp(v->name, "patched") != 0 || r->timed_out)
		return false;
	if (sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE || sig == SIGABRT ||
	    sig == SIGTRAP || sig == SIGSYS) {
		snprintf(why, len, "lockbench (patched) was killed by signal %d (%s)", sig,
		         strsignal(sig));
		return true;
	}
	for (size_t i = 0; r->status != 0 && r->status != 3 && i < 4; i++)
		if (log_says(log, reports[i])) {
			snprintf(why, len,
			         "lockbench (patched) exited with status %d and a report: %s",
			         r->status, reports[i]);
			return true;
		}
	return false;
}

/*
 * The document of a crash of the patched lockbench: one lockup of kind
 * crash on the job's locks, its message why, its "stacks" the end of the
 * run's output (where a sanitizer or the C library says what happened).
 */
static char *crash_document(struct job *j, const char *variant, int round, const char *why,
                            const char *log)
{
	char *tail = sandbox_tail(log, 40);
	char *text = lockbench_lockup_document(j, variant, round, "crash", why,
	                                       tail && *tail ? tail : "(no output)");
	free(tail);
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

/*
 * Add the runs of the duet (lockstep, ABBA) document at path to doc (both
 * JSON text); their metrics are marked with the instrument that measured
 * them (a duet, lockstep; ABBA samples are timed one side at a time, as
 * the round's are): the agent's word, as "controls" is, whatever the
 * submitted binary wrote.  Returns doc with them (a new string), or NULL
 * when the document cannot be read.
 */
static char *merge_duet(const char *doc, const char *path, const char *instrument)
{
	json_t *d = json_loads(doc, 0, NULL), *du = json_load_file(path, 0, NULL);
	json_t *runs = json_object_get(d, "runs"), *druns = json_object_get(du, "runs");
	char *out = NULL;
	size_t i;
	json_t *run;

	if (!json_is_array(runs) || !json_is_array(druns))
		goto out;
	json_array_foreach(druns, i, run)
	{
		json_t *inst = json_object(), *metrics = json_object_get(run, "metrics");
		const char *name;
		json_t *v;
		json_object_foreach(metrics, name, v)
		{
			json_object_set_new(inst, name, json_string(instrument));
		}
		json_object_set_new(run, "instrument", inst);
		json_array_append(runs, run);
	}
	out = json_dumps(d, JSON_COMPACT);
out:
	json_decref(d);
	json_decref(du);
	return out;
}

/*
 * How this job's single-thread points pair base with patched: a duet (at
 * once, a half of the CPUs each: cfg.duet and 2 CPUs or more), lockstep
 * (turns of 0.5 ms on one CPU: cfg.lockstep), ABBA (a sample a side:
 * cfg.abba), or not at all (each side's run measures them).
 */
enum pairing { PAIR_NONE, PAIR_DUET, PAIR_LOCKSTEP, PAIR_ABBA };

static enum pairing job_pairing(const struct job *j)
{
	const struct agent_cfg *c = &j->ag->cfg;

	if (j->duet_off || j->kernel || j->nv != 2)
		return PAIR_NONE;
	if (c->duet && sysconf(_SC_NPROCESSORS_ONLN) >= 2)
		return PAIR_DUET;
	return c->lockstep ? PAIR_LOCKSTEP : c->abba ? PAIR_ABBA : PAIR_NONE;
}

/* The instrument a pairing's metrics are marked with: the agent's word. */
static const char *pairing_instrument(enum pairing m)
{
	return m == PAIR_DUET       ? LB_INSTRUMENT_DUET
	       : m == PAIR_LOCKSTEP ? LB_INSTRUMENT_LOCKSTEP
	                            : LB_INSTRUMENT_TIMED;
}

/* The workloads the pairing runs paired (the rest run one side at a time). */
static const char *paired_workloads(enum pairing m)
{
	return m == PAIR_LOCKSTEP ? LOCKSTEP_WORKLOADS : DUET_WORKLOADS;
}

/*
 * The command of one variant's round into argv (at most 28 entries): the
 * submission's lockbench run, or, for a kernel job, the trusted lockbench
 * booting the variant's kernel.  rs and budget are the caller's buffers the
 * entries point into.
 */
static bool debug_variant(const struct job *j, const struct variant *v);

static void variant_argv(const struct job *j, const struct variant *v, const char *duet,
                         const char *out, const char *rs, char budget[16], const char *argv[28])
{
	bool debug = debug_variant(j, v);
	int k = 0;

	if (j->kernel) {
		/* boot the variant's kernel; any suite but smoke is the quick one */
		argv[k++] = j->ag->cfg.lockbench;
		argv[k++] = "kernel";
		argv[k++] = "run";
		if (debug)
			argv[k++] = "--debug"; /* lockups and splats, no figures */
		argv[k++] = "--kernel";
		argv[k++] = v->bin;
		argv[k++] = "--suite";
		argv[k++] = strcmp(j->suite, "smoke") ? "quick" : "smoke";
		argv[k++] = "--accel";
		argv[k++] = j->ag->accel;
		/*
		 * A boot that keeps making progress may run past its deadline up
		 * to lockbench's cap; --budget-s ends it before this run's limit
		 * (what the locktorture boots left of it, less 30 s to write the
		 * result), so the limit never cuts short a guest that progresses
		 */
		snprintf(budget, 16, "%d",
		         j->ag->cfg.run_timeout_s > 60 ? j->ag->cfg.run_timeout_s - 30
		                                       : j->ag->cfg.run_timeout_s);
		argv[k++] = "--budget-s";
		argv[k++] = budget;
		/* what the series touches chose (build.c), beside the core */
		if (debug || j->kworkloads[0]) {
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
static bool debug_variant(const struct job *j, const struct variant *v)
{
	return j->kernel && v >= j->kdebug && v < j->kdebug + 2;
}

/*
 * A kernel round's document as posted: `kernel run` names its suite
 * kernel-S, the round belongs to the job's; the code under test is the
 * kernel, so no image; a debug pass's document has its variant's name.  Takes doc; NULL when it
 * does not parse.
 */
static char *kernel_document(struct job *j, const struct variant *v, char *doc)
{
	json_t *d = json_loads(doc, 0, NULL);
	char *t = NULL;

	note_accel(j, doc);
	free(doc);
	if (d)
		json_object_del(d, "image");
	if (d && debug_variant(j, v))
		json_object_set_new(d, "variant", json_string(v->name));
	if (d && !json_object_set_new(d, "suite", json_string(j->suite)))
		t = json_dumps(d, JSON_COMPACT);
	json_decref(d);
	return t;
}

/*
 * A native round's document as posted, from what the submission's
 * lockbench wrote (untrusted): which lock is a control and the image are
 * the agent's word, and a duet's document (duet, or NULL) is merged in.
 * Takes doc; NULL with j->fail_reason when the duet cannot be merged.
 */
static char *native_document(struct job *j, const struct variant *v, int round, char *doc,
                             const char *duet)
{
	json_t *d = json_loads(doc, 0, NULL);
	char image[ELFIMAGE_LEN], ierr[256], *t = NULL;

	/* which lock is a control: set or remove "controls" */
	if (d && j->controls[0])
		json_object_set_new(d, "controls", json_pack("[s]", j->controls));
	else if (d)
		json_object_del(d, "controls");
	/*
	 * So is the image (result.h): one image both sides makes the
	 * comparison an A/A and a no-change, so it is hashed here from the
	 * binary that ran, never taken from what that binary says (once, when
	 * it was kept: variant_image).
	 */
	if (d && variant_image(j, v, image, ierr, sizeof(ierr)) == 0) {
		json_object_set_new(d, "image", json_string(image));
	} else if (d) {
		json_object_del(d, "image");
		agent_log("warn", j->id, "round %d: no image of %s: %s", round, v->name, ierr);
	}
	/* the commit of a pulled range this variant is (result.h): the agent's word too */
	if (d)
		json_object_del(d, "commit");
	if (d && v->label[0] && j->ncommits > 0)
		json_object_set_new(
		    d, "commit", json_pack("{s:s, s:i}", "label", v->label, "range", j->ncommits));
	if (d)
		t = json_dumps(d, JSON_COMPACT);
	if (t) {
		free(doc);
		doc = t;
	} /* else posted as it is: the server says what is wrong with it */
	json_decref(d);
	if (!duet)
		return doc;
	t = merge_duet(doc, duet, pairing_instrument(job_pairing(j)));
	free(doc);
	if (!t)
		snprintf(j->fail_reason, sizeof(j->fail_reason),
		         "%s: cannot merge the duet document %s", INFRA, duet);
	return t;
}

/*
 * What came of one variant's run r: its document to post (a lockup's when
 * the watchdog ended it), or NULL with j->fail_reason set, *retry when the
 * machine, not the submission, failed it.  log: the run's output; out: its
 * document; stacks: where capture_stacks left the hung threads' stacks.
 */
static char *variant_outcome(struct job *j, const struct variant *v, int round,
                             const struct spawn_result *r, const char *log, const char *out,
                             const char *stacks_path, const char *duet, bool *retry)
{
	char msg[256], *doc;

	if (r->timed_out) {
		char *stacks = strutil_file_text(stacks_path);

		doc = deadline_document(j, v->name, round, stacks ? stacks : "");
		free(stacks);
		agent_log("warn", j->id, "round %d: %s hung; posting a lockup", round, v->name);
		return doc;
	}
	if (r->status == 128 + SIGXCPU || r->status == 128 + SIGXFSZ) {
		/* the submission's code went past a limit of the sandbox: its own doing */
		snprintf(msg, sizeof(msg), "lockbench (%s, round %d) went past the sandbox's %s",
		         v->name, round,
		         r->status == 128 + SIGXCPU ? "CPU time limit" : "file size limit");
		fail_with_tail(j, msg, log, 15);
		return NULL;
	}
	if (patched_crash(j, v, r, log, msg, sizeof(msg))) {
		agent_log("warn", j->id, "round %d: %s; the base ran clean: posting a crash", round,
		          msg);
		return crash_document(j, v->name, round, msg, log);
	}
	if (r->status >= 128) {
		/* not the watchdog's kill: the OOM killer, an operator, a limit */
		snprintf(msg, sizeof(msg),
		         "%s: lockbench (%s, round %d) was killed by signal %d (%s)%s", INFRA,
		         v->name, round, r->status - 128, strsignal(r->status - 128),
		         r->status - 128 == SIGKILL ? "; the OOM killer? see dmesg" : "");
		fail_with_tail(j, msg, log, 15);
		*retry = true;
		return NULL;
	}
	if (j->kernel && r->status == 1) {
		/* a boot that qemu could not run (it says why), or a guest with no result */
		fail_with_tail(j,
		               "lockbench kernel run failed: qemu or the guest gave no result "
		               "(infrastructure, not a finding about the patch)",
		               log, 15);
		*retry = true;
		return NULL;
	}
	if (r->status == 1 && log_says(log, "a failure of the machine, not a lockup")) {
		/* a point killed from outside (lockbench's runner says so): a partial round */
		fail_with_tail(j, INFRA ": a benchmark point was killed from outside", log, 15);
		*retry = true;
		return NULL;
	}
	/* 0; 3: lockups inside, still a result; 1: some points failed */
	doc = r->status == 0 || r->status == 3 || r->status == 1 ? strutil_file_text(out) : NULL;
	if (doc && !j->kernel)
		return native_document(j, v, round, doc, duet); /* NULL with its reason */
	if (doc)
		doc = kernel_document(j, v, doc);
	if (!doc)
		fail_with_tail(j, "lockbench failed", log, 15);
	return doc;
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
	                      .wall_s = j->ag->cfg.run_timeout_s,
	                      .lim = job_limits(j, j->ag->cfg.run_timeout_s * 4),
	                      .sandbox = &sb,
	                      .on_deadline = capture_stacks,
	                      .arg = &sa};
	if (j->kernel)
		c.lim.mem_mb = 0;
	agent_log("info", j->id, "round %d: running %s", round, v->name);
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

/* One side of a duet: its command, what came of it. */
struct duet_side {
	struct job *j;
	const struct variant *v;
	const char *argv[32];
	char cpus[32], side[8], out[2100], log[2100], outdir[2048], bindir[1400], rs[24], at[32];
	char turndir[2100];
	struct sandbox_policy sb;
	struct spawn_result r;
	int src;
	char err[512];
};

static void *duet_side_run(void *arg)
{
	struct duet_side *s = arg;
	struct spawn_cmd c = {.argv = s->argv,
	                      .out_path = s->log,
	                      .wall_s = s->j->ag->cfg.run_timeout_s,
	                      .lim = job_limits(s->j, s->j->ag->cfg.run_timeout_s * 4),
	                      .sandbox = &s->sb};
	s->src = spawn_run(&c, &s->r, s->err, sizeof(s->err));
	return NULL;
}

/*
 * argv of one side: the duet's workloads only, starting at the shared
 * instant: a duet pinned to cpus; lockstep pinned to cpus too, as side
 * `side` taking turns through turn (lockbench --lockstep); ABBA as side
 * `side` (each sample in its own slot, lockbench --abba-side).
 */
static int duet_side_init(struct job *j, struct duet_side *s, const struct variant *v, int round,
                          enum pairing mode, const char *cpus, int side, long long at_ns,
                          const char *turn)
{
	int k = 0;
	memset(s, 0, sizeof(*s));
	s->j = j;
	s->v = v;
	snprintf(s->outdir, sizeof(s->outdir), "%s/duet-%s-r%d", j->dir, v->name, round);
	fs_remove_tree(s->outdir);
	if (fs_mkdirs(s->outdir))
		return -1;
	snprintf(s->out, sizeof(s->out), "%s/result.json", s->outdir);
	snprintf(s->log, sizeof(s->log), "%s/duet-%s-r%d.log", j->dir, v->name, round);
	snprintf(s->bindir, sizeof(s->bindir), "%s", v->bin);
	*strrchr(s->bindir, '/') = 0;
	snprintf(s->cpus, sizeof(s->cpus), "%s", cpus);
	snprintf(s->side, sizeof(s->side), "%d", side);
	snprintf(s->rs, sizeof(s->rs), "%d", round);
	snprintf(s->at, sizeof(s->at), "%lld", at_ns);
	s->argv[k++] = v->bin;
	s->argv[k++] = "run";
	s->argv[k++] = "--suite";
	s->argv[k++] = j->suite;
	if (j->locks[0]) {
		s->argv[k++] = "--locks";
		s->argv[k++] = j->locks;
	}
	s->argv[k++] = "--workloads";
	s->argv[k++] = paired_workloads(mode);
	if (mode != PAIR_ABBA) {
		s->argv[k++] = "--cpus";
		s->argv[k++] = s->cpus;
	}
	if (mode == PAIR_ABBA) {
		s->argv[k++] = "--abba-side";
		s->argv[k++] = s->side;
	} else if (mode == PAIR_LOCKSTEP) {
		s->argv[k++] = "--lockstep";
		s->argv[k++] = turn;
		s->argv[k++] = "--lockstep-side";
		s->argv[k++] = s->side;
	}
	s->argv[k++] = "--start-at";
	s->argv[k++] = s->at;
	/* a repeated sample would put the two sides out of step: record only */
	s->argv[k++] = "--disturb-limit";
	s->argv[k++] = "0";
	s->argv[k++] = "--variant";
	s->argv[k++] = v->name;
	s->argv[k++] = "--round";
	s->argv[k++] = s->rs;
	s->argv[k++] = "--json";
	s->argv[k++] = s->out;
	s->argv[k] = NULL;
	job_policy(j, &s->sb);
	sandbox_add(s->sb.writable, s->outdir);
	sandbox_add(s->sb.readable, s->bindir);
	if (mode == PAIR_LOCKSTEP) {
		/* the one file both sides share: the turn */
		snprintf(s->turndir, sizeof(s->turndir), "%s", turn);
		*strrchr(s->turndir, '/') = 0;
		sandbox_add(s->sb.writable, s->turndir);
	}
	s->sb.chdir = s->outdir;
	return 0;
}

/*
 * Run the duet of a round: both variants' single-thread points at once, each
 * on its own half of the CPUs (which half alternates by round), started at
 * one CLOCK_REALTIME instant.  Lockstep instead: both pinned to the last
 * CPU, taking turns of 0.5 ms through a turn file in the job's folder.
 * ABBA: both start at that instant and take turns per sample, A B B A.  In
 * lockstep and ABBA, which variant is side 0 alternates by round.  Fills
 * paths[i] with variant i's document.  Returns 0, or -1 when the duet did
 * not give both documents (the round then runs one side at a time, and so
 * do the job's later rounds).
 */
static int run_duet(struct job *j, const struct variant v[2], int round, char paths[2][2100])
{
	enum pairing mode = job_pairing(j);
	job_activity(j, NULL, "round %d: running %s and %s %s", round, v[0].name, v[1].name,
	             mode == PAIR_LOCKSTEP ? "in lockstep" : "side by side");
	struct duet_side s[2];
	char half[2][32], last[32], turn[2100], dir[2048];
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	struct timespec now;
	pthread_t t;
	int rc = -1;

	snprintf(half[0], sizeof(half[0]), cpus / 2 > 1 ? "0-%ld" : "0", cpus / 2 - 1);
	snprintf(half[1], sizeof(half[1]), cpus - cpus / 2 > 1 ? "%ld-%ld" : "%ld", cpus / 2,
	         cpus - 1);
	snprintf(last, sizeof(last), "%ld", cpus > 1 ? cpus - 1 : 0);
	/* a fresh turn file each round: side 0 takes the first turn */
	snprintf(dir, sizeof(dir), "%s/lockstep-r%d", j->dir, round);
	snprintf(turn, sizeof(turn), "%s/turn", dir);
	if (mode == PAIR_LOCKSTEP) {
		fs_remove_tree(dir);
		if (fs_mkdirs(dir)) {
			snprintf(j->fail_reason, sizeof(j->fail_reason), "%s: cannot create %s: %s",
			         INFRA, dir, strerror(errno));
			return -1;
		}
	}
	clock_gettime(CLOCK_REALTIME, &now);
	/* far enough ahead that both sandboxes are up before it */
	long long at = (long long)now.tv_sec * 1000000000ll + now.tv_nsec + 500000000ll;
	for (int i = 0; i < 2; i++)
		if (duet_side_init(j, &s[i], &v[i], round, mode,
		                   mode == PAIR_DUET ? half[(i + round) % 2] : last,
		                   (i + round) % 2, at, turn)) {
			snprintf(j->fail_reason, sizeof(j->fail_reason), "%s: cannot create %s: %s",
			         INFRA, s[i].outdir, strerror(errno));
			return -1;
		}
	if (mode == PAIR_ABBA)
		agent_log("info", j->id,
		          "round %d: ABBA of %s, a sample a side in turn: %s side %s, %s side %s",
		          round, DUET_WORKLOADS, v[0].name, s[0].side, v[1].name, s[1].side);
	else if (mode == PAIR_LOCKSTEP)
		agent_log("info", j->id,
		          "round %d: lockstep of %s on CPU %s (hot on every CPU), turns of 0.5 ms "
		          "(hot 1 ms, longer past 2 threads a CPU): %s side %s, %s side %s",
		          round, LOCKSTEP_WORKLOADS, last, v[0].name, s[0].side, v[1].name,
		          s[1].side);
	else
		agent_log("info", j->id, "round %d: duet of %s: %s on CPU %s, %s on CPU %s", round,
		          DUET_WORKLOADS, v[0].name, s[0].cpus, v[1].name, s[1].cpus);
	if (pthread_create(&t, NULL, duet_side_run, &s[1])) {
		agent_log("warn", j->id, "round %d: no thread for the duet", round);
		return -1;
	}
	duet_side_run(&s[0]);
	pthread_join(t, NULL);
	rc = 0;
	for (int i = 0; i < 2; i++) {
		/* 0: ran; 3: a lockup inside, still a result */
		bool ok =
		    !s[i].src && !s[i].r.timed_out && (s[i].r.status == 0 || s[i].r.status == 3);
		struct lb_result doc;
		char err[256];
		result_init(&doc);
		if (ok && result_load_file(s[i].out, &doc, err, sizeof(err)))
			ok = false;
		result_release(&doc);
		if (!ok) {
			agent_log(
			    "warn", j->id,
			    "round %d: the duet's (lockstep's, ABBA's) %s side gave no result (%s, "
			    "exit %d; see %s): "
			    "this job's rounds run one side at a time",
			    round, v[i].name, s[i].src ? s[i].err : "ran", s[i].r.status, s[i].log);
			rc = -1;
		}
		snprintf(paths[i], sizeof(paths[i]), "%s", s[i].out);
		spawn_result_release(&s[i].r);
	}
	if (rc)
		j->duet_off = true;
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
