/*
 * kernel_run.c - `lockbench kernel run` (kernel_run.h).
 *
 * run: one qemu boot (boot.c) per locktorture type and writer count
 * (locktorture is built in and runs once per boot from its command line
 * parameters, then powers off after shutdown_secs), and one boot running
 * the static lockbench on the guest workloads.  The serial console is read
 * by console.c: locktorture's figures, the guest's JSON, lockups (hung
 * task, soft lockup, RCU stall, panic, Oops, locktorture failure, or no end
 * by the deadline) and splats (the kernel checkers' reports).  The options
 * are kernel_run_args.c, the lockbench boots kernel_run_lockbench.c.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "boot.h"
#include "console.h"
#include "kernel_guest.h"
#include "kernel_run.h"
#include "kernel_run_internal.h"
#include "report.h"
#include "result.h"
#include "strutil.h"
#include "suite.h"
#include "util.h"

#define EXIT_USAGE 2

static const char *prog = "lockbench kernel";

bool valid_torture_type(const char *t)
{
	static const char *const known[] = {
	    "spin_lock",     "spin_lock_irq", "rw_lock",    "rw_lock_irq",       "mutex_lock",
	    "ww_mutex_lock", "rtmutex_lock",  "rwsem_lock", "percpu_rwsem_lock", NULL};
	for (int i = 0; known[i]; i++)
		if (!strcmp(known[i], t))
			return true;
	return false;
}

int save_console(const char *dir, const char *name, const struct strutil_buf *c)
{
	char path[PATH_MAX];
	lb_pathf(path, sizeof(path), "%s/%s.log", dir, name);
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	if (c->buf)
		fwrite(c->buf, 1, c->len, f);
	return fclose(f);
}

/*
 * Record the boot's splats (console.c) in res, one per key, and say each in
 * the table with the kernel's first line.  Returns how many.
 */
size_t note_splats(struct lb_result *res, char **lines, size_t n, const char *boot, FILE *tbl)
{
	struct console_splats s = {0};
	size_t found = console_find_splats(lines, n, &s);
	for (size_t i = 0; i < s.n; i++) {
		result_add_splat(res, s.v[i].key, s.v[i].message, s.v[i].lines, boot);
		fprintf(tbl, "  SPLAT %s: %s\n", s.v[i].key, s.v[i].message);
	}
	console_splats_release(&s);
	return found;
}

void print_run_line(FILE *tbl, const struct lb_run *run)
{
	char *key = run_params_key(run);
	fprintf(tbl, "%-17s %-12s %-12s", run->workload, run->lock, key ? key : "");
	free(key);
	if (run->lockup) {
		fprintf(tbl, " LOCKUP (%s): %s\n", run->lockup->kind, run->lockup->message);
		return;
	}
	for (size_t i = 0; i < run->nmetrics && i < 3; i++)
		fprintf(tbl, " %s %.4g", run->metrics[i].name, run->metrics[i].value);
	fprintf(tbl, "\n");
}

/*
 * After a users suite's band boots: each workload's figures by AIM7's
 * bands of users, one table a workload (aim7-mix first, as AIM7 reports print it).
 */
static void print_bands(FILE *tbl, const struct lb_result *res, const char *workloads,
                        const char *variant, const struct suite_band *bands, size_t nbands,
                        const bool *booted)
{
	char err[256];
	int n = 0;
	char **names = lb_split_list(workloads, "--workloads", &n, err, sizeof(err));
	struct report_band_row *rows = strutil_xcalloc(nbands, sizeof(*rows));
	for (int pass = 0; pass < 2; pass++) {
		for (int i = 0; names && i < n; i++) {
			bool aim7 = !strcmp(names[i], "aim7-mix");
			if (aim7 != (pass == 0))
				continue;
			const char *unit;
			kernel_band_rows(res, names[i], bands, nbands, booted, rows, &unit);
			char title[192];
			lb_pathf(title, sizeof(title),
			         "%s (%s kernel): by AIM7's bands of users, a boot each", names[i],
			         variant);
			fputc('\n', tbl);
			report_run_bands(tbl, title, unit, rows, nbands);
		}
	}
	free(rows);
	lb_free_list(names);
}

/*
 * The cap of a boot whose deadline follows progress (s->b.deadline_s and
 * progress set): --cap-x times the deadline after the start, and by
 * --budget-s the run's own end (the agent kills the run there and posts a
 * lockup), but never before the deadline counted from the start, the rule
 * without progress.
 */
