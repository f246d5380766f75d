/*
 * boot.c - the initramfs and the qemu boots of `lockbench kernel run`
 * (boot.h).
 */
#include "boot.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "console.h"
#include "util.h"

/* a KVM guest that prints nothing this long is taken as hung: use TCG */
#define KVM_PROBE_MS 5000

static const char *prog = "lockbench kernel";

double boot_now_s(void)
{
	return (double)lb_now_ns() / 1e9;
}

/* ---- initramfs ------------------------------------------------------ */

static void cpio_entry(struct strutil_buf *b, const char *name, unsigned mode, unsigned rmaj,
                       unsigned rmin, const char *data, size_t len)
{
	static unsigned ino = 1;
	static const char zeros[4];
	size_t namesize = strlen(name) + 1;
	strutil_buf_addf(b, "070701%08X%08X%08X%08X%08X%08X%08zX%08X%08X%08X%08X%08zX%08X", ino++,
	                 mode, 0u, 0u, 1u, 0u, len, 0u, 0u, rmaj, rmin, namesize, 0u);
	strutil_buf_addlen(b, name, namesize);
	strutil_buf_addlen(b, zeros, (4 - (110 + namesize) % 4) % 4);
	if (len) {
		strutil_buf_addlen(b, data, len);
		strutil_buf_addlen(b, zeros, (4 - len % 4) % 4);
	}
}

/*
 * Write an uncompressed newc initramfs with /init and /lockbench (tinyconfig
 * has no decompressor) and a /dev/console node, so init has a console before
 * devtmpfs is mounted.
 */
int boot_make_initramfs(const char *guest_dir, const char *path)
{
	char p[PATH_MAX + 32];
	struct strutil_buf init = STRUTIL_BUF_INIT, lb = STRUTIL_BUF_INIT, out = STRUTIL_BUF_INIT;
	int rc = -1;

	lb_pathf(p, sizeof(p), "%s/locklab-init", guest_dir);
	if (strutil_read_file(p, &init)) {
		fprintf(stderr, "%s: cannot read %s (run make)\n", prog, p);
		goto out;
	}
	lb_pathf(p, sizeof(p), "%s/lockbench-static", guest_dir);
	if (strutil_read_file(p, &lb)) {
		fprintf(stderr, "%s: cannot read %s (run make)\n", prog, p);
		goto out;
	}
	static const char *const dirs[] = {"dev", "proc", "sys", "tmp", "root", NULL};
	for (int i = 0; dirs[i]; i++)
		cpio_entry(&out, dirs[i], S_IFDIR | 0755, 0, 0, NULL, 0);
	cpio_entry(&out, "dev/console", S_IFCHR | 0600, 5, 1, NULL, 0);
	cpio_entry(&out, "init", S_IFREG | 0755, 0, 0, init.buf, init.len);
	cpio_entry(&out, "lockbench", S_IFREG | 0755, 0, 0, lb.buf, lb.len);
	cpio_entry(&out, "TRAILER!!!", 0, 0, 0, NULL, 0);
	FILE *f = fopen(path, "w");
	if (!f || fwrite(out.buf, 1, out.len, f) != out.len) {
		fprintf(stderr, "%s: cannot write %s: %s\n", prog, path, strerror(errno));
		if (f)
			fclose(f);
		goto out;
	}
	if (fclose(f)) {
		fprintf(stderr, "%s: cannot write %s: %s\n", prog, path, strerror(errno));
		goto out;
	}
	rc = 0;
out:
	strutil_buf_release(&init);
	strutil_buf_release(&lb);
	strutil_buf_release(&out);
	return rc;
}

/* ---- the deadline --------------------------------------------------- */

double boot_deadline_at(double limit_s, double cap_s, double last_progress_s,
                        enum boot_deadline_why *why)
{
	double cap = cap_s > limit_s ? cap_s : limit_s;
	double quiet = last_progress_s + limit_s;
	*why = quiet < cap ? BOOT_DEADLINE_NO_PROGRESS : BOOT_DEADLINE_CAP;
	return quiet < cap ? quiet : cap;
}

