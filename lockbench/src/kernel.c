/*
 * kernel.c - `lockbench kernel build` and `lockbench kernel run` (kernel.h).
 *
 * build: tinyconfig + lockbench/kernel/locklab.config merged with
 * merge_config.sh, then `make O=OUT bzImage`.  OUT defaults to TREE/locklab-out:
 * a direct child of the tree makes kbuild use the relative srctree "..", so
 * a copy of tree and OUT elsewhere (the patched variant) rebuilds only what
 * its patch touched.  The build time is the kernbench metric build_s.
 *
 * run: one qemu boot per locktorture type and writer count (locktorture is
 * built in and runs once per boot from its command line parameters, then
 * powers off after shutdown_secs), and one boot running the static lockbench
 * on the futex and VFS workloads.  The serial console is read line by line:
 * locktorture's "Writes: Total: N Max/Min: a/b ... Fail: k" lines become
 * writes_per_sec and fairness, the guest's JSON comes between markers, and
 * the kernel's lockup reports (hung task, soft lockup, RCU stall, panic,
 * locktorture failure, or no end by the deadline) become lockup results.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kernel.h"
#include "result.h"
#include "util.h"

#define EXIT_USAGE  2
#define EXIT_LOCKUP 3

/* after a lockup report, keep reading this long for the call traces */
#define LOCKUP_GRACE_MS 4000
/* a KVM guest that prints nothing this long is taken as hung: use TCG */
#define KVM_PROBE_MS 5000
#define STACK_LINES  80

static const char *prog = "lockbench kernel";

/* ---- small helpers -------------------------------------------------- */

static double now_s(void)
{
	return (double)lb_now_ns() / 1e9;
}

static void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q) {
		fprintf(stderr, "%s: out of memory\n", prog);
		exit(1);
	}
	return q;
}

static char *xstrdup(const char *s)
{
	char *d = strdup(s);
	if (!d) {
		fprintf(stderr, "%s: out of memory\n", prog);
		exit(1);
	}
	return d;
}

