/*
 * workload_aim7.c - aim7-mix: processes running AIM7 high_systime's
 * fork/exec/pipe/creat/brk/signal job mix over a users ramp, reported in
 * jobs per minute.  It records lock "kernel".
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "util.h"
#include "workload.h"
#include "workload_internal.h"

/*
 * aim7-mix: AIM7 high_systime's job mix (fork + exec + wait, a pipe round
 * trip, creat + write + unlink in one shared directory, brk up and down, a
 * signal to self) run by every user in a loop, reported in jobs per minute.
 *
 * The kernel locks it drives (6.1): the shared directory's inode i_rwsem
 * (every user's creat and unlink), tasklist_lock and the pid allocator
 * (every fork and exit), each user's mmap_lock (fork, exec, brk) and
 * anon_vma (the job's fork: shared by the user and its one child), each
 * pipe's pipe->mutex (one pipe per job: not contended) and sighand->siglock.
 *
 * How it differs from AIM7: AIM7 forks its users from one driver, so they
 * all share the driver's anon_vma root rwsem, and every fork, exit and
 * brk of every user takes it.  Under TCG its waiters block for more than
 * 30 s at 1000 users: the run measured that one rwsem and not the mix.
 * Here each user is this program again (`lockbench aim7-user`, started by
 * posix_spawn, which shares no memory with the coordinator and copies no
 * anon_vma), with its own address space: the shared anon_vma root is gone,
 * and the users meet on the directory, the task list and the allocator.
 * The users and the coordinator share only a small board (a memfd the
 * users inherit): the start and stop word and each user's counters.
 */

/* What every user writes: its jobs and its job steps (for the watchdog). */
struct aim7_slot {
	_Alignas(LB_CACHELINE) atomic_ulong jobs;
	atomic_ulong steps;
};

enum aim7_state { AIM7_WAIT, AIM7_GO, AIM7_STOP };

struct aim7_board {
	_Alignas(LB_CACHELINE) atomic_int state; /* enum aim7_state */
	struct aim7_slot slot[];
};

static size_t aim7_board_size(int users)
{
	return sizeof(struct aim7_board) + sizeof(struct aim7_slot) * (size_t)users;
}

/*
 * What a job execs: /bin/true where there is one, else this program again
 * (the guest's initramfs holds only /init and /lockbench), which main()
 * answers at once for LB_AIM7_EXEC_ARG.
 */
struct aim7_exec {
	const char *path;
	char *const *argv;
};

static volatile sig_atomic_t aim7_signals;

static void aim7_on_signal(int sig)
{
	aim7_signals++;
}

/*
 * One AIM7-style job: the system-call mix high_systime stresses.  Each of
 * its steps bumps *beat: with 2000 users sharing two CPUs fairly, a whole
 * job takes every user about as long, and the watchdog must see the steps.
 * Returns NULL, or the step that failed (errno says why, except "exec").
 */
static const char *aim7_job(const char *dir, const struct aim7_exec *ex, int user,
                            unsigned long job, atomic_ulong *beat)
{
	char path[4200], buf[4096];
	int fds[2];

	/* fork + exec + wait */
	pid_t pid = fork();
	if (pid < 0)
		return "fork";
	if (pid == 0) {
		execv(ex->path, ex->argv);
		_exit(127);
	}
	int st;
	if (waitpid(pid, &st, 0) < 0)
		return "waitpid";
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		errno = 0;
		return "exec";
	}
	atomic_fetch_add_explicit(beat, 1, memory_order_relaxed);
	/* pipe round trip */
	if (pipe(fds))
		return "pipe";
	memset(buf, (int)(job & 0xff), 512);
	bool piped = write(fds[1], buf, 512) == 512 && read(fds[0], buf, 512) == 512;
	close(fds[0]);
	close(fds[1]);
	if (!piped)
		return "pipe write/read";
	atomic_fetch_add_explicit(beat, 1, memory_order_relaxed);
	/* creat, write, unlink in the shared directory */
	snprintf(path, sizeof(path), "%s/u%d-%lu", dir, user, job);
	int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0600);
	if (fd < 0)
		return "creat";
	ssize_t w = write(fd, buf, sizeof(buf));
	close(fd);
	if (w != (ssize_t)sizeof(buf))
		return "write";
	if (unlink(path))
		return "unlink";
	atomic_fetch_add_explicit(beat, 1, memory_order_relaxed);
	/* brk up and down */
	void *cur = sbrk(0);
	if (sbrk(64 * 1024) == (void *)-1)
		return "brk";
	((volatile char *)cur)[0] = 1;
	if (sbrk(-64 * 1024) == (void *)-1)
		return "brk";
	/* a signal to self */
	raise(SIGUSR1);
	return NULL;
}