void boot_clock_init(struct boot_clock *c, double limit_s, double cap_s, bool follows,
                     double probe_s)
{
	*c = (struct boot_clock){.limit_s = limit_s,
	                         .cap_s = follows ? cap_s : 0,
	                         .probe_s = probe_s,
	                         .follows = follows,
	                         .lockup_s = -1,
	                         .end_s = -1};
}

void boot_clock_line(struct boot_clock *c, double t, unsigned what)
{
	if ((what & BOOT_LINE_LOCKUP) && c->lockup_s < 0)
		c->lockup_s = t;
	if ((what & BOOT_LINE_END) && c->end_s < 0)
		c->end_s = t;
	if ((what & BOOT_LINE_PROGRESS) && c->follows) {
		if (t - c->last_progress_s > c->longest_wait_s)
			c->longest_wait_s = t - c->last_progress_s;
		c->last_progress_s = t;
	}
}

double boot_clock_until(struct boot_clock *c, bool printed)
{
	double until = boot_deadline_at(c->limit_s, c->cap_s, c->last_progress_s, &c->why);
	if (c->lockup_s >= 0 && c->lockup_s + BOOT_LOCKUP_GRACE_S < until)
		until = c->lockup_s + BOOT_LOCKUP_GRACE_S;
	if (c->end_s >= 0 && c->end_s + BOOT_END_GRACE_S < until)
		until = c->end_s + BOOT_END_GRACE_S; /* the end marker came; power-off is near */
	if (c->probe_s > 0 && !printed && c->probe_s < until)
		until = c->probe_s;
	return until;
}

bool boot_clock_expired(struct boot_clock *c, double now, bool printed)
{
	if (now < boot_clock_until(c, printed))
		return false;
	if (c->probe_s > 0 && !printed) {
		c->no_output = true;
	} else if (c->lockup_s < 0 && c->end_s < 0) {
		/* only the deadline was left: why says which half */
		c->timed_out = true;
		c->ended_by = c->why;
	}
	return true;
}

void boot_clock_finish(struct boot_clock *c, double secs)
{
	if (c->follows && secs - c->last_progress_s > c->longest_wait_s)
		c->longest_wait_s = secs - c->last_progress_s;
}

enum boot_deadline_why boot_deadline_replay(const double *t, size_t n, double limit_s, double cap_s,
                                            double *end_s, double *last_s, size_t *seen,
                                            double *longest_s)
{
	struct boot_clock c;
	size_t k = 0;
	double now;
	boot_clock_init(&c, limit_s, cap_s, true, 0);
	/* as boot_run: it wakes at the next line or when the wait ends */
	for (;;) {
		double until = boot_clock_until(&c, true);
		now = k < n && t[k] < until ? t[k] : until;
		if (boot_clock_expired(&c, now, true))
			break;
		boot_clock_line(&c, now, BOOT_LINE_PROGRESS);
		k++;
	}
	boot_clock_finish(&c, now);
	*end_s = now;
	*last_s = c.last_progress_s;
	*seen = k;
	*longest_s = c.longest_wait_s;
	return c.ended_by;
}

void boot_deadline_say(const struct boot *b, char *out, size_t len)
{
	bool rule = b->progress && b->cap_s > b->deadline_s;
	struct strutil_buf s = STRUTIL_BUF_INIT;
	strutil_buf_addf(&s, "limit %.0f s", b->deadline_s);
	if (rule)
		strutil_buf_addf(&s, " without progress (longest wait %.0f s), cap %.0f s",
		                 b->longest_wait_s, b->cap_s);
	if (b->timed_out && rule && b->ended_by == BOOT_DEADLINE_CAP)
		strutil_buf_addf(&s, "; ended by the cap, last progress %.0f s before",
		                 b->secs - b->last_progress_s);
	else if (b->timed_out && rule)
		strutil_buf_addf(&s, "; ended by no progress for %.0f s",
		                 b->secs - b->last_progress_s);
	lb_pathf(out, len, "%s", s.buf);
	strutil_buf_release(&s);
}

