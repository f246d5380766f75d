/*
 * init.c - PID 1 of the locklab guest (lockbench kernel run).
 *
 * Linked static and packed into the initramfs as /init, next to a static
 * /lockbench.  It mounts proc, sysfs, devtmpfs and two tmpfs, says which
 * kernel it runs on, then does what the kernel command line asks:
 *
 *   locklab.mode=torture    wait: the built-in locktorture runs from its own
 *                           command line parameters and powers the machine
 *                           off after locktorture.shutdown_secs
 *   locklab.mode=lockbench  run /lockbench run --suite S --workloads W
 *                           --locks L [--threads U] [--stall-ms N] [--progress-s P] [--emulated]
 *                           --json - with its output (--emulated when locklab.accel=tcg, which
 *                           the host adds; --progress-s from locklab.progress_s, only with a
 *                           ttyS1) on the
 * second serial port (ttyS1), where no kernel message can interleave, then power off; without a
 * ttyS1 the document goes to the console between LOCKLAB-JSON-BEGIN and LOCKLAB-JSON-END
 *
 * While lockbench runs, a child of init prints the guest's memory on the
 * console every MEM_EVERY_S seconds ("LOCKLAB-MEM available_kb=A total_kb=T",
 * /proc/meminfo's MemAvailable and MemTotal), so a boot that ran short of
 * memory, or stalled, says how much it had.
 *
 * Everything goes to the serial console, which the host reads.  Markers are
 * whole lines starting with "LOCKLAB-"; "LOCKLAB-END" says the guest is done.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#define CMDLINE_MAX 4096

static char cmdline[CMDLINE_MAX];

#define MEM_EVERY_S 20

/* /proc/meminfo's value of key ("MemAvailable:") in kB, -1 when absent. */
static long meminfo_kb(const char *text, const char *key)
{
	const char *p = strstr(text, key);
	return p ? strtol(p + strlen(key), NULL, 10) : -1;
}

/* The memory sampler: say the guest's memory now and every MEM_EVERY_S s until killed. */
static pid_t start_mem_sampler(void)
{
	pid_t pid = fork();
	if (pid != 0)
		return pid;
	for (;;) {
		char text[4096];
		int fd = open("/proc/meminfo", O_RDONLY);
		ssize_t n = fd >= 0 ? read(fd, text, sizeof(text) - 1) : -1;
		if (fd >= 0)
			close(fd);
		if (n > 0) {
			text[n] = 0;
			printf("LOCKLAB-MEM available_kb=%ld total_kb=%ld\n",
			       meminfo_kb(text, "MemAvailable:"), meminfo_kb(text, "MemTotal:"));
			fflush(stdout);
		}
		sleep(MEM_EVERY_S);
	}
}

static void say(const char *fmt, const char *arg)
{
	printf(fmt, arg);
	fflush(stdout);
}

static void mount_one(const char *src, const char *dir, const char *type, const char *opts)
{
	mkdir(dir, 0755);
	if (mount(src, dir, type, 0, opts) && errno != EBUSY)
		printf("locklab-init: cannot mount %s on %s: %s\n", type, dir, strerror(errno));
}

/*
 * The value of key=value on /proc/cmdline, copied into out; def when the
 * key is absent.  Values never contain spaces.
 */
static const char *cmdline_get(const char *key, char *out, size_t len, const char *def)
{
	size_t klen = strlen(key);
	for (const char *p = cmdline; p && *p;) {
		while (*p == ' ')
			p++;
		if (!strncmp(p, key, klen) && p[klen] == '=') {
			const char *v = p + klen + 1;
			size_t n = strcspn(v, " \n");
			if (n >= len)
				n = len - 1;
			memcpy(out, v, n);
			out[n] = 0;
			return out;
		}
		p = strchr(p, ' ');
	}
	return def;
}

static void read_cmdline(void)
{
	int fd = open("/proc/cmdline", O_RDONLY);
	if (fd < 0)
		return;
	ssize_t n = read(fd, cmdline, sizeof(cmdline) - 1);
	if (n > 0)
		cmdline[n] = 0;
	close(fd);
}

