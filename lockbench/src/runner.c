/* runner.c - one point in a forked child, under the watchdog (runner.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runner.h"
#include "strutil.h"
#include "util.h"

#define STACKS_MAX    (96 * 1024)
#define CHILD_OUT_MAX (16 * 1024 * 1024)

int runner_stall_ms(const struct runner_opts *o, int threads)
{
	double base = (double)o->stall_ms * (o->emulated ? RUNNER_EMULATED_STALL : 1);
	return (int)(base * (1.0 + log10(threads > 1 ? threads : 1)));
}

uint64_t runner_stall_credit_ns(uint64_t gap_ns)
{
	uint64_t max = (uint64_t)RUNNER_STALL_CREDIT_MS * 1000000;
	return gap_ns < max ? gap_ns : max;
}

bool runner_progress_look(int progress_s, uint64_t now_ns, uint64_t last_look_ns)
{
	return progress_s > 0 && now_ns >= last_look_ns &&
	       now_ns - last_look_ns >= (uint64_t)progress_s * 1000000000u;
}

bool runner_progress_due(int progress_s, uint64_t now_ns, uint64_t last_look_ns, unsigned long ops,
                         unsigned long ops_at_last_look)
{
	return runner_progress_look(progress_s, now_ns, last_look_ns) && ops > ops_at_last_look;
}

int runner_progress_format(char *buf, size_t len, const char *workload, const char *lock,
                           int threads, unsigned long ops, uint64_t elapsed_ns)
{
	return snprintf(buf, len, "lockbench: %s %s %d %s: %lu operations so far (%.1f s)\n",
	                workload, lock ? lock : "kernel", threads,
	                strcmp(workload, "aim7-mix") ? "threads" : "users", ops, elapsed_ns / 1e9);
}

/* Stacks text: strutil_buf appends, capped at STACKS_MAX (the rest is cut). */
static void buf_add(struct strutil_buf *b, const char *data, size_t n)
{
	if (b->len + n + 1 > STACKS_MAX)
		n = b->len + 1 < STACKS_MAX ? STACKS_MAX - b->len - 1 : 0;
	if (n)
		strutil_buf_addlen(b, data, n);
}

static void buf_printf(struct strutil_buf *b, const char *fmt, ...)
{
	char tmp[1024];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n > 0)
		buf_add(b, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

static void read_small(const char *path, char *out, size_t outlen)
{
	int fd = open(path, O_RDONLY);
	ssize_t n = fd >= 0 ? read(fd, out, outlen - 1) : -1;
	if (fd >= 0)
		close(fd);
	out[n > 0 ? n : 0] = 0;
	for (char *p = out; *p; p++)
		if (*p == '\n' && p[1])
			*p = ' ';
	size_t l = strlen(out);
	if (l && out[l - 1] == '\n')
		out[l - 1] = 0;
}

/* The kernel's view of every thread: state, wait channel, kernel stack. */
static void capture_proc(pid_t pid, struct strutil_buf *b)
{
	char path[512], dirpath[64], comm[64], wchan[128], stat[512], kstack[2048];
	snprintf(dirpath, sizeof(dirpath), "/proc/%d/task", (int)pid);
	DIR *d = opendir(dirpath);
	struct dirent *e;
	if (!d)
		return;
	buf_printf(b, "--- kernel view (/proc/%d/task) ---\n", (int)pid);
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s/comm", dirpath, e->d_name);
		read_small(path, comm, sizeof(comm));
		snprintf(path, sizeof(path), "%s/%s/wchan", dirpath, e->d_name);
		read_small(path, wchan, sizeof(wchan));
		snprintf(path, sizeof(path), "%s/%s/stat", dirpath, e->d_name);
		read_small(path, stat, sizeof(stat));
		char *rp = strrchr(stat, ')');
		char state = rp && rp[1] ? rp[2] : '?';
		buf_printf(b, "task %s (%s) state %c wchan %s\n", e->d_name, comm, state,
		           *wchan ? wchan : "-");
		snprintf(path, sizeof(path), "%s/%s/stack", dirpath, e->d_name);
		read_small(path, kstack, sizeof(kstack));
		if (*kstack)
			buf_printf(b, "  %s\n", kstack);
	}
	closedir(d);
}