/* ---- booting -------------------------------------------------------- */

/*
 * End qemu.  Returns true when it had already ended by itself, with its wait
 * status in *status; false when it had to be killed here.
 */
static bool end_qemu(pid_t pid, int *status)
{
	*status = 0;
	if (waitpid(pid, status, WNOHANG) == pid)
		return true;
	kill(pid, SIGKILL);
	while (waitpid(pid, status, 0) < 0 && errno == EINTR)
		;
	return false;
}

/* qemu's stderr, last lines first cut to fit, on one line each "; "-joined. */
static void qemu_words(const char *log, char *out, size_t len)
{
	struct strutil_buf e = STRUTIL_BUF_INIT;
	out[0] = 0;
	if (strutil_read_file(log, &e) || !e.len) {
		strutil_buf_release(&e);
		return;
	}
	while (e.len && (e.buf[e.len - 1] == '\n' || e.buf[e.len - 1] == '\r'))
		e.buf[--e.len] = 0;
	const char *from = e.buf;
	if (e.len > len - 1)
		from = e.buf + e.len - (len - 1); /* the end says why it stopped */
	size_t k = 0;
	for (const char *c = from; *c && k + 3 < len; c++) {
		if (*c == '\n') {
			out[k++] = ';';
			out[k++] = ' ';
		} else if (*c != '\r') {
			out[k++] = *c;
		}
	}
	out[k] = 0;
	strutil_buf_release(&e);
}

/*
 * Boot once; the console (ttyS0, the guest's words only) goes to b->console
 * and qemu's own stderr to b->qemu_log.  Ends qemu on "reboot: Power down",
 * BOOT_LOCKUP_GRACE_S after a lockup report, or at the deadline
 * (boot_deadline_at: b->deadline_s after the last line b->progress takes,
 * or b->cap_s after the start).
 * probe_ms > 0: give up (b->no_output) when nothing is printed that long.
 *
 * Returns 0 when the guest ran and its console is to be read (a lockup the
 * guest reported counts even when qemu then died), or -1 when qemu failed:
 * it could not start, it exited non-zero or on a signal, or it printed
 * nothing of the guest's by the deadline.  b->qemu_error says why, in
 * qemu's words when it said any.  A qemu failure is the machine's, never a
 * finding about the kernel under test.
 */
/*
 * Start qemu on kernel and initrd with b's command line, its console on
 * outfd and its own stderr on errfd.  Returns its pid, or -1 with
 * b->qemu_error set.
 */