void boot_cap(struct run_state *s)
{
	const struct run_args *a = s->a;

	s->b.cap_s = s->b.deadline_s * a->cap_x;
	if (a->budget_s) {
		double left = s->t_all + a->budget_s - boot_now_s();
		if (left < s->b.cap_s)
			s->b.cap_s = left > s->b.deadline_s ? left : s->b.deadline_s;
	}
}

/* How a boot ended, as console_detect_lockup reads it. */
struct console_end boot_console_end(const struct boot *b)
{
	return (struct console_end){.ended = b->ended,
	                            .timed_out = b->timed_out,
	                            .secs = b->secs,
	                            .progress_rule = b->cap_s > b->deadline_s,
	                            .capped = b->ended_by == BOOT_DEADLINE_CAP,
	                            .since_progress_s = b->secs - b->last_progress_s};
}

/*
 * One locktorture boot of type at writers writers; one that the deadline
 * ended without a kernel detector's word (console_silent_deadline) is
 * booted once more, and a second silent boot is the lockup.
 */
static void run_torture_boot(struct run_state *s, const char *type, int writers)
{
	const struct run_args *a = s->a;
	char label[128], name[128];
	size_t n;
	char **lines;
	lb_pathf(label, sizeof(label), "locktorture %s writers=%d", type, writers);
	lb_pathf(name, sizeof(name), "locktorture-%s-w%d", type, writers);
	for (int attempt = 0;; attempt++) {
		s->b.label = label;
		s->b.end_tag = "End of test:";
		s->b.tcg_cmdline[0] = 0; /* seconds of torture: the kernel's own thresholds */
		s->b.deadline_s = a->timeout_s ? a->timeout_s : a->torture_s + 60;
		/*
		 * The deadline counts from the console's last line, up to the cap:
		 * a debug kernel under TCG on a loaded host boots slowly but
		 * prints as it goes, then locktorture a line a second; a kernel
		 * that is stuck says so through its detectors, or falls silent
		 * (docs/kernel.md)
		 */
		s->b.progress = console_torture_progress;
		boot_cap(s);
		lb_pathf(s->b.cmdline, sizeof(s->b.cmdline),
		         "%s sysctl.kernel.hung_task_timeout_secs=%d "
		         "sysctl.kernel.hung_task_check_interval_secs=1 locklab.mode=torture "
		         "locktorture.torture_type=%s locktorture.nwriters_stress=%d "
		         "locktorture.stat_interval=1 locktorture.shutdown_secs=%d "
		         "locktorture.stutter=0 locktorture.verbose=0",
		         s->common, a->hung_s, type, writers, a->torture_s);
		if (boot_with_accel(&s->b, a->kernel, s->initrd, &s->accel, s->tbl)) {
			s->failures++;
			s->qemu_down = true; /* twice in a row: the rest would fail alike */
			return;
		}
		s->nboots++;
		if (a->console_dir) {
			char kept[160];
			lb_pathf(kept, sizeof(kept), "%s%s", name, attempt ? "-again" : "");
			save_console(a->console_dir, kept, &s->b.console);
		}
		lines = console_lines(s->b.console.buf, &n);
		if (attempt || !console_silent_deadline(lines, n, s->b.ended, s->b.timed_out))
			break;
		fprintf(s->tbl,
		        "boot %d/%d %s: %.1f s (%s): no end of test and no kernel detector spoke "
		        "(longest wait for a line %.0f s): booting it once more\n",
		        s->nboots, s->nplanned, label, s->b.secs,
		        s->accel == ACCEL_KVM ? "kvm" : "tcg", s->b.longest_wait_s);
		fflush(s->tbl);
		s->nplanned++;
		free(lines);
	}
	if (s->accel == ACCEL_TCG && !s->torture_said) {
		struct kernel_thresholds th;
		char said[128];
		kernel_guest_thresholds(false, s->b.deadline_s, a->hung_s, false, &th);
		kernel_thresholds_say(&th, said, sizeof(said));
		strutil_buf_addf(&s->emulated, "%slocktorture boots: %s",
		                 s->emulated.len ? "; " : "", said);
		s->torture_said = true;
	}
	struct lb_run *run = result_add_run(&s->res, "locktorture", type);
	run_set_param_num(run, "writers", writers);
	console_note_guest(&s->res, lines, n, s->accel == ACCEL_KVM ? "KVM" : "TCG");
	const char *kind;
	char msg[512];
	struct strutil_buf stacks = STRUTIL_BUF_INIT;
	struct console_end end = boot_console_end(&s->b);
	if (console_detect_lockup(lines, n, &end, &kind, msg, sizeof(msg), &stacks)) {
		run_set_lockup(run, kind, msg, stacks.buf);
		s->lockups++;
	} else {
		console_add_torture_metrics(run, lines, n, "Writes:", "writes_per_sec", "writes/s",
		                            1, a->torture_s);
		console_add_torture_metrics(run, lines, n, "Reads :", "reads_per_sec", "reads/s", 1,
		                            a->torture_s);
		if (!run->nmetrics) {
			fprintf(stderr, "%s: %s: no locktorture statistics on the console\n", prog,
			        label);
			s->failures++;
		}
	}
	fprintf(s->tbl, "boot %d/%d %s: %.1f s (%s)\n", s->nboots, s->nplanned, label, s->b.secs,
	        s->accel == ACCEL_KVM ? "kvm" : "tcg");
	print_run_line(s->tbl, run);
	s->splats += note_splats(&s->res, lines, n, label, s->tbl);
	fflush(s->tbl);
	strutil_buf_release(&stacks);
	free(lines);
}