/* Run /lockbench with stdout on the console; returns its exit status. */
static int run_lockbench(void)
{
	char suite[64], workloads[512], locks[256];
	const char *s = cmdline_get("locklab.suite", suite, sizeof(suite), "smoke");
	const char *w = cmdline_get("locklab.workloads", workloads, sizeof(workloads),
	                            "futex-wake,futex-hash,vfs-creat-unlink,hot");
	const char *l = cmdline_get("locklab.locks", locks, sizeof(locks), "pthread,kmutex");
	char users[256], stall[32], accel[16], progress[32];
	const char *u = cmdline_get("locklab.users", users, sizeof(users), NULL);
	const char *st = cmdline_get("locklab.stall_ms", stall, sizeof(stall), NULL);
	const char *ac = cmdline_get("locklab.accel", accel, sizeof(accel), "");
	const char *pr = cmdline_get("locklab.progress_s", progress, sizeof(progress), NULL);
	char *argv[] = {"/lockbench", "run",     "--suite", (char *)s,  "--workloads", (char *)w,
	                "--locks",    (char *)l, "--dir",   "/dev/shm", "--no-stacks", "--json",
	                "-",          NULL,      NULL,      NULL,       NULL,          NULL,
	                NULL,         NULL,      NULL,      NULL,       NULL};
	int next = 13;
	int status = 0, rc = 127;

	/* raw: no \r added, nothing interpreted */
	int out = open("/dev/ttyS1", O_WRONLY | O_NOCTTY);
	struct termios t;
	if (out >= 0 && tcgetattr(out, &t) == 0) {
		cfmakeraw(&t);
		tcsetattr(out, TCSANOW, &t);
	}
	/* the table goes to stderr (the console); without ttyS1 it would split the document */
	if (out < 0)
		argv[next++] = "--quiet";
	if (u) {
		argv[next++] = "--threads";
		argv[next++] = (char *)u;
	}
	if (st) {
		argv[next++] = "--stall-ms";
		argv[next++] = (char *)st;
	}
	/*
	 * a line on the console every P s of a long point (2000 aim7 users
	 * under TCG), which the host counts as progress; only beside the
	 * table: without ttyS1 the console carries the document
	 */
	if (pr && out >= 0) {
		argv[next++] = "--progress-s";
		argv[next++] = (char *)pr;
	}
	/* under TCG the watchdog allows for an emulated CPU on a loaded host */
	if (!strcmp(ac, "tcg"))
		argv[next++] = "--emulated";
	pid_t sampler = start_mem_sampler();
	say("LOCKLAB-JSON-BEGIN%s\n", out >= 0 ? " ttyS1" : "");
	pid_t pid = fork();
	if (pid == 0) {
		if (out >= 0)
			dup2(out, 1);
		execv(argv[0], argv);
		printf("locklab-init: cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	if (pid < 0) {
		printf("locklab-init: fork: %s\n", strerror(errno));
		goto out;
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	if (out >= 0)
		tcdrain(out);
out:
	if (sampler > 0) {
		kill(sampler, SIGKILL);
		waitpid(sampler, NULL, 0);
	}
	if (out >= 0)
		close(out);
	printf("\nLOCKLAB-JSON-END rc=%d\n", rc);
	fflush(stdout);
	return rc;
}

int main(void)
{
	char mode[32];
	struct utsname u;

	mount_one("proc", "/proc", "proc", NULL);
	mount_one("sysfs", "/sys", "sysfs", NULL);
	mount_one("devtmpfs", "/dev", "devtmpfs", NULL);
	mount_one("tmpfs", "/tmp", "tmpfs", "mode=1777");
	mount_one("tmpfs", "/dev/shm", "tmpfs", "mode=1777");
	read_cmdline();
	uname(&u);
	printf("LOCKLAB-GUEST kernel=%s cpus=%ld\n", u.release, sysconf(_SC_NPROCESSORS_ONLN));
	fflush(stdout);

	const char *m = cmdline_get("locklab.mode", mode, sizeof(mode), "lockbench");
	if (!strcmp(m, "torture")) {
		/* locktorture's shutdown_secs powers off; the host keeps time */
		say("LOCKLAB-TORTURE waiting for locktorture%s\n", "");
		for (;;)
			pause();
	}
	if (!strcmp(m, "lockbench"))
		run_lockbench();
	else
		printf("locklab-init: unknown locklab.mode '%s'\n", m);
	say("LOCKLAB-END%s\n", "");
	sync();
	reboot(RB_POWER_OFF);
	for (;;)
		pause();
}