/* gdb -batch "thread apply all bt" on pid, bounded to 30 s. */
static void capture_gdb(pid_t pid, struct strutil_buf *b)
{
	int fds[2];
	char pidstr[32];
	if (pipe(fds))
		return;
	snprintf(pidstr, sizeof(pidstr), "%d", (int)pid);
	pid_t g = fork();
	if (g < 0) {
		close(fds[0]);
		close(fds[1]);
		return;
	}
	if (g == 0) {
		int devnull = open("/dev/null", O_RDONLY);
		dup2(devnull, 0);
		dup2(fds[1], 1);
		dup2(fds[1], 2);
		close(fds[0]);
		execlp("gdb", "gdb", "-nx", "-batch", "-p", pidstr, "-ex", "set pagination off",
		       "-ex", "thread apply all bt", (char *)NULL);
		dprintf(1, "gdb not available (%s): only the kernel view follows\n",
		        strerror(errno));
		_exit(127);
	}
	close(fds[1]);
	buf_printf(b, "--- gdb: thread apply all bt ---\n");
	uint64_t deadline = lb_now_ns() + 30ull * 1000000000ull;
	char tmp[4096];
	for (;;) {
		struct pollfd pfd = {fds[0], POLLIN, 0};
		int left = (int)((deadline - lb_now_ns()) / 1000000);
		if (left <= 0 || poll(&pfd, 1, left) <= 0) {
			kill(g, SIGKILL);
			buf_printf(b, "(gdb timed out)\n");
			break;
		}
		ssize_t n = read(fds[0], tmp, sizeof(tmp));
		if (n <= 0)
			break;
		/* keep the frames, drop gdb's chatter about symbols and threads */
		buf_add(b, tmp, (size_t)n);
	}
	close(fds[0]);
	waitpid(g, NULL, 0);
}

static char *capture_stacks(pid_t pid, bool use_gdb)
{
	struct strutil_buf b = STRUTIL_BUF_INIT;
	if (use_gdb)
		capture_gdb(pid, &b);
	capture_proc(pid, &b);
	return strutil_buf_detach(&b);
}

/* Deep copy of one run into res. */
static void copy_run(const struct lb_run *src, struct lb_result *res)
{
	struct lb_run *dst = result_add_run(res, src->workload, src->lock);
	for (size_t i = 0; i < src->nparams; i++) {
		const struct lb_param *p = &src->params[i];
		if (p->is_num)
			run_set_param_num(dst, p->name, p->num);
		else
			run_set_param_str(dst, p->name, p->str);
	}
	for (size_t i = 0; i < src->nmetrics; i++) {
		const struct lb_metric *m = &src->metrics[i];
		struct lb_metric *d =
		    run_add_metric(dst, m->name, m->unit, m->higher_better, m->value);
		for (size_t k = 0; k < m->nsamples; k++)
			metric_add_sample(d, m->samples[k]);
		if (m->nper_thread)
			metric_set_per_thread(d, m->per_thread, m->nper_thread);
		if (m->ndisturb)
			metric_set_disturbance(d, m->disturb, m->ndisturb, m->repeated,
			                       m->disturb_limit_pct);
		if (m->instrument)
			metric_set_instrument(d, m->instrument);
	}
	if (src->lockup)
		run_set_lockup(dst, src->lockup->kind, src->lockup->message, src->lockup->stacks);
}