/*
 * Before the boots: the guest's initramfs in tmpdir (PATH_MAX, "" until
 * made), the console folder, the build document's runs and the boots'
 * common command line.  0, or -1 with the reason said.
 */
static int run_prepare(struct run_state *s, struct lb_result *build, char *tmpdir)
{
	const struct run_args *a = s->a;
	char err[1024], guest_dir[PATH_MAX];

	s->accel = !strcmp(a->accel_name, "kvm")   ? ACCEL_KVM
	           : !strcmp(a->accel_name, "tcg") ? ACCEL_TCG
	                                           : ACCEL_AUTO;
	if (a->guest_dir)
		lb_pathf(guest_dir, sizeof(guest_dir), "%s", a->guest_dir);
	else
		lb_exe_dir(guest_dir, sizeof(guest_dir));
	if (a->console_dir && mkdir(a->console_dir, 0755) && errno != EEXIST) {
		fprintf(stderr, "%s: cannot create %s: %s\n", prog, a->console_dir,
		        strerror(errno));
		return -1;
	}
	if (a->build_json && result_load_file(a->build_json, build, err, sizeof(err))) {
		fprintf(stderr, "%s: %s: %s\n", prog, a->build_json, err);
		return -1;
	}
	lb_pathf(tmpdir, PATH_MAX, "%s/lockbench-kernel.XXXXXX",
	         getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(tmpdir)) {
		fprintf(stderr, "%s: cannot create a temporary folder: %s\n", prog,
		        strerror(errno));
		tmpdir[0] = 0;
		return -1;
	}
	lb_pathf(s->initrd, sizeof(s->initrd), "%s/initramfs.cpio", tmpdir);
	if (boot_make_initramfs(guest_dir, s->initrd))
		return -1;

	s->b.cpus = a->cpus;
	lb_pathf(s->b.guest_out, sizeof(s->b.guest_out), "%s/ttyS1.out", tmpdir);
	lb_pathf(s->b.qemu_log, sizeof(s->b.qemu_log), "%s/qemu.err", tmpdir);
	result_fill_machine(&s->res);
	char suite_name[64];
	lb_pathf(suite_name, sizeof(suite_name), "kernel-%s%s", a->debug ? "debug-" : "", a->suite);
	s->res.suite = strutil_xstrdup(suite_name);
	s->res.variant = strutil_xstrdup(a->variant);
	s->res.round = a->round;
	kernel_copy_runs(&s->res, build);
	s->tbl = a->json && !strcmp(a->json, "-") ? stderr : stdout;
	char tsc[64] = "";
	long khz = boot_host_tsc_khz();
	if (khz > 0)
		lb_pathf(tsc, sizeof(tsc), " tsc_early_khz=%ld", khz);
	lb_pathf(s->common, sizeof(s->common),
	         "console=ttyS0 loglevel=7 panic=-1 nokaslr tsc=reliable%s%s%s", tsc,
	         a->extra ? " " : "", a->extra ? a->extra : "");
	return 0;
}

