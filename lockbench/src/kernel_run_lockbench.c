/*
 * kernel_run_lockbench.c - the boot that runs the static lockbench on the
 * guest workloads (kernel_run_internal.h): its deadline, limits and command
 * line, the guest's JSON and lockups collected from the console, and its
 * table rows.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "boot.h"
#include "console.h"
#include "kernel_guest.h"
#include "kernel_run.h"
#include "kernel_run_internal.h"
#include "result.h"
#include "strutil.h"
#include "suite.h"
#include "util.h"

static const char *prog = "lockbench kernel";

/* the users suite's lockbench boots: see kernel_run_main (and suite.c's bands) */
#define USERS_HUNG_S   120
#define USERS_STALL_MS 5000
#define USERS_MEM_MB   1536

/*
 * A lockbench boot's deadline, limits and command line in s->b, for band's
 * users or u (--users, NULL: the suite's); *th gets the guest kernel's
 * lockup thresholds under TCG.  Returns the hung-task timeout it uses.
 */
static int lb_boot_setup(struct run_state *s, const struct suite_band *band, const char *u,
                         const char *label, struct kernel_thresholds *th)
{
	const struct run_args *a = s->a;
	s->b.label = label;
	s->b.end_tag = "LOCKLAB-END";
	/* many users, in any suite: the users suite's allowances (kernel_guest.h) */
	bool many = kernel_many_users(a->suite, band ? band->users : a->users_max);
	s->b.deadline_s = a->timeout_s ? a->timeout_s : band ? band->limit_s : many ? 1500 : 300;
	/* the deadline counts from the guest's last finished point, up to a cap */
	s->b.progress = console_guest_progress;
	boot_cap(s);
	/*
	 * users: 2000 users queue on one kernel mutex, and on an emulated
	 * CPU the last of them waits seconds in D state: the hung-task
	 * timeout and the guest watchdog allow for that (a waiter never
	 * woken still blocks its point's end, which the watchdog reports)
	 */
	int hung_s = a->hung_given || !many ? a->hung_s : USERS_HUNG_S;
	/*
	 * 2000 aim7 users, each its own process with a child in flight,
	 * hold about 0.1 MB each of page tables, kernel stack and anon
	 * memory: 512 MB ran out (the OOM killer) at 2000 users
	 */
	s->b.mem_mb = many ? USERS_MEM_MB : 0;
	int stall_ms = a->stall_ms ? a->stall_ms : many ? USERS_STALL_MS : 0;
	char watch[96] = "";
	if (stall_ms)
		lb_pathf(watch, sizeof(watch), " locklab.stall_ms=%d", stall_ms);
	/*
	 * a point can run longer than the limit without a table line (2000
	 * aim7 users under TCG: 800 s and more): the guest says every
	 * fifth of the limit how far its point got, which is progress
	 */
	size_t wl = strlen(watch);
	lb_pathf(watch + wl, sizeof(watch) - wl, " locklab.progress_s=%d",
	         kernel_progress_s(s->b.deadline_s));
	/*
	 * pid_max: tinyconfig's BASE_SMALL makes it 4096, and 2000 aim7
	 * users each with a child in flight come close to that; threads-max
	 * is an eighth of the memory's worth of kernel stacks, 4096 in 512 MB,
	 * and 2000 users with their children and the kernel's threads pass
	 * it (fork fails with EAGAIN even for root); with thousands of
	 * runnable users on two emulated CPUs, CFS leaves RCU's grace-period
	 * kthread unscheduled past the 21 s stall warning ("kthread starved"):
	 * rcutree.kthread_prio=1 runs it SCHED_FIFO, as on loaded servers (a
	 * CPU stuck with interrupts off is still reported)
	 */
	lb_pathf(s->b.cmdline, sizeof(s->b.cmdline),
	         "%s sysctl.kernel.hung_task_timeout_secs=%d "
	         "sysctl.kernel.hung_task_check_interval_secs=1 sysctl.kernel.pid_max=32768 "
	         "sysctl.kernel.threads-max=32768 rcutree.kthread_prio=1 "
	         "locklab.mode=lockbench locktorture.nwriters_stress=0 locklab.suite=%s "
	         "locklab.workloads=%s locklab.locks=%s%s%s%s",
	         s->common, hung_s, a->suite, a->workloads, a->locks, u ? " locklab.users=" : "",
	         u ? u : "", watch);
	/*
	 * under TCG the kernel's stall, soft lockup and hung-task thresholds
	 * (unless --hung-task-s says) allow for an emulated CPU: at host load
	 * 12-16 a base debug kernel's pipe-mutex boot reported a thread of
	 * lockbench "blocked for more than 3 seconds" on its way out, 1 boot
	 * in 9, and nothing was stuck (docs/kernel.md)
	 */
	bool scale_hung = !a->hung_given;
	kernel_guest_thresholds(true, s->b.deadline_s, hung_s, scale_hung, th);
	kernel_thresholds_cmdline(th, s->b.tcg_cmdline, sizeof(s->b.tcg_cmdline));
	return hung_s;
}

