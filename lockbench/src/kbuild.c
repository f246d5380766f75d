/*
 * kbuild.c - `lockbench kernel build` (kbuild.h): tinyconfig + the
 * project's fragment merged with merge_config.sh, then `make O=OUT
 * bzImage`.  OUT defaults to TREE/locklab-out: a direct child of the tree
 * makes kbuild use the relative srctree "..", so a copy of tree and OUT
 * elsewhere (the patched variant) rebuilds only what its patch touched.
 * The build time is the kernbench metric build_s.
 */
#include "kbuild.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "boot.h"
#include "kernel_cli.h"
#include "options.h"
#include "result.h"
#include "strutil.h"
#include "util.h"

static const char *prog = "lockbench kernel";

/* Beside .config: the fragment's options the configuration dropped, and why. */
#define DROPPED_FILE "locklab-dropped.config"

/* First existing file among $LOCKLAB_KERNEL_DIR/name, exe/../lockbench/kernel/name. */
static int find_shipped(const char *name, char *out, size_t len)
{
	char dir[PATH_MAX];
	const char *env = getenv("LOCKLAB_KERNEL_DIR");
	if (env) {
		lb_pathf(out, len, "%s/%s", env, name);
		if (lb_is_file(out))
			return 0;
	}
	lb_exe_dir(dir, sizeof(dir));
	lb_pathf(out, len, "%s/../lockbench/kernel/%s", dir, name);
	if (lb_is_file(out))
		return 0;
	lb_pathf(out, len, "%s/%s", dir, name);
	return lb_is_file(out) ? 0 : -1;
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

/* The tree's Kconfig files declare the symbol NAME (config or menuconfig). */
static bool kconfig_declares(const char *tree, const char *name)
{
	char re[256];
	lb_pathf(re, sizeof(re), "^[[:space:]]*(menu)?config[[:space:]]+%s[[:space:]]*$", name);
	char *grep[] = {"grep", "-rqsE", "--include=Kconfig*", "--exclude-dir=.git",
	                "-e",   re,      (char *)tree,         NULL};
	return run_cmd(grep, "/dev/null") == 0;
}

/*
 * Check that every "CONFIG_X=v" of the fragment made it into .config;
 * olddefconfig silently drops an option this tree does not know (another
 * kernel version) and one whose dependencies it does not meet.  Each
 * dropped option is said on stderr and in the build log with its reason,
 * and listed, one "CONFIG_X reason" a line, in the file dropped (rewritten).
 * Returns the number dropped, -1 when a file cannot be read;
 * LOCK_TORTURE_TEST missing is fatal for the caller.
 */
static int check_config(const char *tree, const char *fragment, const char *config, const char *log,
                        const char *dropped, bool *torture_ok)
{
	struct strutil_buf frag = STRUTIL_BUF_INIT, conf = STRUTIL_BUF_INIT;
	int missing = 0;
	FILE *logf = NULL, *df = NULL;

	*torture_ok = false;
	if (strutil_read_file(fragment, &frag) || strutil_read_file(config, &conf)) {
		missing = -1;
		goto out;
	}
	logf = fopen(log, "a");
	df = fopen(dropped, "w");
	for (char *line = frag.buf, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		if (strncmp(line, "CONFIG_", 7))
			continue;
		char want[512], name[256];
		lb_pathf(want, sizeof(want), "\n%s\n", line);
		/* .config starts with a comment, so every option follows a newline */
		if (strstr(conf.buf, want)) {
			if (!strcmp(line, "CONFIG_LOCK_TORTURE_TEST=y"))
				*torture_ok = true;
			continue;
		}
		lb_pathf(name, sizeof(name), "%.*s", (int)strcspn(line + 7, "="), line + 7);
		const char *why = kconfig_declares(tree, name)
		                      ? "its dependencies are not met in this tree"
		                      : "this kernel version has no such option";
		fprintf(stderr, "%s: config: dropped %s (%s)\n", prog, line, why);
		if (logf)
			fprintf(logf, "locklab: config: dropped %s (%s)\n", line, why);
		if (df)
			fprintf(df, "CONFIG_%s %s\n", name, why);
		missing++;
	}
out:
	if (df)
		fclose(df);
	if (logf)
		fclose(logf);
	strutil_buf_release(&frag);
	strutil_buf_release(&conf);
	return missing;
}

/*
 * The options the last configuration dropped (check_config's file), as
 * "CONFIG_A,CONFIG_B" (a new string; "" for none).
 */
static char *dropped_list(const char *dropped)
{
	struct strutil_buf b = STRUTIL_BUF_INIT, list = STRUTIL_BUF_INIT;
	if (strutil_read_file(dropped, &b) == 0) {
		for (char *line = b.buf, *next; line && *line; line = next) {
			next = strchr(line, '\n');
			if (next)
				*next++ = 0;
			strutil_buf_addf(&list, "%s%.*s", list.len ? "," : "",
			                 (int)strcspn(line, " "), line);
		}
	}
	strutil_buf_release(&b);
	return strutil_buf_detach(&list);
}

/* Print the compiler's error lines (the last 20) from the build log. */
static void print_build_errors(const char *log)
{
	struct strutil_buf b = STRUTIL_BUF_INIT;
	const char *lines[20];
	size_t n = 0;

	if (strutil_read_file(log, &b))
		return;
	for (char *line = b.buf, *next; line && *line; line = next) {
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
	strutil_buf_release(&b);
}

/* The fragment differs from the copy kept beside the last configuration. */
static bool fragment_changed(const char *fragment, const char *kept)
{
	struct strutil_buf a = STRUTIL_BUF_INIT, b = STRUTIL_BUF_INIT;
	bool changed = strutil_read_file(fragment, &a) || strutil_read_file(kept, &b) ||
	               a.len != b.len || memcmp(a.buf, b.buf, a.len);
	strutil_buf_release(&a);
	strutil_buf_release(&b);
	return changed;
}

static int configure(const char *tree, const char *out, const char *fragment, const char *log)
{
	char odir[PATH_MAX + 4], merge[PATH_MAX], kept[PATH_MAX], config[PATH_MAX],
	    dropped[PATH_MAX];
	bool torture_ok;
	struct strutil_buf frag = STRUTIL_BUF_INIT;
	int rc = -1;

	lb_pathf(odir, sizeof(odir), "O=%s", out);
	lb_pathf(merge, sizeof(merge), "%s/scripts/kconfig/merge_config.sh", tree);
	lb_pathf(kept, sizeof(kept), "%s/locklab.config", out);
	lb_pathf(config, sizeof(config), "%s/.config", out);
	lb_pathf(dropped, sizeof(dropped), "%s/" DROPPED_FILE, out);
	unlink(kept);
	char *tiny[] = {"make", "-C", (char *)tree, odir, "LOCALVERSION=", "tinyconfig", NULL};
	char *merge_argv[] = {merge, "-m", "-O", (char *)out, config, (char *)fragment, NULL};
	char *olddef[] = {"make", "-C", (char *)tree, odir, "LOCALVERSION=", "olddefconfig", NULL};
	if (run_cmd(tiny, log) || run_cmd(merge_argv, log) || run_cmd(olddef, log)) {
		fprintf(stderr, "%s: configuring the kernel failed (log: %s)\n", prog, log);
		print_build_errors(log);
		goto out;
	}
	if (check_config(tree, fragment, config, log, dropped, &torture_ok) < 0 || !torture_ok) {
		fprintf(stderr,
		        "%s: CONFIG_LOCK_TORTURE_TEST=y is not in %s; the tree cannot run "
		        "locktorture\n",
		        prog, config);
		goto out;
	}
	/* keep the fragment beside .config: a changed fragment reconfigures */
	if (strutil_read_file(fragment, &frag) == 0) {
		FILE *f = fopen(kept, "w");
		if (f) {
			fwrite(frag.buf, 1, frag.len, f);
			fclose(f);
		}
	}
	rc = 0;
out:
	strutil_buf_release(&frag);
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
	lb_pathf(ref, sizeof(ref), "%s/tools/objtool/objtool", base);
	lb_pathf(tools, sizeof(tools), "%s/tools", out);
	if (!lb_is_file(ref))
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

/*
 * The debug variant's fragment: the measuring fragment with
 * locklab-debug.config appended, written as OUT/locklab-fragment.config
 * (merge_config.sh takes one file; the copy kept beside .config then says
 * when either changed).  out_path receives its path.  Returns 0 or -1.
 */
static int debug_fragment(const char *base, const char *out, char *out_path, size_t len)
{
	char dbg[PATH_MAX], path[PATH_MAX + 32];
	struct strutil_buf b = STRUTIL_BUF_INIT;
	int rc = -1;

	if (find_shipped("locklab-debug.config", dbg, sizeof(dbg))) {
		fprintf(stderr, "%s: cannot find lockbench/kernel/locklab-debug.config\n", prog);
		goto out;
	}
	if (strutil_read_file(base, &b) || strutil_read_file(dbg, &b)) {
		fprintf(stderr, "%s: cannot read %s or %s: %s\n", prog, base, dbg, strerror(errno));
		goto out;
	}
	lb_pathf(path, sizeof(path), "%s/locklab-fragment.config", out);
	FILE *f = fopen(path, "w");
	bool written = f && fwrite(b.buf, 1, b.len, f) == b.len;
	if (f && fclose(f))
		written = false;
	if (!written) {
		fprintf(stderr, "%s: cannot write %s: %s\n", prog, path, strerror(errno));
		goto out;
	}
	lb_pathf(out_path, len, "%s", path);
	rc = 0;
out:
	strutil_buf_release(&b);
	return rc;
}

struct build_args {
	const char *tree, *config, *out, *reuse, *json, *variant;
	int jobs, round;
	bool debug; /* the debug variant: locklab-debug.config on top, its own OUT */
};

/*
 * The options into a (what a held when called is their default): -1 to
 * build, else the exit status (usage printed).
 */
static int kbuild_parse(int argc, char **argv, struct build_args *a)
{
	struct opt opts[] = {
	    {"tree", NULL, OPT_STR, &a->tree, NULL, 0, 0, NULL, NULL},
	    {"config", NULL, OPT_STR, &a->config, NULL, 0, 0, NULL, NULL},
	    {"out", NULL, OPT_STR, &a->out, NULL, 0, 0, NULL, NULL},
	    {"reuse", NULL, OPT_STR, &a->reuse, NULL, 0, 0, NULL, NULL},
	    {"jobs", NULL, OPT_INT, &a->jobs, NULL, 1, 1024, NULL, NULL},
	    {"json", NULL, OPT_STR, &a->json, NULL, 0, 0, NULL, NULL},
	    {"variant", NULL, OPT_STR, &a->variant, NULL, 0, 0, NULL, NULL},
	    {"round", NULL, OPT_INT, &a->round, NULL, 0, 1000000, NULL, NULL},
	    {"debug", NULL, OPT_FLAG, &a->debug, NULL, 0, 0, NULL, NULL},
	};
	static const struct opt_cmd help[] = {{"help", NULL}};
	const struct opt_table t = {
	    .prog = "lockbench kernel build",
	    .opts = opts,
	    .n = sizeof(opts) / sizeof(opts[0]),
	    .cmds = help,
	    .ncmds = 1,
	};
	int rc = kernel_opts(&t, argc, argv);

	if (rc >= 0)
		return rc;
	rc = kernel_check_variant(a->variant);
	if (rc)
		return rc;
	if (!a->tree)
		return kernel_usage("build needs --tree DIR%s", "");
	return -1;
}

/*
 * The tree, the config fragment and the output folder as real paths
 * (PATH_MAX each); the output folder made.  0, or -1 with the reason said.
 */
static int kbuild_paths(const struct build_args *a, char *tree, char *fragment, char *out)
{
	char path[PATH_MAX + 32];

	lb_pathf(path, sizeof(path), "%s/Makefile", a->tree);
	if (!realpath(a->tree, tree) || !lb_is_file(path)) {
		fprintf(stderr, "%s: %s is not a kernel source tree (no Makefile)\n", prog,
		        a->tree);
		return -1;
	}
	if (a->config) {
		if (!realpath(a->config, fragment) || !lb_is_file(fragment)) {
			fprintf(stderr, "%s: cannot read config fragment %s\n", prog, a->config);
			return -1;
		}
	} else if (find_shipped("locklab.config", fragment, PATH_MAX)) {
		fprintf(stderr, "%s: cannot find lockbench/kernel/locklab.config; use --config\n",
		        prog);
		return -1;
	}
	if (a->out) {
		if (mkdir(a->out, 0755) && errno != EEXIST) {
			fprintf(stderr, "%s: cannot create %s: %s\n", prog, a->out,
			        strerror(errno));
			return -1;
		}
		if (!realpath(a->out, out)) {
			fprintf(stderr, "%s: %s: %s\n", prog, a->out, strerror(errno));
			return -1;
		}
	} else {
		lb_pathf(out, PATH_MAX, "%s/%s", tree,
		         a->debug ? "locklab-debug-out" : "locklab-out");
		if (mkdir(out, 0755) && errno != EEXIST) {
			fprintf(stderr, "%s: cannot create %s: %s\n", prog, out, strerror(errno));
			return -1;
		}
	}
	return 0;
}

/* The kernbench document of a build that took secs into out. */
static int kbuild_write_json(const struct build_args *a, const char *out, double secs)
{
	struct lb_result res;
	char err[512];
	int rc = -1;

	result_init(&res);
	result_fill_machine(&res);
	res.suite = strutil_xstrdup("kernel");
	res.variant = strutil_xstrdup(a->variant);
	res.round = a->round;
	struct lb_run *run = result_add_run(&res, "kernbench", "kernel");
	run_set_param_num(run, "jobs", a->jobs);
	if (a->debug)
		run_set_param_str(run, "config", "debug");
	/* a tree of another version: what the fragment lost there */
	char dropped[PATH_MAX + 32];
	lb_pathf(dropped, sizeof(dropped), "%s/" DROPPED_FILE, out);
	char *list = dropped_list(dropped);
	if (*list)
		run_set_param_str(run, "config_dropped", list);
	free(list);
	struct lb_metric *m = run_add_metric(run, "build_s", "s", false, secs);
	metric_add_sample(m, secs);
	if (result_write_file(&res, a->json, err, sizeof(err))) {
		fprintf(stderr, "%s: %s\n", prog, err);
		goto out;
	}
	rc = 0;
out:
	result_release(&res);
	return rc;
}

int kbuild_main(int argc, char **argv)
{
	struct build_args a = {.variant = "base", .jobs = lb_online_cpus()};
	char fragment[PATH_MAX], out[PATH_MAX], tree[PATH_MAX], log[PATH_MAX + 32],
	    image[PATH_MAX + 32], path[PATH_MAX + 32];
	int rc = 1, lockfd = -1;
	bool reused = false;

	rc = kbuild_parse(argc, argv, &a);
	if (rc >= 0)
		goto out;
	rc = 1;
	if (kbuild_paths(&a, tree, fragment, out))
		goto out;
	/* two builds into one folder would corrupt each other */
	lb_pathf(path, sizeof(path), "%s/.locklab-lock", out);
	lockfd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (lockfd < 0 || flock(lockfd, LOCK_EX)) {
		fprintf(stderr, "%s: cannot lock %s: %s\n", prog, path, strerror(errno));
		goto out;
	}
	lb_pathf(log, sizeof(log), "%s/locklab-build.log", out);
	unlink(log);
	if (a.debug && debug_fragment(fragment, out, fragment, sizeof(fragment)))
		goto out;
	lb_pathf(path, sizeof(path), "%s/.config", out);
	if (a.reuse && !lb_is_file(path)) {
		char src[PATH_MAX + 8];
		lb_pathf(src, sizeof(src), "%s/.", a.reuse);
		if (!lb_is_dir(a.reuse)) {
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
	double t0 = boot_now_s();
	char kept[PATH_MAX + 32];
	lb_pathf(kept, sizeof(kept), "%s/locklab.config", out);
	if (!lb_is_file(path) || fragment_changed(fragment, kept)) {
		if (configure(tree, out, fragment, log))
			goto out;
	}
	char odir[PATH_MAX + 4], jobs[32];
	lb_pathf(odir, sizeof(odir), "O=%s", out);
	lb_pathf(jobs, sizeof(jobs), "-j%d", a.jobs);
	/*
	 * LOCALVERSION= (empty): no "+" for a git tree, so a copy without .git
	 * has the same kernel release and the same objects
	 */
	if (reused && objtool_as_base(tree, out, a.reuse, odir, log))
		goto out;
	char *make[] = {"make", "-C", tree, odir, "LOCALVERSION=", jobs, "bzImage", NULL};
	int st = run_cmd(make, log);
	double secs = boot_now_s() - t0;
	if (st) {
		fprintf(stderr, "%s: kernel build failed after %.1f s (log: %s)\n", prog, secs,
		        log);
		print_build_errors(log);
		goto out;
	}
	lb_pathf(image, sizeof(image), "%s/arch/x86/boot/bzImage", out);
	if (!lb_is_file(image)) {
		fprintf(stderr, "%s: make succeeded but %s is missing\n", prog, image);
		goto out;
	}
	FILE *tbl = a.json && !strcmp(a.json, "-") ? stderr : stdout;
	fprintf(tbl, "kernel %s%s built in %.1f s%s: %s\n", a.variant, a.debug ? " (debug)" : "",
	        secs, reused ? " (incremental, from --reuse)" : "", image);
	if (a.json && kbuild_write_json(&a, out, secs))
		goto out;
	rc = 0;
out:
	if (lockfd >= 0)
		close(lockfd);
	return rc;
}