/*
 * After the boots: the notes under the table, the document, the summary
 * line; the exit status.
 */
static int run_finish(struct run_state *s)
{
	const struct run_args *a = s->a;
	char err[1024];

	/*
	 * a debug kernel (lockdep, DEBUG_MUTEXES, might_sleep) runs for
	 * correctness only: its figures were checked above, not recorded
	 */
	for (size_t r = 0; a->debug && r < s->res.nruns; r++)
		run_clear_metrics(&s->res.runs[r]);
	if (s->accel == ACCEL_TCG) {
		fprintf(s->tbl, "%s\n", report_emulated_note);
		if (s->emulated.len) {
			s->res.machine.guest_thresholds = strutil_xstrdup(s->emulated.buf);
			fprintf(s->tbl, "%s%s\n", report_thresholds_lead, s->emulated.buf);
		}
	}
	if (a->debug)
		fputs("debug kernel: figures above are for correctness only and are not recorded\n",
		      s->tbl);
	if (s->qemu_down && s->nplanned - s->nboots - s->failures > 0)
		fprintf(s->tbl, "qemu failed twice: %d planned boots not run\n",
		        s->nplanned - s->nboots - s->failures);
	if (a->json && result_write_file(&s->res, a->json, err, sizeof(err))) {
		fprintf(stderr, "%s: %s\n", prog, err);
		return 1;
	}
	fprintf(s->tbl, "%d boots, %zu runs, %d locked up, %zu splats, %d failed, %.1f s\n",
	        s->nboots, s->res.nruns, s->lockups, s->splats, s->failures,
	        boot_now_s() - s->t_all);
	return s->failures ? 1 : s->lockups ? EXIT_LOCKUP : 0;
}

int kernel_run_main(int argc, char **argv)
{
	struct run_args a = {.suite = "smoke",
	                     .variant = "base",
	                     .accel_name = "auto",
	                     .workloads = "futex-wake,futex-hash,vfs-creat-unlink,hot",
	                     .locks = "pthread,kmutex",
	                     .hung_s = 3,
	                     .cap_x = BOOT_CAP_X,
	                     .cpus = 2};
	struct run_state st = {.a = &a, .accel = ACCEL_AUTO, .emulated = STRUTIL_BUF_INIT};
	struct run_state *s = &st;
	struct lb_result build;
	char tmpdir[PATH_MAX] = "";
	int rc;
	bool *booted = NULL; /* per band: its boot ran */

	s->t_all = boot_now_s();
	result_init(&s->res);
	result_init(&s->guest);
	result_init(&build);
	rc = run_parse(argc, argv, &a);
	if (rc >= 0)
		goto out;
	rc = 1;
	if (run_prepare(s, &build, tmpdir))
		goto out;
	/* users without --users: a boot per band, each at its one user count */
	const struct suite_band *bands = NULL;
	size_t nbands = a.users ? 0 : suite_bands(a.suite, &bands);
	int nlb = a.no_lockbench ? 0 : nbands ? (int)nbands : 1;
	s->nplanned = (a.no_torture ? 0 : a.ntypes * a.nwriters) + nlb;
	booted = strutil_xcalloc(nbands ? nbands : 1, sizeof(bool));

	for (int i = 0; !a.no_torture && !s->qemu_down && i < a.ntypes; i++)
		for (int k = 0; k < a.nwriters && !s->qemu_down; k++)
			run_torture_boot(s, a.types[i], a.writers[k]);
	for (int bi = 0; bi < nlb && !s->qemu_down; bi++)
		booted[bi] = run_lockbench_boot(s, nbands ? &bands[bi] : NULL);
	/* the tables by band, once a band booted (else the last lines say why none did) */
	bool any = false;
	for (size_t bi = 0; bi < nbands; bi++)
		any = any || booted[bi];
	if (any)
		print_bands(s->tbl, &s->res, a.workloads, a.variant, bands, nbands, booted);
	rc = run_finish(s);
out:
	if (tmpdir[0]) {
		unlink(s->initrd);
		unlink(s->b.guest_out);
		unlink(s->b.qemu_log);
		rmdir(tmpdir);
	}
	free(booted);
	strutil_buf_release(&s->emulated);
	strutil_buf_release(&s->b.console);
	lb_free_list(a.types);
	free(a.writers);
	result_release(&build);
	result_release(&s->guest);
	result_release(&s->res);
	return rc;
}