/*
 * What a lockbench boot gave, into s->res: the guest's document's runs, or,
 * when the kernel locked up before it came, the points its console shows
 * finished and the lockup on the point that was running.  Returns how many
 * points were recovered from the console; *running as kernel_recover_boot.
 */
static size_t lb_boot_collect(struct run_state *s, char **lines, size_t n,
                              const struct suite_band *band, const char *u, size_t before,
                              const struct lb_run **running)
{
	const struct run_args *a = s->a;
	char err[1024];
	int lb_rc;
	char *doc = console_guest_json(lines, n, &lb_rc);
	struct strutil_buf ttys1 = STRUTIL_BUF_INIT;
	if (doc && strutil_read_file(s->b.guest_out, &ttys1) == 0 && ttys1.len) {
		free(doc);
		doc = strutil_buf_detach(&ttys1); /* the document came over ttyS1 */
	} else {
		strutil_buf_release(&ttys1);
	}
	if (doc && *doc && result_load_buffer(doc, strlen(doc), &s->guest, err, sizeof(err))) {
		fprintf(stderr, "%s: guest lockbench document unreadable: %s\n", prog, err);
		s->failures++;
	} else if (doc && *doc) {
		kernel_copy_runs(&s->res, &s->guest);
		for (size_t r = before; r < s->res.nruns; r++)
			if (s->res.runs[r].lockup)
				s->lockups++;
	}
	const char *kind;
	char msg[512];
	struct strutil_buf stacks = STRUTIL_BUF_INIT;
	struct console_end end = boot_console_end(&s->b);
	size_t recovered = 0;
	*running = NULL;
	if (console_detect_lockup(lines, n, &end, &kind, msg, sizeof(msg), &stacks) &&
	    (!doc || !*doc)) {
		/*
		 * the kernel hung or died under the guest workloads before their
		 * document came: the points that finished are on the console, the
		 * lockup is the running point's
		 */
		struct kernel_guest_plan g = {.suite = a->suite,
		                              .workloads = a->workloads,
		                              .locks = a->locks,
		                              .users = u,
		                              .band_users = band ? band->users : 0};
		recovered =
		    kernel_recover_boot(&s->res, lines, n, &g, kind, msg, stacks.buf, running);
		for (size_t r = before; r < s->res.nruns; r++)
			if (s->res.runs[r].lockup)
				s->lockups++; /* the running point's, and any the guest reported */
	} else if (kind) {
		/* the guest's document came, then the kernel hung or died */
		struct lb_run *run = result_add_run(&s->res, "lockbench-guest", "kernel");
		run_set_param_str(run, "workloads", a->workloads);
		if (band)
			run_set_param_num(run, "users", band->users);
		run_set_lockup(run, kind, msg, stacks.buf);
		s->lockups++;
	} else if (!doc || !*doc) {
		fprintf(stderr, "%s: the guest lockbench printed no result (rc %d)\n", prog, lb_rc);
		s->failures++;
	} else if (lb_rc != 0 && lb_rc != EXIT_LOCKUP) {
		fprintf(stderr, "%s: the guest lockbench exited %d\n", prog, lb_rc);
		s->failures++;
	}
	strutil_buf_release(&stacks);
	free(doc);
	return recovered;
}