/* snprintf that refuses to truncate: paths and command lines must be whole. */
static void strf(char *out, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void strf(char *out, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(out, len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= len) {
		fprintf(stderr, "%s: name too long: %.60s...\n", prog, out);
		exit(1);
	}
}

/* A growing byte buffer, always NUL-terminated. */
struct kbuf {
	char *p;
	size_t len, cap;
};

static void kbuf_add(struct kbuf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		b->cap = (b->len + n + 1) * 2;
		b->p = xrealloc(b->p, b->cap);
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = 0;
}

static void kbuf_addf(struct kbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void kbuf_addf(struct kbuf *b, const char *fmt, ...)
{
	char tmp[4096];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n > 0)
		kbuf_add(b, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

static int read_file(const char *path, struct kbuf *b)
{
	char tmp[65536];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	while ((n = read(fd, tmp, sizeof(tmp))) > 0)
		kbuf_add(b, tmp, (size_t)n);
	close(fd);
	if (!b->p)
		kbuf_add(b, "", 0);
	return n < 0 ? -1 : 0;
}

static bool is_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static bool is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The folder this program lives in (build/), for the guest binaries. */
static void exe_dir(char *out, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", out, len - 1);
	if (n <= 0) {
		strf(out, len, ".");
		return;
	}
	out[n] = 0;
	char *slash = strrchr(out, '/');
	if (slash && slash != out)
		*slash = 0;
}

/* First existing file among $LOCKLAB_KERNEL_DIR/name, exe/../lockbench/kernel/name. */
static int find_shipped(const char *name, char *out, size_t len)
{
	char dir[PATH_MAX];
	const char *env = getenv("LOCKLAB_KERNEL_DIR");
	if (env) {
		strf(out, len, "%s/%s", env, name);
		if (is_file(out))
			return 0;
	}
	exe_dir(dir, sizeof(dir));
	strf(out, len, "%s/../lockbench/kernel/%s", dir, name);
	if (is_file(out))
		return 0;
	strf(out, len, "%s/%s", dir, name);
	return is_file(out) ? 0 : -1;
}

/*
 * Run argv with stdout and stderr appended to log (or inherited when log is
 * NULL) and stdin from /dev/null.  Returns the exit status, 127 when the
 * program cannot start, 128+N on signal N.
 */
static int run_cmd(char *const argv[], const char *log)
{
	int status = 0;
	pid_t pid = fork();
	if (pid < 0)
		return 127;
	if (pid == 0) {
		int in = open("/dev/null", O_RDONLY);
		if (in >= 0)
			dup2(in, 0);
		if (log) {
			int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
			if (fd < 0)
				_exit(127);
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execvp(argv[0], argv);
		fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return 127;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Copy every run of src (a loaded document) into dst. */
static void copy_runs(struct lb_result *dst, const struct lb_result *src)
{
	for (size_t i = 0; i < src->nruns; i++) {
		const struct lb_run *s = &src->runs[i];
		struct lb_run *d = result_add_run(dst, s->workload, s->lock);
		for (size_t k = 0; k < s->nparams; k++) {
			if (s->params[k].is_num)
				run_set_param_num(d, s->params[k].name, s->params[k].num);
			else
				run_set_param_str(d, s->params[k].name, s->params[k].str);
		}
		for (size_t k = 0; k < s->nmetrics; k++) {
			const struct lb_metric *sm = &s->metrics[k];
			struct lb_metric *m =
			    run_add_metric(d, sm->name, sm->unit, sm->higher_better, sm->value);
			for (size_t j = 0; j < sm->nsamples; j++)
				metric_add_sample(m, sm->samples[j]);
			if (sm->nper_thread)
				metric_set_per_thread(m, sm->per_thread, sm->nper_thread);
		}
		if (s->lockup)
			run_set_lockup(d, s->lockup->kind, s->lockup->message, s->lockup->stacks);
	}
}

static bool valid_variant(const char *v)
{
	if (!strcmp(v, "base") || !strcmp(v, "patched"))
		return true;
	if (strncmp(v, "patch-", 6) || !v[6])
		return false;
	for (const char *p = v + 6; *p; p++)
		if (!isdigit((unsigned char)*p))
			return false;
	return atoi(v + 6) >= 1;
}

static int usage(const char *fmt, const char *arg)
{
	fprintf(stderr, "%s: ", prog);
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\ntry 'lockbench kernel --help'\n");
	return EXIT_USAGE;
}

static void print_help(FILE *f)
{
	fprintf(
	    f,
	    "usage: lockbench kernel build --tree DIR [OPTIONS]\n"
	    "       lockbench kernel run --kernel bzImage [OPTIONS]\n"
	    "\n"
	    "build options (defaults in brackets):\n"
	    "  --tree DIR           kernel source tree (scripts/kernel-source.sh gives one)\n"
	    "  --config FILE        config fragment merged on tinyconfig "
	    "[lockbench/kernel/locklab.config]\n"
	    "  --out DIR            output folder, make O=DIR [TREE/locklab-out]\n"
	    "  --reuse DIR          start an empty --out from this earlier build's objects\n"
	    "  --jobs N             make -jN [online CPUs]\n"
	    "  --variant V, --round N, --json FILE|-   the kernbench build_s result\n"
	    "\n"
	    "run options:\n"
	    "  --kernel FILE        the bzImage to boot\n"
	    "  --suite S            smoke (2 writers, 6 s per torture boot) or quick "
	    "(1,2,4 writers, 8 s) [smoke]\n"
	    "  --writers 1,2,4      locktorture writer threads [per suite]\n"
	    "  --types a,b          locktorture types [mutex_lock,rwsem_lock,spin_lock]\n"
	    "  --torture-s N        seconds locktorture runs per boot [per suite]\n"
	    "  --workloads w,...    guest lockbench workloads "
	    "[futex-wake,futex-hash,vfs-creat-unlink,hot]\n"
	    "  --locks a,b          guest lockbench locks [pthread,kmutex]\n"
	    "  --no-torture, --no-lockbench   skip that part\n"
	    "  --timeout-s N        deadline per boot [torture-s + 60; lockbench: 300]\n"
	    "  --hung-task-s N      hung task timeout inside the guest, checked every second [3]\n"
	    "  --cpus N             guest CPUs (qemu -smp) [2]\n"
	    "  --accel A            auto, kvm or tcg [auto: KVM when a guest boots, else TCG]\n"
	    "  --guest-dir DIR      holds locklab-init and lockbench-static [this program's "
	    "folder]\n"
	    "  --console-dir DIR    keep each boot's serial console there\n"
	    "  --build-json FILE    add the runs of a `kernel build --json` document\n"
	    "  --variant V          base, patched or patch-K [base]\n"
	    "  --round N            round number [0]\n"
	    "  --json FILE|-        write the lockbench-result/1 document\n"
	    "\n"
	    "exit status: 0 ok, 1 failure, 2 bad usage, 3 a boot locked up\n");
}

/* ---- build ---------------------------------------------------------- */

/*
 * Check that every "CONFIG_X=v" of the fragment made it into .config;
 * olddefconfig silently drops what a dependency forbids.  Returns the number
 * of missing options; LOCK_TORTURE_TEST missing is fatal for the caller.
 */
static int check_config(const char *fragment, const char *config, bool *torture_ok)
{
	struct kbuf frag = {0}, conf = {0};
	int missing = 0;

	*torture_ok = false;
	if (read_file(fragment, &frag) || read_file(config, &conf)) {
		missing = -1;
		goto out;
	}
	for (char *line = frag.p, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		if (strncmp(line, "CONFIG_", 7))
			continue;
		char want[512];
		strf(want, sizeof(want), "\n%s\n", line);
		/* .config starts with a comment, so every option follows a newline */
		if (!strstr(conf.p, want)) {
			fprintf(stderr, "%s: warning: %s did not stick in %s\n", prog, line,
			        config);
			missing++;
		} else if (!strcmp(line, "CONFIG_LOCK_TORTURE_TEST=y")) {
			*torture_ok = true;
		}
	}
out:
	free(frag.p);
	free(conf.p);
	return missing;
}

/* Print the compiler's error lines (the last 20) from the build log. */
static void print_build_errors(const char *log)
{
	struct kbuf b = {0};
	const char *lines[20];
	size_t n = 0;

	if (read_file(log, &b))
		return;
	for (char *line = b.p, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		if (strstr(line, "error:") || strstr(line, "Error ") ||
		    strstr(line, "undefined reference"))
			lines[n++ % 20] = line;
	}
	size_t first = n > 20 ? n - 20 : 0;
	for (size_t i = first; i < n; i++)
		fprintf(stderr, "%s\n", lines[i % 20]);
	free(b.p);
}

/* The fragment differs from the copy kept beside the last configuration. */
static bool fragment_changed(const char *fragment, const char *kept)
{
	struct kbuf a = {0}, b = {0};
	bool changed = read_file(fragment, &a) || read_file(kept, &b) || a.len != b.len ||
	               memcmp(a.p, b.p, a.len);
	free(a.p);
	free(b.p);
	return changed;
}

static int configure(const char *tree, const char *out, const char *fragment, const char *log)
{
	char odir[PATH_MAX + 4], merge[PATH_MAX], kept[PATH_MAX], config[PATH_MAX];
	bool torture_ok;
	struct kbuf frag = {0};
	int rc = -1;

	strf(odir, sizeof(odir), "O=%s", out);
	strf(merge, sizeof(merge), "%s/scripts/kconfig/merge_config.sh", tree);
	strf(kept, sizeof(kept), "%s/locklab.config", out);
	strf(config, sizeof(config), "%s/.config", out);
	unlink(kept);
	char *tiny[] = {"make", "-C", (char *)tree, odir, "LOCALVERSION=", "tinyconfig", NULL};
	char *merge_argv[] = {merge, "-m", "-O", (char *)out, config, (char *)fragment, NULL};
	char *olddef[] = {"make", "-C", (char *)tree, odir, "LOCALVERSION=", "olddefconfig", NULL};
	if (run_cmd(tiny, log) || run_cmd(merge_argv, log) || run_cmd(olddef, log)) {
		fprintf(stderr, "%s: configuring the kernel failed (log: %s)\n", prog, log);
		print_build_errors(log);
		goto out;
	}
	if (check_config(fragment, config, &torture_ok) < 0 || !torture_ok) {
		fprintf(stderr,
		        "%s: CONFIG_LOCK_TORTURE_TEST=y is not in %s; the tree cannot run "
		        "locktorture\n",
		        prog, config);
		goto out;
	}
	/* keep the fragment beside .config: a changed fragment reconfigures */
	if (read_file(fragment, &frag) == 0) {
		FILE *f = fopen(kept, "w");
		if (f) {
			fwrite(frag.p, 1, frag.len, f);
			fclose(f);
		}
	}
	rc = 0;
out:
	free(frag.p);
	return rc;
}

/*
 * objtool is built by tools/ with absolute paths, so in a copied OUT it is
 * rebuilt, and every kernel object depends on the objtool binary's time:
 * build it now and give everything under OUT/tools the base binary's time,
 * so the main build keeps the base objects.
 */
static int objtool_as_base(const char *tree, const char *out, const char *base, const char *odir,
                           const char *log)
{
	char ref[PATH_MAX + 32], tools[PATH_MAX + 8];
	strf(ref, sizeof(ref), "%s/tools/objtool/objtool", base);
	strf(tools, sizeof(tools), "%s/tools", out);
	if (!is_file(ref))
		return 0; /* no objtool in this configuration */
	char *build[] = {
	    "make", "-C", (char *)tree, (char *)odir, "LOCALVERSION=", "tools/objtool", NULL};
	char *touch[] = {"find", tools, "-exec", "touch", "-h", "-r", ref, "{}", "+", NULL};
	if (run_cmd(build, log) || run_cmd(touch, log)) {
		fprintf(stderr, "%s: building objtool failed (log: %s)\n", prog, log);
		print_build_errors(log);
		return -1;
	}
	return 0;
}

struct build_args {
	const char *tree, *config, *out, *reuse, *json, *variant;
	int jobs, round;
};

static int cmd_build(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"tree", required_argument, NULL, 't'},    {"config", required_argument, NULL, 'c'},
	    {"out", required_argument, NULL, 'o'},     {"reuse", required_argument, NULL, 'r'},
	    {"jobs", required_argument, NULL, 'j'},    {"json", required_argument, NULL, 'J'},
	    {"variant", required_argument, NULL, 'V'}, {"round", required_argument, NULL, 'R'},
	    {"help", no_argument, NULL, 'h'},          {NULL, 0, NULL, 0},
	};
	struct build_args a = {.variant = "base", .jobs = lb_online_cpus()};
	char fragment[PATH_MAX], out[PATH_MAX], tree[PATH_MAX], log[PATH_MAX + 32],
	    image[PATH_MAX + 32], path[PATH_MAX + 32], err[512];
	struct lb_result res;
	long long v;
	int c, rc = 1, lockfd = -1;
	bool reused = false;

	result_init(&res);
	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 't':
			a.tree = optarg;
			break;
		case 'c':
			a.config = optarg;
			break;
		case 'o':
			a.out = optarg;
			break;
		case 'r':
			a.reuse = optarg;
			break;
		case 'J':
			a.json = optarg;
			break;
		case 'V':
			if (!valid_variant(optarg)) {
				rc = usage("--variant: '%s' is not base, patched or patch-K",
				           optarg);
				goto out;
			}
			a.variant = optarg;
			break;
		case 'j':
		case 'R':
			if (lb_parse_int(optarg, c == 'j' ? 1 : 0, c == 'j' ? 1024 : 1000000, &v,
			                 c == 'j' ? "--jobs" : "--round", err, sizeof(err))) {
				rc = usage("%s", err);
				goto out;
			}
			*(c == 'j' ? &a.jobs : &a.round) = (int)v;
			break;
		case 'h':
			print_help(stdout);
			rc = 0;
			goto out;
		default:
			rc = usage("bad option%s", "");
			goto out;
		}
	}
	if (optind < argc) {
		rc = usage("unexpected argument '%s'", argv[optind]);
		goto out;
	}
	if (!a.tree) {
		rc = usage("build needs --tree DIR%s", "");
		goto out;
	}
	strf(path, sizeof(path), "%s/Makefile", a.tree);
	if (!realpath(a.tree, tree) || !is_file(path)) {
		fprintf(stderr, "%s: %s is not a kernel source tree (no Makefile)\n", prog, a.tree);
		goto out;
	}
	if (a.config) {
		if (!realpath(a.config, fragment) || !is_file(fragment)) {
			fprintf(stderr, "%s: cannot read config fragment %s\n", prog, a.config);
			goto out;
		}
	} else if (find_shipped("locklab.config", fragment, sizeof(fragment))) {
		fprintf(stderr, "%s: cannot find lockbench/kernel/locklab.config; use --config\n",
		        prog);
		goto out;
	}
	if (a.out) {
		if (mkdir(a.out, 0755) && errno != EEXIST) {
			fprintf(stderr, "%s: cannot create %s: %s\n", prog, a.out, strerror(errno));
			goto out;
		}
		if (!realpath(a.out, out)) {
			fprintf(stderr, "%s: %s: %s\n", prog, a.out, strerror(errno));
			goto out;
		}
	} else {
		strf(out, sizeof(out), "%s/locklab-out", tree);
		if (mkdir(out, 0755) && errno != EEXIST) {
			fprintf(stderr, "%s: cannot create %s: %s\n", prog, out, strerror(errno));
			goto out;
		}
	}
	/* two builds into one folder would corrupt each other */
	strf(path, sizeof(path), "%s/.locklab-lock", out);
	lockfd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (lockfd < 0 || flock(lockfd, LOCK_EX)) {
		fprintf(stderr, "%s: cannot lock %s: %s\n", prog, path, strerror(errno));
		goto out;
	}
	strf(log, sizeof(log), "%s/locklab-build.log", out);
	unlink(log);
	strf(path, sizeof(path), "%s/.config", out);
	if (a.reuse && !is_file(path)) {
		char src[PATH_MAX + 8];
		strf(src, sizeof(src), "%s/.", a.reuse);
		if (!is_dir(a.reuse)) {
			fprintf(stderr, "%s: --reuse: %s is not a folder\n", prog, a.reuse);
			goto out;
		}
		char *cp[] = {"cp", "-a", src, out, NULL};
		if (run_cmd(cp, log)) {
			fprintf(stderr, "%s: cannot copy %s into %s (log: %s)\n", prog, a.reuse,
			        out, log);
			goto out;
		}
		reused = true;
		unlink(log); /* the base build's log came along */
	}
	double t0 = now_s();
	char kept[PATH_MAX + 32];
	strf(kept, sizeof(kept), "%s/locklab.config", out);
	if (!is_file(path) || fragment_changed(fragment, kept)) {
		if (configure(tree, out, fragment, log))
			goto out;
	}
	char odir[PATH_MAX + 4], jobs[32];
	strf(odir, sizeof(odir), "O=%s", out);
	strf(jobs, sizeof(jobs), "-j%d", a.jobs);
	/*
	 * LOCALVERSION= (empty): no "+" for a git tree, so a copy without .git
	 * has the same kernel release and the same objects
	 */
	if (reused && objtool_as_base(tree, out, a.reuse, odir, log))
		goto out;
	char *make[] = {"make", "-C", tree, odir, "LOCALVERSION=", jobs, "bzImage", NULL};
	int st = run_cmd(make, log);
	double secs = now_s() - t0;
	if (st) {
		fprintf(stderr, "%s: kernel build failed after %.1f s (log: %s)\n", prog, secs,
		        log);
		print_build_errors(log);
		goto out;
	}
	strf(image, sizeof(image), "%s/arch/x86/boot/bzImage", out);
	if (!is_file(image)) {
		fprintf(stderr, "%s: make succeeded but %s is missing\n", prog, image);
		goto out;
	}
	FILE *tbl = a.json && !strcmp(a.json, "-") ? stderr : stdout;
	fprintf(tbl, "kernel %s built in %.1f s%s: %s\n", a.variant, secs,
	        reused ? " (incremental, from --reuse)" : "", image);
	if (a.json) {
		result_fill_machine(&res);
		res.suite = xstrdup("kernel");
		res.variant = xstrdup(a.variant);
		res.round = a.round;
		struct lb_run *run = result_add_run(&res, "kernbench", "kernel");
		run_set_param_num(run, "jobs", a.jobs);
		struct lb_metric *m = run_add_metric(run, "build_s", "s", false, secs);
		metric_add_sample(m, secs);
		if (result_write_file(&res, a.json, err, sizeof(err))) {
			fprintf(stderr, "%s: %s\n", prog, err);
			goto out;
		}
	}
	rc = 0;
out:
	if (lockfd >= 0)
		close(lockfd);
	result_release(&res);
	return rc;
}

/* ---- initramfs ------------------------------------------------------ */

static void cpio_entry(struct kbuf *b, const char *name, unsigned mode, unsigned rmaj,
                       unsigned rmin, const char *data, size_t len)
{
	static unsigned ino = 1;
	static const char zeros[4];
	size_t namesize = strlen(name) + 1;
	kbuf_addf(b, "070701%08X%08X%08X%08X%08X%08X%08zX%08X%08X%08X%08X%08zX%08X", ino++, mode,
	          0u, 0u, 1u, 0u, len, 0u, 0u, rmaj, rmin, namesize, 0u);
	kbuf_add(b, name, namesize);
	kbuf_add(b, zeros, (4 - (110 + namesize) % 4) % 4);
	if (len) {
		kbuf_add(b, data, len);
		kbuf_add(b, zeros, (4 - len % 4) % 4);
	}
}

/*
 * Write an uncompressed newc initramfs with /init and /lockbench (tinyconfig
 * has no decompressor) and a /dev/console node, so init has a console before
 * devtmpfs is mounted.
 */
static int make_initramfs(const char *guest_dir, const char *path)
{
	char p[PATH_MAX + 32];
	struct kbuf init = {0}, lb = {0}, out = {0};
	int rc = -1;

	strf(p, sizeof(p), "%s/locklab-init", guest_dir);
	if (read_file(p, &init)) {
		fprintf(stderr, "%s: cannot read %s (run make)\n", prog, p);
		goto out;
	}
	strf(p, sizeof(p), "%s/lockbench-static", guest_dir);
	if (read_file(p, &lb)) {
		fprintf(stderr, "%s: cannot read %s (run make)\n", prog, p);
		goto out;
	}
	static const char *const dirs[] = {"dev", "proc", "sys", "tmp", "root", NULL};
	for (int i = 0; dirs[i]; i++)
		cpio_entry(&out, dirs[i], S_IFDIR | 0755, 0, 0, NULL, 0);
	cpio_entry(&out, "dev/console", S_IFCHR | 0600, 5, 1, NULL, 0);
	cpio_entry(&out, "init", S_IFREG | 0755, 0, 0, init.p, init.len);
	cpio_entry(&out, "lockbench", S_IFREG | 0755, 0, 0, lb.p, lb.len);
	cpio_entry(&out, "TRAILER!!!", 0, 0, 0, NULL, 0);
	FILE *f = fopen(path, "w");
	if (!f || fwrite(out.p, 1, out.len, f) != out.len) {
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
	free(init.p);
	free(lb.p);
	free(out.p);
	return rc;
}

/* ---- booting -------------------------------------------------------- */

enum accel { ACCEL_AUTO, ACCEL_KVM, ACCEL_TCG };

struct boot {
	const char *label;   /* "locktorture mutex_lock writers=2" */
	char cmdline[1024];  /* kernel command line */
	double deadline_s;   /* end qemu this long after start */
	const char *end_tag; /* the line that says the guest finished */
	int cpus;
	char guest_out[PATH_MAX]; /* the second serial port (ttyS1) goes here */
	char qemu_log[PATH_MAX];  /* qemu's own stderr goes here, apart from the console */
	/* filled by boot_run */
	struct kbuf console; /* what the guest printed on ttyS0, nothing of qemu's */
	double secs;
	bool ended;     /* end_tag seen */
	bool timed_out; /* the deadline ended it */
	bool no_output; /* KVM probe: nothing printed in time */
	bool reported;  /* the guest printed a lockup report of its own */
	/* why qemu failed (boot_run returned -1): qemu's words or the errno */
	char qemu_error[1024];
};

/* Kind of lockup a console line reports, or NULL. */
static const char *lockup_kind(const char *line)
{
	if (strstr(line, "INFO: task ") && strstr(line, "blocked for more than"))
		return "hung-task";
	if (strstr(line, "BUG: soft lockup"))
		return "soft-lockup";
	if (strstr(line, "rcu: INFO: ") && strstr(line, "stall"))
		return "rcu-stall";
	if (strstr(line, "Kernel panic"))
		return "panic";
	if (strstr(line, "BUG: ") || strstr(line, "Oops: ") ||
	    strstr(line, "general protection fault"))
		return "oops";
	return NULL;
}

static bool torture_failed(const char *line)
{
	const char *f;
	if (!strstr(line, "Writes:") && !strstr(line, "Reads :"))
		return false;
	if (strstr(line, "!!!"))
		return true;
	f = strstr(line, "Fail: ");
	return f && atoi(f + 6) > 0;
}

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
	struct kbuf e = {0};
	out[0] = 0;
	if (read_file(log, &e) || !e.len) {
		free(e.p);
		return;
	}
	while (e.len && (e.p[e.len - 1] == '\n' || e.p[e.len - 1] == '\r'))
		e.p[--e.len] = 0;
	const char *from = e.p;
	if (e.len > len - 1)
		from = e.p + e.len - (len - 1); /* the end says why it stopped */
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
	free(e.p);
}

/*
 * Boot once; the console (ttyS0, the guest's words only) goes to b->console
 * and qemu's own stderr to b->qemu_log.  Ends qemu on "reboot: Power down",
 * LOCKUP_GRACE_MS after a lockup report, or at the deadline.
 * probe_ms > 0: give up (b->no_output) when nothing is printed that long.
 *
 * Returns 0 when the guest ran and its console is to be read (a lockup the
 * guest reported counts even when qemu then died), or -1 when qemu failed:
 * it could not start, it exited non-zero or on a signal, or it printed
 * nothing of the guest's by the deadline.  b->qemu_error says why, in
 * qemu's words when it said any.  A qemu failure is the machine's, never a
 * finding about the kernel under test.
 */
static int boot_run(struct boot *b, const char *kernel, const char *initrd, enum accel accel,
                    int probe_ms)
{
	int pfd[2] = {-1, -1}, rc = -1, status = 0;
	pid_t pid = -1;
	size_t scanned = 0;
	double start = now_s(), lockup_at = 0, ended_at = 0;
	bool powered_off = false, by_itself = false;

	b->console.len = 0;
	if (b->console.p)
		b->console.p[0] = 0;
	b->ended = b->timed_out = b->no_output = b->reported = false;
	b->qemu_error[0] = 0;
	if (pipe2(pfd, O_CLOEXEC)) {
		snprintf(b->qemu_error, sizeof(b->qemu_error), "pipe: %s", strerror(errno));
		goto out;
	}
	char serial2[PATH_MAX + 8];
	strf(serial2, sizeof(serial2), "file:%s", b->guest_out);
	unlink(b->guest_out);
	int errfd = open(b->qemu_log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (errfd < 0) {
		snprintf(b->qemu_error, sizeof(b->qemu_error), "cannot create %.400s: %s",
		         b->qemu_log, strerror(errno));
		goto out;
	}
	/* one CPU per socket: SeaBIOS's MP table lists only the first CPU of a socket */
	char smp[64];
	strf(smp, sizeof(smp), "%d,sockets=%d,cores=1,threads=1", b->cpus, b->cpus);
	char *argv[] = {"qemu-system-x86_64",
	                "-accel",
	                accel == ACCEL_KVM ? "kvm" : "tcg",
	                "-cpu",
	                accel == ACCEL_KVM ? "host" : "max",
	                "-m",
	                "512",
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
	                b->cmdline,
	                NULL};
	pid = fork();
	if (pid < 0) {
		snprintf(b->qemu_error, sizeof(b->qemu_error), "fork: %s", strerror(errno));
		close(errfd);
		goto out;
	}
	if (pid == 0) {
		int in = open("/dev/null", O_RDONLY);
		if (in >= 0)
			dup2(in, 0);
		dup2(pfd[1], 1);
		dup2(errfd, 2);
		setpgid(0, 0);
		execvp(argv[0], argv);
		fprintf(stderr, "cannot run qemu-system-x86_64: %s\n", strerror(errno));
		_exit(127);
	}
	close(errfd);
	close(pfd[1]);
	pfd[1] = -1;
	for (;;) {
		double now = now_s();
		double until = start + b->deadline_s;
		if (lockup_at > 0 && lockup_at + LOCKUP_GRACE_MS / 1000.0 < until)
			until = lockup_at + LOCKUP_GRACE_MS / 1000.0;
		if (ended_at > 0 && ended_at + 2 < until)
			until = ended_at + 2; /* the end marker came; power-off is near */
		if (probe_ms > 0 && b->console.len == 0 && start + probe_ms / 1000.0 < until)
			until = start + probe_ms / 1000.0;
		if (now >= until) {
			if (probe_ms > 0 && b->console.len == 0)
				b->no_output = true;
			else if (!lockup_at && !ended_at)
				b->timed_out = true;
			break;
		}
		struct pollfd p = {.fd = pfd[0], .events = POLLIN};
		int ms = (int)((until - now) * 1000) + 1;
		int n = poll(&p, 1, ms);
		if (n < 0 && errno != EINTR)
			break;
		if (n <= 0)
			continue;
		char tmp[8192];
		ssize_t got = read(pfd[0], tmp, sizeof(tmp));
		if (got <= 0)
			break; /* qemu exited: panic=-1 with -no-reboot, or an error */
		kbuf_add(&b->console, tmp, (size_t)got);
		/* look at each new complete line */
		for (;;) {
			char *nl = memchr(b->console.p + scanned, '\n', b->console.len - scanned);
			if (!nl)
				break;
			*nl = 0;
			const char *line = b->console.p + scanned;
			/* no ACPI: qemu stays up after the guest powers off or halts */
			if (strstr(line, "reboot: Power down") ||
			    strstr(line, "reboot: System halted"))
				powered_off = true;
			if (!lockup_at && lockup_kind(line))
				lockup_at = now_s();
			if (!ended_at && strstr(line, b->end_tag))
				ended_at = now_s();
			*nl = '\n';
			scanned = (size_t)(nl - b->console.p) + 1;
		}
		if (powered_off)
			break;
	}
	b->ended = ended_at > 0;
	b->reported = lockup_at > 0;
	if (!powered_off && !lockup_at && !ended_at && !b->timed_out && !b->no_output)
		usleep(100 * 1000); /* qemu closed its output: let it finish exiting */
	by_itself = end_qemu(pid, &status);
	pid = -1;
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
	else if (b->console.len == 0 && !b->no_output)
		snprintf(b->qemu_error, sizeof(b->qemu_error),
		         "qemu-system-x86_64 (-accel %s) showed no guest output in %.0f s%s%s",
		         accel == ACCEL_KVM ? "kvm" : "tcg", now_s() - start, *words ? ": " : "",
		         words);
	/* a report the guest made before qemu died is still the guest's report */
	rc = b->qemu_error[0] && !b->reported ? -1 : 0;
out:
	if (pid > 0)
		end_qemu(pid, &status);
	b->secs = now_s() - start;
	if (pfd[0] >= 0)
		close(pfd[0]);
	if (pfd[1] >= 0)
		close(pfd[1]);
	return rc;
}

/* ---- reading the console -------------------------------------------- */

/* Split the console into lines: no '\r', no "[  1.23] " time stamps. */
static char **console_lines(struct kbuf *c, size_t *n)
{
	char **v = NULL;
	size_t cap = 0;
	*n = 0;
	if (!c->p)
		return NULL;
	for (char *line = c->p, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		for (char *r; (r = strchr(line, '\r'));)
			memmove(r, r + 1, strlen(r));
		if (line[0] == '[') {
			char *close = strchr(line, ']');
			if (close && close - line < 20)
				line = close[1] == ' ' ? close + 2 : close + 1;
		}
		if (*n + 1 >= cap) {
			cap = cap ? cap * 2 : 256;
			v = xrealloc(v, cap * sizeof(*v));
		}
		v[(*n)++] = line;
	}
	return v;
}

/*
 * Look for the first lockup in the console.  On a find, *kind is set, msg
 * holds the kernel's line and stacks the lines after it (the call traces).
 * The console of a boot that never ended is a lockup too.
 */
static bool detect_lockup(const struct boot *b, char **lines, size_t n, const char **kind,
                          char *msg, size_t msglen, struct kbuf *stacks)
{
	size_t at = 0;

	*kind = NULL;
	for (size_t i = 0; i < n && !*kind; i++) {
		*kind = lockup_kind(lines[i]);
		if (!*kind && torture_failed(lines[i]))
			*kind = "locktorture-fail";
		at = i;
	}
	if (!*kind && !b->ended) {
		*kind = b->timed_out ? "deadline" : "crash";
		strf(msg, msglen,
		     b->timed_out ? "no end of test after %.0f s (deadline)"
		                  : "the guest stopped after %.0f s without an end of test",
		     b->secs);
		/* the last lines say where it stopped */
		for (size_t i = n > 30 ? n - 30 : 0; i < n; i++)
			kbuf_addf(stacks, "%s\n", lines[i]);
		return true;
	}
	if (!*kind)
		return false;
	snprintf(msg, msglen, "%.*s", (int)msglen - 1, lines[at]);
	for (size_t i = at + 1, k = 0; i < n && k < STACK_LINES; i++) {
		if (!strncmp(lines[i], "LOCKLAB-", 8) || strstr(lines[i], "reboot: Power down"))
			continue;
		kbuf_addf(stacks, "%s\n", lines[i]);
		k++;
	}
	return true;
}

struct torture_line {
	long long total;
	long max, min;
	int fail;
};

static bool parse_torture_line(const char *line, const char *tag, struct torture_line *t)
{
	char fmt[64];
	const char *p = strstr(line, tag);
	if (!p)
		return false;
	strf(fmt, sizeof(fmt), "%s Total: %%lld Max/Min: %%ld/%%ld", tag);
	if (sscanf(p, fmt, &t->total, &t->max, &t->min) != 3)
		return false;
	const char *f = strstr(p, "Fail: ");
	t->fail = f ? atoi(f + 6) : 0;
	return true;
}

/*
 * locktorture prints cumulative "Writes:" lines every stat_interval seconds
 * and a last one at the end of test.  The figure is the mean per-interval
 * rate, and it is one sample: the seconds of one boot are not independent
 * repetitions (a slow host slows them all), so samples for a verdict come
 * from rounds.  Fairness is min/max per-thread acquisitions over the test.
 */
static void add_torture_metrics(struct lb_run *run, char **lines, size_t n, const char *tag,
                                const char *name, const char *unit, int interval, int secs)
{
	struct torture_line t, last = {0};
	double *rates = NULL;
	size_t nrates = 0, seen = 0;
	long long prev = 0;

	for (size_t i = 0; i < n; i++) {
		if (!parse_torture_line(lines[i], tag, &t))
			continue;
		/* the end-of-test line follows "End of test" closely; it is not periodic */
		/* the last line comes just before "End of test" (rwsem: Writes, Reads, End) */
		bool is_final = (i + 1 < n && strstr(lines[i + 1], "End of test")) ||
		                (i + 2 < n && strstr(lines[i + 1], "Reads :") &&
		                 strstr(lines[i + 2], "End of test"));
		if (!is_final) {
			rates = xrealloc(rates, (nrates + 1) * sizeof(*rates));
			rates[nrates++] = (double)(t.total - prev) / interval;
			prev = t.total;
		}
		last = t;
		seen++;
	}
	if (!seen)
		goto out;
	double value = 0;
	if (nrates) {
		for (size_t i = 0; i < nrates; i++)
			value += rates[i];
		value /= (double)nrates;
	} else {
		value = (double)last.total / secs;
	}
	struct lb_metric *m = run_add_metric(run, name, unit, true, value);
	metric_add_sample(m, value);
	if (!strcmp(tag, "Writes:")) {
		double fair = last.max > 0 ? (double)last.min / (double)last.max : 0;
		m = run_add_metric(run, "fairness", "min/max", true, fair);
		metric_add_sample(m, fair);
	}
out:
	free(rates);
}

/* Take the guest's kernel and CPU count from its LOCKLAB-GUEST line. */
static void note_guest(struct lb_result *res, char **lines, size_t n, const char *accel)
{
	for (size_t i = 0; i < n; i++) {
		const char *k = strstr(lines[i], "LOCKLAB-GUEST kernel=");
		if (!k)
			continue;
		char rel[128];
		int cpus = 0;
		if (sscanf(k, "LOCKLAB-GUEST kernel=%127s cpus=%d", rel, &cpus) == 2) {
			free(res->machine.kernel);
			res->machine.kernel = xstrdup(rel);
			if (cpus > 0)
				res->machine.cpus = cpus;
			if (!strstr(res->machine.model, "QEMU")) {
				char model[512];
				snprintf(model, sizeof(model), "QEMU %s guest on %.400s", accel,
				         res->machine.model);
				free(res->machine.model);
				res->machine.model = xstrdup(model);
			}
		}
		return;
	}
}

/* The text between the JSON markers, or NULL. */
static char *guest_json(char **lines, size_t n, int *lb_rc)
{
	struct kbuf j = {0};
	bool in = false;
	*lb_rc = -1;
	for (size_t i = 0; i < n; i++) {
		if (strstr(lines[i], "LOCKLAB-JSON-BEGIN")) {
			in = true;
			continue;
		}
		const char *e = strstr(lines[i], "LOCKLAB-JSON-END");
		if (e) {
			const char *r = strstr(e, "rc=");
			*lb_rc = r ? atoi(r + 3) : -1;
			return j.p ? j.p : xstrdup("");
		}
		if (in)
			kbuf_addf(&j, "%s\n", lines[i]);
	}
	free(j.p);
	return NULL;
}

/* ---- run ------------------------------------------------------------ */

/*
 * The host's TSC rate in kHz, measured against CLOCK_MONOTONIC over 50 ms;
 * 0 when unknown.  A TCG or KVM guest's TSC ticks at the host's rate.  The
 * guest is told (tsc_early_khz=) because, with no ACPI and so no HPET, its
 * only reference is the PIT, and that calibration fails on a busy host: the
 * kernel then drops the TSC, its clock becomes jiffies (4 ms steps) and
 * mdelay() (locktorture's hold times) is miscalibrated.
 */
static long host_tsc_khz(void)
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

struct run_args {
	const char *kernel, *suite, *json, *variant, *accel_name, *guest_dir, *console_dir,
	    *build_json, *workloads, *locks, *extra;
	int *writers, nwriters;
	char **types;
	int ntypes;
	int round, timeout_s, torture_s, hung_s, cpus;
	bool no_torture, no_lockbench;
};

static bool valid_torture_type(const char *t)
{
	static const char *const known[] = {
	    "spin_lock",     "spin_lock_irq", "rw_lock",    "rw_lock_irq",       "mutex_lock",
	    "ww_mutex_lock", "rtmutex_lock",  "rwsem_lock", "percpu_rwsem_lock", NULL};
	for (int i = 0; known[i]; i++)
		if (!strcmp(known[i], t))
			return true;
	return false;
}

static int save_console(const char *dir, const char *name, const struct kbuf *c)
{
	char path[PATH_MAX];
	strf(path, sizeof(path), "%s/%s.log", dir, name);
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	if (c->p)
		fwrite(c->p, 1, c->len, f);
	return fclose(f);
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
static int boot_with_accel(struct boot *b, const char *kernel, const char *initrd,
                           enum accel *accel, FILE *tbl)
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

static void print_run_line(FILE *tbl, const struct lb_run *run)
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

static int cmd_run(int argc, char **argv)
{
	enum {
		O_KERNEL = 256,
		O_SUITE,
		O_WRITERS,
		O_TYPES,
		O_TORTURE_S,
		O_WORKLOADS,
		O_LOCKS,
		O_NO_TORTURE,
		O_NO_LB,
		O_TIMEOUT,
		O_HUNG,
		O_ACCEL,
		O_GUEST,
		O_CONSOLE,
		O_BUILD_JSON,
		O_VARIANT,
		O_ROUND,
		O_JSON,
		O_EXTRA,
		O_CPUS,
		O_HELP
	};
	static const struct option opts[] = {
	    {"kernel", required_argument, NULL, O_KERNEL},
	    {"suite", required_argument, NULL, O_SUITE},
	    {"writers", required_argument, NULL, O_WRITERS},
	    {"types", required_argument, NULL, O_TYPES},
	    {"torture-s", required_argument, NULL, O_TORTURE_S},
	    {"workloads", required_argument, NULL, O_WORKLOADS},
	    {"locks", required_argument, NULL, O_LOCKS},
	    {"no-torture", no_argument, NULL, O_NO_TORTURE},
	    {"no-lockbench", no_argument, NULL, O_NO_LB},
	    {"timeout-s", required_argument, NULL, O_TIMEOUT},
	    {"hung-task-s", required_argument, NULL, O_HUNG},
	    {"accel", required_argument, NULL, O_ACCEL},
	    {"guest-dir", required_argument, NULL, O_GUEST},
	    {"console-dir", required_argument, NULL, O_CONSOLE},
	    {"build-json", required_argument, NULL, O_BUILD_JSON},
	    {"variant", required_argument, NULL, O_VARIANT},
	    {"round", required_argument, NULL, O_ROUND},
	    {"json", required_argument, NULL, O_JSON},
	    {"cmdline", required_argument, NULL, O_EXTRA},
	    {"cpus", required_argument, NULL, O_CPUS},
	    {"help", no_argument, NULL, O_HELP},
	    {NULL, 0, NULL, 0},
	};
	struct run_args a = {.suite = "smoke",
	                     .variant = "base",
	                     .accel_name = "auto",
	                     .workloads = "futex-wake,futex-hash,vfs-creat-unlink,hot",
	                     .locks = "pthread,kmutex",
	                     .hung_s = 3,
	                     .cpus = 2};
	struct lb_result res, guest, build;
	struct boot b = {0};
	enum accel accel = ACCEL_AUTO;
	char err[1024], guest_dir[PATH_MAX], initrd[PATH_MAX], tmpdir[PATH_MAX] = "";
	long long v;
	int c, rc = 1, lockups = 0, failures = 0, nboots = 0;
	bool qemu_down = false;
	double t_all = now_s();

	result_init(&res);
	result_init(&guest);
	result_init(&build);
	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case O_KERNEL:
			a.kernel = optarg;
			break;
		case O_SUITE:
			if (strcmp(optarg, "smoke") && strcmp(optarg, "quick")) {
				rc = usage("unknown suite '%s' (valid: smoke, quick)", optarg);
				goto out;
			}
			a.suite = optarg;
			break;
		case O_WRITERS:
			free(a.writers);
			a.nwriters = lb_parse_int_list(optarg, 1, LB_THREADS_MAX, &a.writers,
			                               "--writers", err, sizeof(err));
			if (a.nwriters < 0) {
				rc = usage("%s", err);
				goto out;
			}
			break;
		case O_TYPES:
			lb_free_list(a.types);
			a.types = lb_split_list(optarg, "--types", &a.ntypes, err, sizeof(err));
			if (!a.types) {
				rc = usage("%s", err);
				goto out;
			}
			for (int i = 0; i < a.ntypes; i++)
				if (!valid_torture_type(a.types[i])) {
					rc =
					    usage("unknown locktorture type '%s' (e.g. mutex_lock, "
					          "rwsem_lock, spin_lock)",
					          a.types[i]);
					goto out;
				}
			break;
		case O_WORKLOADS:
			a.workloads = optarg;
			break;
		case O_LOCKS:
			a.locks = optarg;
			break;
		case O_NO_TORTURE:
			a.no_torture = true;
			break;
		case O_NO_LB:
			a.no_lockbench = true;
			break;
		case O_CPUS:
			if (lb_parse_int(optarg, 1, 64, &v, "--cpus", err, sizeof(err))) {
				rc = usage("%s", err);
				goto out;
			}
			a.cpus = (int)v;
			break;
		case O_TORTURE_S:
		case O_TIMEOUT:
		case O_HUNG:
		case O_ROUND: {
			const char *what = c == O_TORTURE_S ? "--torture-s"
			                   : c == O_TIMEOUT ? "--timeout-s"
			                   : c == O_HUNG    ? "--hung-task-s"
			                                    : "--round";
			if (lb_parse_int(optarg, c == O_ROUND ? 0 : 1, 1000000, &v, what, err,
			                 sizeof(err))) {
				rc = usage("%s", err);
				goto out;
			}
			*(c == O_TORTURE_S ? &a.torture_s
			  : c == O_TIMEOUT ? &a.timeout_s
			  : c == O_HUNG    ? &a.hung_s
			                   : &a.round) = (int)v;
			break;
		}
		case O_ACCEL:
			if (strcmp(optarg, "auto") && strcmp(optarg, "kvm") &&
			    strcmp(optarg, "tcg")) {
				rc = usage("--accel: '%s' is not auto, kvm or tcg", optarg);
				goto out;
			}
			a.accel_name = optarg;
			break;
		case O_GUEST:
			a.guest_dir = optarg;
			break;
		case O_CONSOLE:
			a.console_dir = optarg;
			break;
		case O_BUILD_JSON:
			a.build_json = optarg;
			break;
		case O_VARIANT:
			if (!valid_variant(optarg)) {
				rc = usage("--variant: '%s' is not base, patched or patch-K",
				           optarg);
				goto out;
			}
			a.variant = optarg;
			break;
		case O_JSON:
			if (!*optarg) {
				rc = usage("--json: empty path%s", "");
				goto out;
			}
			a.json = optarg;
			break;
		case O_EXTRA:
			a.extra = optarg;
			break;
		case O_HELP:
			print_help(stdout);
			rc = 0;
			goto out;
		default:
			rc = usage("bad option%s", "");
			goto out;
		}
	}
	if (optind < argc) {
		rc = usage("unexpected argument '%s'", argv[optind]);
		goto out;
	}
	if (!a.kernel) {
		rc = usage("run needs --kernel bzImage%s", "");
		goto out;
	}
	if (!is_file(a.kernel)) {
		fprintf(stderr, "%s: no kernel image at %s\n", prog, a.kernel);
		goto out;
	}
	bool quick = !strcmp(a.suite, "quick");
	if (!a.nwriters) {
		static const int smoke_w[] = {2}, quick_w[] = {1, 2, 4};
		a.nwriters = quick ? 3 : 1;
		a.writers = xrealloc(NULL, sizeof(int) * (size_t)a.nwriters);
		memcpy(a.writers, quick ? quick_w : smoke_w, sizeof(int) * (size_t)a.nwriters);
	}
	if (!a.ntypes) {
		a.types = lb_split_list("mutex_lock,rwsem_lock,spin_lock", "--types", &a.ntypes,
		                        err, sizeof(err));
		if (!a.types) {
			fprintf(stderr, "%s: %s\n", prog, err);
			goto out;
		}
	}
	/*
	 * locktorture's end wakes every writer (kthread_stop), which hides a lost
	 * wakeup: the test must outlast the hung-task timeout plus a check
	 */
	if (!a.torture_s)
		a.torture_s = quick ? 8 : 6;
	if (a.torture_s < a.hung_s + 3)
		fprintf(stderr,
		        "%s: warning: --torture-s %d is less than --hung-task-s + 3: a writer that "
		        "is never woken can go unseen\n",
		        prog, a.torture_s);
	accel = !strcmp(a.accel_name, "kvm")   ? ACCEL_KVM
	        : !strcmp(a.accel_name, "tcg") ? ACCEL_TCG
	                                       : ACCEL_AUTO;
	if (a.guest_dir)
		strf(guest_dir, sizeof(guest_dir), "%s", a.guest_dir);
	else
		exe_dir(guest_dir, sizeof(guest_dir));
	if (a.console_dir && mkdir(a.console_dir, 0755) && errno != EEXIST) {
		fprintf(stderr, "%s: cannot create %s: %s\n", prog, a.console_dir, strerror(errno));
		goto out;
	}
	if (a.build_json && result_load_file(a.build_json, &build, err, sizeof(err))) {
		fprintf(stderr, "%s: %s: %s\n", prog, a.build_json, err);
		goto out;
	}
	strf(tmpdir, sizeof(tmpdir), "%s/lockbench-kernel.XXXXXX",
	     getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(tmpdir)) {
		fprintf(stderr, "%s: cannot create a temporary folder: %s\n", prog,
		        strerror(errno));
		tmpdir[0] = 0;
		goto out;
	}
	strf(initrd, sizeof(initrd), "%s/initramfs.cpio", tmpdir);
	if (make_initramfs(guest_dir, initrd))
		goto out;

	b.cpus = a.cpus;
	strf(b.guest_out, sizeof(b.guest_out), "%s/ttyS1.out", tmpdir);
	strf(b.qemu_log, sizeof(b.qemu_log), "%s/qemu.err", tmpdir);
	result_fill_machine(&res);
	res.suite = xstrdup(quick ? "kernel-quick" : "kernel-smoke");
	res.variant = xstrdup(a.variant);
	res.round = a.round;
	copy_runs(&res, &build);
	FILE *tbl = a.json && !strcmp(a.json, "-") ? stderr : stdout;
	char common[512], tsc[64] = "";
	long khz = host_tsc_khz();
	if (khz > 0)
		strf(tsc, sizeof(tsc), " tsc_early_khz=%ld", khz);
	strf(common, sizeof(common), "console=ttyS0 loglevel=7 panic=-1 nokaslr tsc=reliable%s%s%s",
	     tsc, a.extra ? " " : "", a.extra ? a.extra : "");
	int nplanned = (a.no_torture ? 0 : a.ntypes * a.nwriters) + (a.no_lockbench ? 0 : 1);

	for (int i = 0; !a.no_torture && !qemu_down && i < a.ntypes; i++) {
		for (int k = 0; k < a.nwriters; k++) {
			char label[128], name[128];
			const char *type = a.types[i];
			strf(label, sizeof(label), "locktorture %s writers=%d", type, a.writers[k]);
			strf(name, sizeof(name), "locktorture-%s-w%d", type, a.writers[k]);
			b.label = label;
			b.end_tag = "End of test:";
			b.deadline_s = a.timeout_s ? a.timeout_s : a.torture_s + 60;
			strf(b.cmdline, sizeof(b.cmdline),
			     "%s sysctl.kernel.hung_task_timeout_secs=%d "
			     "sysctl.kernel.hung_task_check_interval_secs=1 locklab.mode=torture "
			     "locktorture.torture_type=%s locktorture.nwriters_stress=%d "
			     "locktorture.stat_interval=1 locktorture.shutdown_secs=%d "
			     "locktorture.stutter=0 locktorture.verbose=0",
			     common, a.hung_s, type, a.writers[k], a.torture_s);
			if (boot_with_accel(&b, a.kernel, initrd, &accel, tbl)) {
				failures++;
				qemu_down = true; /* twice in a row: the rest would fail alike */
				break;
			}
			nboots++;
			if (a.console_dir)
				save_console(a.console_dir, name, &b.console);
			size_t n;
			char **lines = console_lines(&b.console, &n);
			struct lb_run *run = result_add_run(&res, "locktorture", type);
			run_set_param_num(run, "writers", a.writers[k]);
			note_guest(&res, lines, n, accel == ACCEL_KVM ? "KVM" : "TCG");
			const char *kind;
			char msg[512];
			struct kbuf stacks = {0};
			if (detect_lockup(&b, lines, n, &kind, msg, sizeof(msg), &stacks)) {
				run_set_lockup(run, kind, msg, stacks.p);
				lockups++;
			} else {
				add_torture_metrics(run, lines, n, "Writes:", "writes_per_sec",
				                    "writes/s", 1, a.torture_s);
				add_torture_metrics(run, lines, n, "Reads :", "reads_per_sec",
				                    "reads/s", 1, a.torture_s);
				if (!run->nmetrics) {
					fprintf(stderr,
					        "%s: %s: no locktorture statistics on the "
					        "console\n",
					        prog, label);
					failures++;
				}
			}
			fprintf(tbl, "boot %d/%d %s: %.1f s (%s)\n", nboots, nplanned, label,
			        b.secs, accel == ACCEL_KVM ? "kvm" : "tcg");
			print_run_line(tbl, run);
			fflush(tbl);
			free(stacks.p);
			free(lines);
		}
	}
	if (!a.no_lockbench && !qemu_down) {
		b.label = "lockbench";
		b.end_tag = "LOCKLAB-END";
		b.deadline_s = a.timeout_s ? a.timeout_s : 300;
		strf(b.cmdline, sizeof(b.cmdline),
		     "%s sysctl.kernel.hung_task_timeout_secs=%d "
		     "sysctl.kernel.hung_task_check_interval_secs=1 locklab.mode=lockbench "
		     "locktorture.nwriters_stress=0 locklab.suite=%s locklab.workloads=%s "
		     "locklab.locks=%s",
		     common, a.hung_s, a.suite, a.workloads, a.locks);
		if (boot_with_accel(&b, a.kernel, initrd, &accel, tbl)) {
			failures++;
			qemu_down = true;
			goto write;
		}
		nboots++;
		if (a.console_dir)
			save_console(a.console_dir, "lockbench", &b.console);
		size_t n;
		int lb_rc;
		char **lines = console_lines(&b.console, &n);
		note_guest(&res, lines, n, accel == ACCEL_KVM ? "KVM" : "TCG");
		char *doc = guest_json(lines, n, &lb_rc);
		struct kbuf ttys1 = {0};
		if (doc && read_file(b.guest_out, &ttys1) == 0 && ttys1.len) {
			free(doc);
			doc = ttys1.p; /* the document came over ttyS1 */
		} else {
			free(ttys1.p);
		}
		size_t before = res.nruns;
		if (doc && *doc && result_load_buffer(doc, strlen(doc), &guest, err, sizeof(err))) {
			fprintf(stderr, "%s: guest lockbench document unreadable: %s\n", prog, err);
			failures++;
		} else if (doc && *doc) {
			copy_runs(&res, &guest);
			for (size_t r = before; r < res.nruns; r++)
				if (res.runs[r].lockup)
					lockups++;
		}
		const char *kind;
		char msg[512];
		struct kbuf stacks = {0};
		if (detect_lockup(&b, lines, n, &kind, msg, sizeof(msg), &stacks)) {
			/* the kernel hung or died under the guest workloads */
			struct lb_run *run = result_add_run(&res, "lockbench-guest", "kernel");
			run_set_param_str(run, "workloads", a.workloads);
			run_set_lockup(run, kind, msg, stacks.p);
			lockups++;
		} else if (!doc || !*doc) {
			fprintf(stderr, "%s: the guest lockbench printed no result (rc %d)\n", prog,
			        lb_rc);
			failures++;
		} else if (lb_rc != 0 && lb_rc != EXIT_LOCKUP) {
			fprintf(stderr, "%s: the guest lockbench exited %d\n", prog, lb_rc);
			failures++;
		}
		free(stacks.p);
		free(doc);
		fprintf(tbl, "boot %d/%d lockbench: %.1f s (%s)\n", nboots, nplanned, b.secs,
		        accel == ACCEL_KVM ? "kvm" : "tcg");
		for (size_t r = before; r < res.nruns; r++)
			print_run_line(tbl, &res.runs[r]);
		fflush(tbl);
		free(lines);
	}
write:
	if (qemu_down && nplanned - nboots - failures > 0)
		fprintf(tbl, "qemu failed twice: %d planned boots not run\n",
		        nplanned - nboots - failures);
	if (a.json && result_write_file(&res, a.json, err, sizeof(err))) {
		fprintf(stderr, "%s: %s\n", prog, err);
		goto out;
	}
	fprintf(tbl, "%d boots, %zu runs, %d locked up, %d failed, %.1f s\n", nboots, res.nruns,
	        lockups, failures, now_s() - t_all);
	rc = failures ? 1 : lockups ? EXIT_LOCKUP : 0;
out:
	if (tmpdir[0]) {
		unlink(initrd);
		unlink(b.guest_out);
		unlink(b.qemu_log);
		rmdir(tmpdir);
	}
	free(b.console.p);
	lb_free_list(a.types);
	free(a.writers);
	result_release(&build);
	result_release(&guest);
	result_release(&res);
	return rc;
}

int kernel_main(int argc, char **argv)
{
	if (argc < 2) {
		print_help(stderr);
		return EXIT_USAGE;
	}
	const char *sub = argv[1];
	if (!strcmp(sub, "--help") || !strcmp(sub, "-h") || !strcmp(sub, "help")) {
		print_help(stdout);
		return 0;
	}
	if (!strcmp(sub, "build"))
		return cmd_build(argc - 1, argv + 1);
	if (!strcmp(sub, "run"))
		return cmd_run(argc - 1, argv + 1);
	fprintf(stderr, "%s: unknown subcommand '%s' (valid: build, run)\n", prog, sub);
	return EXIT_USAGE;
}