static int write_all(int fd, const char *s, size_t n)
{
	while (n) {
		ssize_t w = write(fd, s, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		s += w;
		n -= (size_t)w;
	}
	return 0;
}

/* The child: run the workload, send 'R' + JSON document or 'E' + reason. */
/* The child's shared state, for its crash handler. */
static struct wl_shared *child_shared;

/*
 * A crash in the child (the lock or the workload): say which signal and
 * wait, so that the runner sees it while the crashed thread is still where
 * it crashed and takes its stacks, then kills the child (and, should the
 * runner be gone, PR_SET_PDEATHSIG does).
 */
static void child_crashed(int sig)
{
	atomic_store(&child_shared->crash_signal, sig);
	for (;;)
		pause();
}

static void child_catch_crashes(struct wl_shared *sh)
{
	static const int sigs[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP, SIGSYS};
	struct sigaction sa;

	child_shared = sh;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = child_crashed;
	sa.sa_flags = SA_RESETHAND | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
}

static void child_main(int fd, const struct workload *w, const struct lock_ops *ops,
                       const struct wl_params *p, struct wl_shared *sh)
{
	struct lb_result r;
	char err[512] = "";
	setpgid(0, 0);
	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	child_catch_crashes(sh);
	result_init(&r);
	result_fill_machine(&r);
	r.suite = strdup("point");
	r.variant = strdup("base");
	struct lb_run *run = result_add_run(&r, w->name, ops ? ops->name : "kernel");
	workload_record_params(w, p, run);
	if (w->run(ops, p, sh, run, err, sizeof(err))) {
		write_all(fd, "E", 1);
		write_all(fd, err, strlen(err));
		_exit(3);
	}
	json_t *doc = result_to_json(&r);
	char *text = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
	if (!text || write_all(fd, "R", 1) || write_all(fd, text, strlen(text)))
		_exit(4);
	_exit(0);
}

/*
 * What the counters counted since the previous call, counter by counter
 * (prev: their values then): a workload resets its workers' counters to 0
 * between repetitions, one at a time, so a counter below its previous value
 * counted from 0 again; the sum alone would count the others twice.
 */
static unsigned long progress_grown(struct wl_shared *sh, unsigned long *prev)
{
	unsigned long grown = 0;
	for (int i = 0; i <= WL_MAX_THREADS; i++) {
		unsigned long v = atomic_load_explicit(&sh->progress[i].n, memory_order_relaxed);
		grown += v >= prev[i] ? v - prev[i] : v;
		prev[i] = v;
	}
	return grown;
}

static unsigned long progress_sum(struct wl_shared *sh)
{
	unsigned long s = 0;
	for (int i = 0; i <= WL_MAX_THREADS; i++)
		s += atomic_load_explicit(&sh->progress[i].n, memory_order_relaxed);
	return s;
}

/* One point's child as the parent watches it. */
struct point_watch {
	const struct workload *w;
	const struct lock_ops *ops;
	const struct wl_params *p;
	const struct runner_opts *o;
	struct wl_shared *sh;
	int fd;                  /* the child's document */
	struct strutil_buf out;  /* what came on fd */
	int stall_ms;            /* runner_stall_ms */
	uint64_t deadline_ms;    /* the whole point's */
	char kind[32], msg[512]; /* kind set: the child locked up or crashed */
};

/*
 * Read the child's document until it closes the pipe, watching its
 * progress counters: a crash signal, a stall (no progress for stall_ms, on
 * the stall credit's clock), the deadline or an oversized document end the
 * watch with kind and msg set.  Progress lines go to stderr every
 * o->progress_s.
 */
static void watch_point(struct point_watch *pw)
{
	const struct runner_opts *o = pw->o;
	const char *lname = pw->ops ? pw->ops->name : "kernel";
	uint64_t start = lb_now_ns(), last_change = start, last_look = start, stalled_ns = 0;
	unsigned long last = 0;
	/* done: what the counters counted since the start (progress_grown) */
	uint64_t progress_look = start;
	unsigned long done = 0, done_at_look = 0, prev[WL_MAX_THREADS + 1] = {0};
	for (;;) {
		struct pollfd pfd = {pw->fd, POLLIN, 0};
		int pr = poll(&pfd, 1, 20);
		if (pr > 0) {
			char tmp[65536];
			ssize_t n = read(pw->fd, tmp, sizeof(tmp));
			if (n == 0)
				return;
			if (n > 0) {
				if (pw->out.len + (size_t)n > CHILD_OUT_MAX) {
					snprintf(pw->kind, sizeof(pw->kind), "crash");
					snprintf(pw->msg, sizeof(pw->msg),
					         "child wrote more than %d bytes", CHILD_OUT_MAX);
					return;
				}
				strutil_buf_addlen(&pw->out, tmp, (size_t)n);
			}
		}
		int crashed = atomic_load(&pw->sh->crash_signal);
		if (crashed) {
			snprintf(pw->kind, sizeof(pw->kind), "crash");
			snprintf(
			    pw->msg, sizeof(pw->msg),
			    "benchmark process killed by signal %d (%s): %s with %s, %d threads",
			    crashed, strsignal(crashed), pw->w->name, lname, pw->p->threads);
			return;
		}
		uint64_t now = lb_now_ns();
		unsigned long cur = progress_sum(pw->sh);
		stalled_ns += runner_stall_credit_ns(now - last_look);
		last_look = now;
		if (o->progress_s > 0)
			done += progress_grown(pw->sh, prev);
		if (cur != last) {
			last = cur;
			last_change = now;
			stalled_ns = 0;
		}
		if (runner_progress_look(o->progress_s, now, progress_look)) {
			if (runner_progress_due(o->progress_s, now, progress_look, done,
			                        done_at_look)) {
				char line[512];
				runner_progress_format(line, sizeof(line), pw->w->name,
				                       pw->ops ? pw->ops->name : NULL,
				                       pw->p->threads, done, now - start);
				fputs(line, stderr);
				fflush(stderr);
			}
			progress_look = now;
			done_at_look = done;
		}
		if (stalled_ns / 1000000 >= (uint64_t)pw->stall_ms) {
			snprintf(pw->kind, sizeof(pw->kind), "stall");
			snprintf(pw->msg, sizeof(pw->msg),
			         "no thread made progress for %.1f s (%s with %s, %d %s, phase %s)",
			         (now - last_change) / 1e9, pw->w->name, lname, pw->p->threads,
			         strcmp(pw->w->name, "aim7-mix") ? "threads" : "users",
			         atomic_load(&pw->sh->phase) == WL_PHASE_MEASURE ? "measure"
			                                                         : "stop");
			return;
		}
		if ((now - start) / 1000000 >= pw->deadline_ms) {
			snprintf(pw->kind, sizeof(pw->kind), "deadline");
			snprintf(pw->msg, sizeof(pw->msg),
			         "run did not finish within its %.1f s deadline (%s with %s, %d "
			         "threads)",
			         pw->deadline_ms / 1e3, pw->w->name, lname, pw->p->threads);
			return;
		}
	}
}

/*
 * After a child ended by itself (status): its run into res, or a crash
 * recorded as a lockup of the point.  0, or -1 with err said (the child's
 * own error, a kill from outside, a bad document).
 */
static int point_outcome(struct point_watch *pw, int status, struct lb_result *res, char *err,
                         size_t errlen)
{
	const char *lname = pw->ops ? pw->ops->name : "kernel";
	const struct strutil_buf *out = &pw->out;

	if (out->len && out->buf[0] == 'E') {
		snprintf(err, errlen, "%s with %s: %s", pw->w->name, lname, out->buf + 1);
		return -1;
	}
	if (WIFSIGNALED(status) && (WTERMSIG(status) == SIGKILL || WTERMSIG(status) == SIGTERM)) {
		/*
		 * Nothing in a lock sends these: the OOM killer, an operator or a
		 * sandbox limit did.  The machine's failure, not a lockup.
		 */
		snprintf(err, errlen,
		         "%s with %s: the benchmark process was killed from outside by signal %d "
		         "(%s; the OOM killer?): a failure of the machine, not a lockup",
		         pw->w->name, lname, WTERMSIG(status), strsignal(WTERMSIG(status)));
		return -1;
	}
	if (WIFSIGNALED(status) || !out->len || out->buf[0] != 'R') {
		struct lb_run *run = result_add_run(res, pw->w->name, lname);
		workload_record_params(pw->w, pw->p, run);
		if (WIFSIGNALED(status))
			snprintf(pw->msg, sizeof(pw->msg),
			         "benchmark process killed by signal %d (%s)", WTERMSIG(status),
			         strsignal(WTERMSIG(status)));
		else
			snprintf(pw->msg, sizeof(pw->msg),
			         "benchmark process exited with status %d",
			         WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		run_set_lockup(run, "crash", pw->msg, NULL);
		return 0;
	}
	struct lb_result child;
	char perr[256];
	result_init(&child);
	if (result_load_buffer(out->buf + 1, out->len - 1, &child, perr, sizeof(perr)) ||
	    child.nruns != 1) {
		snprintf(err, errlen, "benchmark process sent a bad document: %s", perr);
		result_release(&child);
		return -1;
	}
	copy_run(&child.runs[0], res);
	result_release(&child);
	return 0;
}

int runner_run_point(const struct workload *w, const struct lock_ops *ops,
                     const struct wl_params *p, const struct runner_opts *o, struct lb_result *res,
                     char *err, size_t errlen)
{
	struct wl_shared *sh;
	int fds[2] = {-1, -1}, rc = -1, status = 0;
	pid_t pid;
	char *stacks = NULL;
	uint64_t expected_ms = (uint64_t)p->duration_ms * (uint64_t)p->repeat;
	/* starting and ending 2000 users takes seconds of its own on an emulated CPU */
	uint64_t setup_ms = (uint64_t)RUNNER_MS_PER_USER * (uint64_t)p->threads *
	                    (uint64_t)p->repeat * (o->emulated ? RUNNER_EMULATED_STALL : 1);
	struct point_watch pw = {
	    .w = w,
	    .ops = ops,
	    .p = p,
	    .o = o,
	    .fd = -1,
	    .out = STRUTIL_BUF_INIT,
	    .stall_ms = runner_stall_ms(o, p->threads),
	    .deadline_ms =
	        o->deadline_ms ? (uint64_t)o->deadline_ms : 30000 + 3 * expected_ms + setup_ms,
	};

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED) {
		snprintf(err, errlen, "mmap: %s", strerror(errno));
		return -1;
	}
	pw.sh = sh;
	if (pipe2(fds, O_CLOEXEC)) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		goto out;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		snprintf(err, errlen, "fork: %s", strerror(errno));
		goto out;
	}
	if (pid == 0) {
		close(fds[0]);
		child_main(fds[1], w, ops, p, sh);
	}
	setpgid(pid, pid); /* both sides set it, so kill(-pid) works at once */
	close(fds[1]);
	fds[1] = -1;
	pw.fd = fds[0];

	watch_point(&pw);
	if (*pw.kind) {
		stacks = capture_stacks(pid, o->capture_stacks);
		kill(-pid, SIGKILL);
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		if (sh->note[0]) {
			size_t len = strlen(pw.msg);
			snprintf(pw.msg + len, sizeof(pw.msg) - len, "; %.*s",
			         (int)sizeof(sh->note) - 1, sh->note);
		}
		struct lb_run *run = result_add_run(res, w->name, ops ? ops->name : "kernel");
		workload_record_params(w, p, run);
		run_set_lockup(run, pw.kind, pw.msg, stacks);
		rc = 0;
		goto out;
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	kill(-pid, SIGKILL); /* anything the workload left behind */
	rc = point_outcome(&pw, status, res, err, errlen);
out:
	free(stacks);
	strutil_buf_release(&pw.out);
	if (fds[0] >= 0)
		close(fds[0]);
	if (fds[1] >= 0)
		close(fds[1]);
	munmap(sh, sizeof(*sh));
	return rc;
}