/*
 * `lockbench aim7-user DIR USER USERS FD`: one user, in its own address
 * space.  Maps the board from FD, waits for the start, then runs jobs
 * until the stop (or until killed), counting them in its slot.  Exits 0,
 * 1 on a failed job, 2 when it cannot start (bad arguments, no board).
 */
int wl_aim7_user_main(int argc, char **argv)
{
	static char *const true_argv[] = {"true", NULL};
	static char *const self_argv[] = {"lockbench", LB_AIM7_EXEC_ARG, NULL};
	struct aim7_exec ex = {"/bin/true", true_argv};
	long long user, users, fd;
	char err[128];

	if (argc != 4 || lb_parse_int(argv[1], 0, WL_MAX_THREADS - 1, &user, "user", err, 128) ||
	    lb_parse_int(argv[2], user + 1, WL_MAX_THREADS, &users, "users", err, 128) ||
	    lb_parse_int(argv[3], 0, INT_MAX, &fd, "fd", err, 128))
		return 2;
	struct aim7_board *b =
	    mmap(NULL, aim7_board_size((int)users), PROT_READ | PROT_WRITE, MAP_SHARED, (int)fd, 0);
	close((int)fd);
	if (b == MAP_FAILED) {
		fprintf(stderr, "lockbench aim7-user %lld: board: %s\n", user, strerror(errno));
		return 2;
	}
	if (access(ex.path, X_OK))
		ex = (struct aim7_exec){"/proc/self/exe", self_argv};
	struct sigaction sa = {.sa_handler = aim7_on_signal};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	struct aim7_slot *me = &b->slot[user];
	unsigned long jobs = 0;
	while (atomic_load_explicit(&b->state, memory_order_acquire) == AIM7_WAIT)
		lb_futex_wait_shared(&b->state, AIM7_WAIT);
	while (atomic_load_explicit(&b->state, memory_order_relaxed) == AIM7_GO) {
		const char *failed = aim7_job(argv[0], &ex, (int)user, jobs, &me->steps);
		if (failed) {
			fprintf(stderr, "lockbench aim7-user %lld: job %lu: %s failed: %s\n", user,
			        jobs + 1, failed, errno ? strerror(errno) : "exit status not 0");
			return 1;
		}
		jobs++;
		atomic_store_explicit(&me->jobs, jobs, memory_order_relaxed);
		atomic_fetch_add_explicit(&me->steps, 1, memory_order_relaxed);
	}
	return 0;
}

/*
 * The runner's watchdog reads sh->progress: copy each user's steps there
 * (the users cannot reach sh: they exec'd).  Returns the jobs done so far.
 */
static unsigned long aim7_mirror(struct aim7_board *b, struct wl_shared *sh, int n)
{
	unsigned long total = 0;
	for (int i = 0; i < n; i++) {
		total += atomic_load_explicit(&b->slot[i].jobs, memory_order_relaxed);
		atomic_store_explicit(&sh->progress[i].n,
		                      atomic_load_explicit(&b->slot[i].steps, memory_order_relaxed),
		                      memory_order_relaxed);
	}
	return total;
}

/*
 * Start user i: `lockbench aim7-user DIR I N FD` by posix_spawn (no copy
 * of this process's memory).  Returns its pid, or -1 with errno.
 */
static pid_t aim7_spawn(const char *dir, int i, int n, int fd)
{
	char si[16], sn[16], sfd[16];
	char *argv[] = {"lockbench", LB_AIM7_USER_ARG, (char *)dir, si, sn, sfd, NULL};
	pid_t pid;
	snprintf(si, sizeof(si), "%d", i);
	snprintf(sn, sizeof(sn), "%d", n);
	snprintf(sfd, sizeof(sfd), "%d", fd);
	int e = posix_spawn(&pid, "/proc/self/exe", NULL, NULL, argv, environ);
	if (e) {
		errno = e;
		return -1;
	}
	return pid;
}

/*
 * End a repetition: kill the users that still run (a job in flight is not
 * counted: the figures were read at the stop), reap them and every orphan
 * of theirs (this process is their subreaper), and count the users that
 * ended on a failed job or could not start.  Each user reaped is progress
 * for the watchdog.  A user stuck in the kernel is not killable: the
 * waitpid blocks, no progress moves and the runner's watchdog reports it.
 */
static int aim7_end(const pid_t *pids, int started, atomic_ulong *beat)
{
	int failed = 0;
	for (int i = 0; i < started; i++)
		kill(pids[i], SIGKILL);
	for (int i = 0; i < started; i++) {
		int st = 0;
		while (waitpid(pids[i], &st, 0) < 0 && errno == EINTR)
			;
		if (WIFEXITED(st) && WEXITSTATUS(st))
			failed++;
		atomic_fetch_add_explicit(beat, 1, memory_order_relaxed);
	}
	while (waitpid(-1, NULL, 0) > 0 || errno == EINTR)
		;
	return failed;
}

