/*
 * run_document.c - what a variant's run becomes (run_internal.h): its
 * document as posted (native or kernel), or a lockup, deadline or crash
 * document with the hung threads' stacks, and the outcome that says
 * whether to retry.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "elfimage.h"
#include "job.h"
#include "log.h"
#include "result.h"
#include "run_internal.h"
#include "sandbox.h"
#include "spawn.h"
#include "strutil.h"

void capture_stacks(pid_t pid, void *arg)
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
	         job_run_timeout(j));
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

/* The commit of a pulled range this variant is (result.h): the agent's word too. */
static void document_commit(const struct job *j, const struct variant *v, json_t *d)
{
	if (d)
		json_object_del(d, "commit");
	if (d && v->label[0] && j->ncommits > 0)
		json_object_set_new(
		    d, "commit", json_pack("{s:s, s:i}", "label", v->label, "range", j->ncommits));
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
	document_commit(j, v, d);
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
	document_commit(j, v, d);
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
char *variant_outcome(struct job *j, const struct variant *v, int round,
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