/* A lockbench boot's lines in the table, from its runs from before on. */
static void lb_boot_print(struct run_state *s, char **lines, size_t n, const char *label,
                          const char *said, size_t before, size_t recovered,
                          const struct lb_run *running)
{
	char limit[256];
	boot_deadline_say(&s->b, limit, sizeof(limit));
	fprintf(s->tbl, "boot %d/%d %s: %.1f s (%s, %s; %s)\n", s->nboots, s->nplanned, label,
	        s->b.secs, s->accel == ACCEL_KVM ? "kvm" : "tcg", limit, said);
	for (size_t r = before; r < s->res.nruns; r++)
		print_run_line(s->tbl, &s->res.runs[r]);
	long avail_kb = 0, total_kb = 0;
	size_t nmem = console_guest_memory(lines, n, &avail_kb, &total_kb);
	if (nmem)
		fprintf(s->tbl,
		        "  guest memory: at least %ld of %ld MB available (MemAvailable, %zu "
		        "look(s) 20 s apart; qemu -m %d)\n",
		        avail_kb / 1024, total_kb / 1024, nmem,
		        s->b.mem_mb ? s->b.mem_mb : BOOT_MEM_MB);
	if (running && strcmp(running->workload, "lockbench-guest"))
		fprintf(s->tbl,
		        "  the boot locked up during %s; %zu finished point(s) recovered from "
		        "the guest's table on the console (the mean as printed, no samples)\n",
		        running->workload, recovered);
	else if (recovered)
		fprintf(s->tbl,
		        "  the boot locked up after the guest's points; %zu finished point(s) "
		        "recovered from its table on the console (the mean as printed, no "
		        "samples)\n",
		        recovered);
}

/*
 * One boot of the static lockbench on the guest workloads: band's users, or
 * --users without a band; false when qemu did not start.
 */
bool run_lockbench_boot(struct run_state *s, const struct suite_band *band)
{
	const struct run_args *a = s->a;
	char label[64] = "lockbench", name[64] = "lockbench", users[16];
	const char *u = a->users;
	if (band) {
		lb_pathf(users, sizeof(users), "%d", band->users);
		u = users;
		lb_pathf(label, sizeof(label), "lockbench users=%d", band->users);
		lb_pathf(name, sizeof(name), "lockbench-users-%d", band->users);
	}
	struct kernel_thresholds th;
	int hung_s = lb_boot_setup(s, band, u, label, &th);
	if (boot_with_accel(&s->b, a->kernel, s->initrd, &s->accel, s->tbl)) {
		s->failures++;
		s->qemu_down = true;
		return false;
	}
	if (s->accel == ACCEL_KVM)
		kernel_guest_thresholds(false, s->b.deadline_s, hung_s, false, &th);
	char said[128];
	kernel_thresholds_say(&th, said, sizeof(said));
	if (s->accel == ACCEL_TCG)
		strutil_buf_addf(&s->emulated, "%s%s: %s", s->emulated.len ? "; " : "", label,
		                 said);
	s->nboots++;
	if (a->console_dir)
		save_console(a->console_dir, name, &s->b.console);
	size_t n;
	char **lines = console_lines(s->b.console.buf, &n);
	console_note_guest(&s->res, lines, n, s->accel == ACCEL_KVM ? "KVM" : "TCG");
	size_t before = s->res.nruns;
	const struct lb_run *running;
	size_t recovered = lb_boot_collect(s, lines, n, band, u, before, &running);
	lb_boot_print(s, lines, n, label, said, before, recovered, running);
	s->splats += note_splats(&s->res, lines, n, label, s->tbl);
	fflush(s->tbl);
	free(lines);
	return true;
}