static pid_t boot_start_qemu(struct boot *b, const char *kernel, const char *initrd,
                             enum accel accel, int outfd, int errfd)
{
	char serial2[PATH_MAX + 8];
	lb_pathf(serial2, sizeof(serial2), "file:%s", b->guest_out);
	/* one CPU per socket: SeaBIOS's MP table lists only the first CPU of a socket */
	char smp[64], mem[16];
	lb_pathf(smp, sizeof(smp), "%d,sockets=%d,cores=1,threads=1", b->cpus, b->cpus);
	lb_pathf(mem, sizeof(mem), "%d", b->mem_mb > 0 ? b->mem_mb : BOOT_MEM_MB);
	/* the guest's init tells its lockbench whether the CPU is emulated */
	char append[sizeof(b->cmdline) + sizeof(b->tcg_cmdline) + 48];
	bool tcg_args = accel != ACCEL_KVM && b->tcg_cmdline[0];
	/*
	 * no_timer_check under TCG: the IO-APIC timer check counts timer ticks
	 * over a short busy wait at boot, and an emulated CPU on a loaded host
	 * can see none ("Kernel panic - not syncing: IO-APIC + timer doesn't
	 * work!", seen at host load 12)
	 */
	lb_pathf(append, sizeof(append), "%s%s%s%s locklab.accel=%s", b->cmdline,
	         tcg_args ? " " : "", tcg_args ? b->tcg_cmdline : "",
	         accel == ACCEL_KVM ? "" : " no_timer_check", accel == ACCEL_KVM ? "kvm" : "tcg");
	char *argv[] = {"qemu-system-x86_64",
	                "-accel",
	                accel == ACCEL_KVM ? "kvm" : "tcg",
	                "-cpu",
	                accel == ACCEL_KVM ? "host" : "max",
	                "-m",
	                mem,
	                "-smp",
	                smp,
	                "-no-reboot",
	                "-nodefaults",
	                "-no-user-config",
	                "-display",
	                "none",
	                "-monitor",
	                "none",
	                "-serial",
	                "stdio",
	                "-serial",
	                serial2,
	                "-kernel",
	                (char *)kernel,
	                "-initrd",
	                (char *)initrd,
	                "-append",
	                append,
	                NULL};
	pid_t pid = fork();
	if (pid < 0) {
		snprintf(b->qemu_error, sizeof(b->qemu_error), "fork: %s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		int in = open("/dev/null", O_RDONLY);
		if (in >= 0)
			dup2(in, 0);
		dup2(outfd, 1);
		dup2(errfd, 2);
		setpgid(0, 0);
		execvp(argv[0], argv);
		fprintf(stderr, "cannot run qemu-system-x86_64: %s\n", strerror(errno));
		_exit(127);
	}
	return pid;
}

/*
 * Read qemu's console from fd into b->console until the guest powers off,
 * qemu closes it, or clk says the boot is over.  True when the guest
 * powered off.
 */
static bool boot_read_console(struct boot *b, int fd, struct boot_clock *clk, double start)
{
	size_t scanned = 0;
	bool powered_off = false;

	for (;;) {
		double now = boot_now_s() - start;
		if (boot_clock_expired(clk, now, b->console.len > 0))
			break;
		struct pollfd p = {.fd = fd, .events = POLLIN};
		int ms = (int)((boot_clock_until(clk, b->console.len > 0) - now) * 1000) + 1;
		int n = poll(&p, 1, ms);
		if (n < 0 && errno != EINTR)
			break;
		if (n <= 0)
			continue;
		char tmp[8192];
		ssize_t got = read(fd, tmp, sizeof(tmp));
		if (got <= 0)
			break; /* qemu exited: panic=-1 with -no-reboot, or an error */
		strutil_buf_addlen(&b->console, tmp, (size_t)got);
		/* look at each new complete line */
		for (;;) {
			char *nl = memchr(b->console.buf + scanned, '\n', b->console.len - scanned);
			if (!nl)
				break;
			*nl = 0;
			const char *line = b->console.buf + scanned;
			/* no ACPI: qemu stays up after the guest powers off or halts */
			if (strstr(line, "reboot: Power down") ||
			    strstr(line, "reboot: System halted"))
				powered_off = true;
			unsigned what = 0;
			if (clk->lockup_s < 0 && console_lockup_kind(line))
				what |= BOOT_LINE_LOCKUP;
			if (strstr(line, b->end_tag))
				what |= BOOT_LINE_END;
			if (b->progress && b->progress(line))
				what |= BOOT_LINE_PROGRESS;
			boot_clock_line(clk, boot_now_s() - start, what);
			*nl = '\n';
			scanned = (size_t)(nl - b->console.buf) + 1;
		}
		if (powered_off)
			return true;
	}
	return powered_off;
}

/*
 * Why qemu failed, in b->qemu_error (left empty when it did not): it ended
 * by itself on a signal or with a non-zero status, or showed nothing of the
 * guest's.
 */
static void boot_qemu_failure(struct boot *b, enum accel accel, int status, bool by_itself,
                              const struct boot_clock *clk, double start)
{
	char words[768];
	qemu_words(b->qemu_log, words, sizeof(words));
	/*
	 * The guest's reboot or power-off ends qemu with 0 (-no-reboot).  qemu
	 * ending any other way by itself is qemu failing (an assertion, a
	 * signal, a bad option, the OOM killer); so is a deadline or a probe
	 * with nothing of the guest's on the console.
	 */
	if (by_itself && WIFSIGNALED(status))
		snprintf(b->qemu_error, sizeof(b->qemu_error),
		         "qemu-system-x86_64 (-accel %s) was killed by signal %d (%s)%s%s",
		         accel == ACCEL_KVM ? "kvm" : "tcg", WTERMSIG(status),
		         strsignal(WTERMSIG(status)), *words ? ": " : "", words);
	else if (by_itself && WIFEXITED(status) && WEXITSTATUS(status) != 0)
		snprintf(b->qemu_error, sizeof(b->qemu_error),
		         "qemu-system-x86_64 (-accel %s) exited with status %d%s%s",
		         accel == ACCEL_KVM ? "kvm" : "tcg", WEXITSTATUS(status),
		         *words ? ": " : "", words);
	else if (b->console.len == 0 && !clk->no_output)
		snprintf(b->qemu_error, sizeof(b->qemu_error),
		         "qemu-system-x86_64 (-accel %s) showed no guest output in %.0f s%s%s",
		         accel == ACCEL_KVM ? "kvm" : "tcg", boot_now_s() - start,
		         *words ? ": " : "", words);
}

int boot_run(struct boot *b, const char *kernel, const char *initrd, enum accel accel, int probe_ms)
{
	int pfd[2] = {-1, -1}, rc = -1, status = 0;
	pid_t pid = -1;
	double start = boot_now_s();
	bool powered_off = false, by_itself = false;
	struct boot_clock clk;

	b->console.len = 0;
	if (b->console.buf)
		b->console.buf[0] = 0;
	b->qemu_error[0] = 0;
	/* no progress rule: the deadline counts from the start alone */
	boot_clock_init(&clk, b->deadline_s, b->cap_s, b->progress != NULL,
	                probe_ms > 0 ? probe_ms / 1000.0 : 0);
	if (pipe2(pfd, O_CLOEXEC)) {
		snprintf(b->qemu_error, sizeof(b->qemu_error), "pipe: %s", strerror(errno));
		goto out;
	}
	unlink(b->guest_out);
	int errfd = open(b->qemu_log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (errfd < 0) {
		snprintf(b->qemu_error, sizeof(b->qemu_error), "cannot create %.400s: %s",
		         b->qemu_log, strerror(errno));
		goto out;
	}
	pid = boot_start_qemu(b, kernel, initrd, accel, pfd[1], errfd);
	close(errfd);
	if (pid < 0)
		goto out;
	close(pfd[1]);
	pfd[1] = -1;
	powered_off = boot_read_console(b, pfd[0], &clk, start);
	if (!powered_off && clk.lockup_s < 0 && clk.end_s < 0 && !clk.timed_out && !clk.no_output)
		usleep(100 * 1000); /* qemu closed its output: let it finish exiting */
	by_itself = end_qemu(pid, &status);
	pid = -1;
	boot_qemu_failure(b, accel, status, by_itself, &clk, start);
	/* a report the guest made before qemu died is still the guest's report */
	rc = b->qemu_error[0] && clk.lockup_s < 0 ? -1 : 0;
out:
	if (pid > 0)
		end_qemu(pid, &status);
	b->secs = boot_now_s() - start;
	boot_clock_finish(&clk, b->secs);
	b->ended = clk.end_s >= 0;
	b->reported = clk.lockup_s >= 0;
	b->timed_out = clk.timed_out;
	b->no_output = clk.no_output;
	b->ended_by = clk.ended_by;
	b->last_progress_s = clk.last_progress_s;
	b->longest_wait_s = clk.longest_wait_s;
	if (pfd[0] >= 0)
		close(pfd[0]);
	if (pfd[1] >= 0)
		close(pfd[1]);
	return rc;
}

/*
 * The host's TSC rate in kHz, measured against CLOCK_MONOTONIC over 50 ms;
 * 0 when unknown.  A TCG or KVM guest's TSC ticks at the host's rate.  The
 * guest is told (tsc_early_khz=) because, with no ACPI and so no HPET, its
 * only reference is the PIT, and that calibration fails on a busy host: the
 * kernel then drops the TSC, its clock becomes jiffies (4 ms steps) and
 * mdelay() (locktorture's hold times) is miscalibrated.
 */
long boot_host_tsc_khz(void)
{
#if defined(__x86_64__)
	unsigned lo, hi;
	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	uint64_t c0 = ((uint64_t)hi << 32) | lo, t0 = lb_now_ns();
	struct timespec d = {0, 50 * 1000 * 1000};
	while (nanosleep(&d, &d) && errno == EINTR)
		;
	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	uint64_t c1 = ((uint64_t)hi << 32) | lo, t1 = lb_now_ns();
	if (t1 <= t0 || c1 <= c0)
		return 0;
	return (long)((double)(c1 - c0) / (double)(t1 - t0) * 1e6);
#else
	return 0;
#endif
}

/*
 * Boot b, choosing the accelerator on the first boot of a run: KVM when
 * asked, or (auto) when /dev/kvm opens and a KVM guest prints within
 * KVM_PROBE_MS; otherwise TCG.  A KVM probe whose qemu hangs, aborts or
 * exits before the guest says anything settles it for TCG: said once in
 * tbl, and *accel keeps the choice for the rest of the run.  A boot whose
 * qemu fails is tried once more (a transient failure: memory, a signal);
 * returns -1 with qemu's words on stderr when it fails again.
 */
int boot_with_accel(struct boot *b, const char *kernel, const char *initrd, enum accel *accel,
                    FILE *tbl)
{
	if (*accel == ACCEL_AUTO) {
		/* $LOCKLAB_KVM_DEVICE: another device node to open, for tests */
		const char *dev = getenv("LOCKLAB_KVM_DEVICE");
		int fd = open(dev && *dev ? dev : "/dev/kvm", O_RDWR | O_CLOEXEC);
		if (fd >= 0) {
			close(fd);
			int prc = boot_run(b, kernel, initrd, ACCEL_KVM, KVM_PROBE_MS);
			if (prc == 0 && !b->no_output) {
				*accel = ACCEL_KVM;
				return 0;
			}
			if (b->no_output)
				fprintf(tbl,
				        "accel: kvm guest printed nothing in %d s: using tcg for "
				        "this run\n",
				        KVM_PROBE_MS / 1000);
			else
				fprintf(tbl, "accel: kvm unusable (%s): using tcg for this run\n",
				        b->qemu_error);
			fflush(tbl);
		} else {
			fprintf(tbl, "accel: %s: %s: using tcg for this run\n",
			        dev && *dev ? dev : "/dev/kvm", strerror(errno));
		}
		*accel = ACCEL_TCG;
	}
	for (int attempt = 1;; attempt++) {
		if (boot_run(b, kernel, initrd, *accel, 0) == 0)
			return 0;
		if (attempt == 2)
			break;
		fprintf(stderr, "%s: %s: %s; trying once more\n", prog, b->label, b->qemu_error);
	}
	fprintf(stderr, "%s: %s: %s (a failure of qemu, not of the kernel under test)\n", prog,
	        b->label, b->qemu_error);
	return -1;
}