/* True when a user (or an orphan of one) has ended: a failed job. */
static bool aim7_user_ended(void)
{
	siginfo_t si = {0};
	return !waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) && si.si_pid;
}

/*
 * The users run for the duration, and past it until they have done as
 * many jobs as there are users: 2000 users sharing two emulated CPUs
 * fairly finish their first jobs together, seconds after the start, and
 * a window shorter than that would measure nothing.  JPM is the jobs done
 * in the window over its length.
 */
static int wl_aim7(const struct lock_ops *ops, const struct wl_params *p, struct wl_shared *sh,
                   struct lb_run *run, char *err, size_t errlen)
{
	int n = p->threads, rc = -1, fd = -1;
	char dir[4096] = "";
	size_t board_len = aim7_board_size(n);
	struct aim7_board *b = MAP_FAILED;
	pid_t *pids = calloc((size_t)n, sizeof(pid_t));
	double *jpm = calloc((size_t)p->repeat, sizeof(double));
	double *per_user = calloc((size_t)n, sizeof(double));
	atomic_ulong *beat = &sh->progress[WL_MAX_THREADS].n;

	if (!pids || !jpm || !per_user) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	if (wl_make_workdir(p, dir, sizeof(dir), err, errlen)) {
		dir[0] = 0;
		goto out;
	}
	/* not close-on-exec: the users inherit it */
	fd = memfd_create("lockbench-aim7", 0);
	if (fd < 0 || ftruncate(fd, (off_t)board_len) ||
	    (b = mmap(NULL, board_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED) {
		snprintf(err, errlen, "aim7 board: %s", strerror(errno));
		goto out;
	}
	prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	for (int r = 0; r < p->repeat; r++) {
		int started = 0, failed;
		atomic_store(&sh->phase, WL_PHASE_SETUP);
		atomic_store(&b->state, AIM7_WAIT);
		for (int i = 0; i < n; i++) {
			atomic_store(&b->slot[i].jobs, 0);
			atomic_store(&b->slot[i].steps, 0);
		}
		aim7_mirror(b, sh, n);
		/* start every user first: on an emulated CPU 2000 starts take seconds */
		for (int i = 0; i < n; i++) {
			pid_t pid = aim7_spawn(dir, i, n, fd);
			if (pid < 0) {
				snprintf(err, errlen, "start user %d of %d: %s", i + 1, n,
				         strerror(errno));
				break;
			}
			pids[started++] = pid;
			atomic_fetch_add_explicit(beat, 1, memory_order_relaxed);
		}
		/* release pairs with the users' acquire load of the state */
		atomic_store_explicit(&sh->phase, WL_PHASE_MEASURE, memory_order_release);
		atomic_store_explicit(&b->state, AIM7_GO, memory_order_release);
		lb_futex_wake_shared(&b->state, INT_MAX);
		uint64_t t0 = lb_now_ns(), until = t0 + (uint64_t)p->duration_ms * 1000000;
		while (started == n && !aim7_user_ended() &&
		       (aim7_mirror(b, sh, n) < (unsigned long)n || lb_now_ns() < until))
			wl_sleep_ms(20);
		atomic_store(&b->state, AIM7_STOP);
		uint64_t t1 = lb_now_ns();
		double mins = (double)(t1 - t0) / 60e9;
		unsigned long total = 0;
		for (int i = 0; i < started; i++) {
			unsigned long j = atomic_load(&b->slot[i].jobs);
			total += j;
			per_user[i] += j / mins / p->repeat;
		}
		atomic_store(&sh->phase, WL_PHASE_STOPPING);
		failed = aim7_end(pids, started, beat);
		if (started < n)
			goto out;
		if (failed) {
			snprintf(err, errlen,
			         "%d of %d aim7 users failed a job in %s (or could not start)",
			         failed, n, dir);
			goto out;
		}
		jpm[r] = total / mins;
	}
	wl_add_metric(run, "jpm", "JPM", true, jpm, (size_t)p->repeat, per_user, (size_t)n);
	rc = 0;
out:
	if (dir[0])
		wl_remove_workdir(dir);
	if (b != MAP_FAILED)
		munmap(b, board_len);
	if (fd >= 0)
		close(fd);
	free(per_user);
	free(jpm);
	free(pids);
	return rc;
}

const struct workload wl_aim7_def = {
    "aim7-mix", "users processes running a fork/exec/pipe/creat/brk/signal job mix: JPM", false,
    false, wl_aim7};
