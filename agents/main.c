/*
 * locklab-agent - runs on a test machine, claims jobs from locklab-server,
 * measures base and patched, posts the results.
 */
#include <curl/curl.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "addrpolicy.h"
#include "agent.h"
#include "fsutil.h"
#include "kernel_cache.h"
#include "log.h"
#include "options.h"
#include "progdir.h"
#include "sandbox.h"
#include "spawn.h"
#include "spool.h"
#include "sshpin.h"
#include "version.h"

#ifndef LOCKLAB_SOURCE_DIR
#define LOCKLAB_SOURCE_DIR "."
#endif

static struct agent *the_agent;

static void on_signal(int sig)
{
	if (the_agent)
		atomic_store(&the_agent->stop, 1);
	spawn_request_stop();
}

static struct agent_cfg cfg; /* its defaults are opts[]'s (parse_options) */
static bool unsandboxed;
static const char *sandbox_user;
static char host[256], cpus[16], lockbench_beside[4096];

static struct opt opts[] = {
    {"server", "LOCKLAB_SERVER", OPT_STR, &cfg.server, "http://127.0.0.1:8080", 0, 0,
     "locklab-server base URL", "URL"},
    {"token", "LOCKLAB_AGENT_TOKEN", OPT_STR, &cfg.token, NULL, 0, 0,
     "agent token from POST /api/v1/agents/register", "T"},
    {"token-file", "LOCKLAB_AGENT_TOKEN_FILE", OPT_STR, &cfg.token_file, NULL, 0, 0,
     "read the token from this file (hidden from submitted code)", "PATH"},
    {"workdir", "LOCKLAB_WORKDIR", OPT_STR, &cfg.workdir, "var/agent", 0, 0,
     "mirrors, worktrees, builds and the spool", "DIR"},
    {"name", "LOCKLAB_AGENT_NAME", OPT_STR, &cfg.name, host, 0, 0,
     "name shown in logs (default: this host's name)", "N"},
    {"native-tree", "LOCKLAB_NATIVE_TREE", OPT_STR, &cfg.native_tree, LOCKLAB_SOURCE_DIR, 0, 0,
     "tree holding lockbench when a job names none", "URL"},
    {"once", NULL, OPT_FLAG, &cfg.once, NULL, 0, 0, "run at most one job, then exit", NULL},
    {"build-timeout", "LOCKLAB_BUILD_TIMEOUT", OPT_INT, &cfg.build_timeout_s, "1800", 1, 0,
     "wall-clock limit of one build", "S"},
    {"run-timeout", "LOCKLAB_RUN_TIMEOUT", OPT_INT, &cfg.run_timeout_s, "900", 1, 0,
     "wall-clock limit of one lockbench run", "S"},
    {"users-run-timeout", "LOCKLAB_USERS_RUN_TIMEOUT", OPT_INT, &cfg.users_timeout_s, "10800", 1, 0,
     "the same for a run of the users suite (AIM7's bands of 100, 1000 and 2000 users)", "S"},
    {"max-prefixes", "LOCKLAB_MAX_PREFIXES", OPT_INT, &cfg.max_prefixes, "5", 1, 0,
     "measure every prefix of series up to N patches", "N"},
    {"poll", "LOCKLAB_POLL", OPT_INT, &cfg.poll_s, "5", 1, 0,
     "seconds between claims when the queue is empty", "S"},
    {"jobs", "LOCKLAB_JOBS", OPT_INT, &cfg.jobs, cpus, 1, 0,
     "make -j for builds (default: this host's CPUs)", "N"},
    {"lockbench", "LOCKLAB_LOCKBENCH", OPT_STR, &cfg.lockbench, lockbench_beside, 0, 0,
     "trusted lockbench for kernel trees (kernel build/run; default: the lockbench beside this "
     "program)",
     "PATH"},
    {"base-cache", "LOCKLAB_BASE_CACHE", OPT_STR, &cfg.base_cache, NULL, 0, 0,
     "base lockbench builds (binary and objects, where patched builds and new bases start "
     "from) kept by commit, which agents on this machine may share (unset: WORKDIR/base-cache)",
     "DIR"},
    {"kernel-cache", "LOCKLAB_KERNEL_CACHE", OPT_STR, &cfg.kernel_cache, NULL, 0, 0,
     "base kernel builds kept by commit and configuration, shared by every agent on the machine "
     "(default: " KCACHE_DEFAULT ", else WORKDIR/kernel-cache when that cannot be made)",
     "DIR"},
    {"kernel-debug", "LOCKLAB_KERNEL_DEBUG", OPT_ON_OFF, &cfg.kernel_debug, "on", 0, 0,
     "judge a kernel job for correctness first: boot base and patched debug kernels (lockdep, "
     "might_sleep, hung tasks); a new splat or a lockup ends the job before any measuring round",
     "on|off"},
    {"fetch-allow", "LOCKLAB_FETCH_ALLOW", OPT_STR, &cfg.fetch_allow, "", 0, 0,
     "internal addresses a submitted git URL may reach: host:port or CIDR entries, comma-separated",
     "LIST"},
    {"allow-local-trees", "LOCKLAB_ALLOW_LOCAL_TREES", OPT_FLAG, &cfg.allow_local_trees, NULL, 0, 0,
     "fetch a job's commits from its tree's local path or file:// URL (a server with "
     "--allow-local-trees on this filesystem: its tracked trees)",
     NULL},
    {"sandbox-mem", "LOCKLAB_SANDBOX_MEM", OPT_LONG, &cfg.sandbox_mem_mb, "8192", 1, 0,
     "address space of each process built from a submission", "MB"},
    {"sandbox-procs", "LOCKLAB_SANDBOX_PROCS", OPT_INT, &cfg.sandbox_procs, "4096", 1, 0,
     "processes and threads it may have at once", "N"},
    {"sandbox-fsize", "LOCKLAB_SANDBOX_FSIZE", OPT_LONG, &cfg.sandbox_fsize_mb, "4096", 1, 0,
     "largest file it may write", "MB"},
    {"sandbox-tmp", "LOCKLAB_SANDBOX_TMP", OPT_LONG, &cfg.sandbox_tmp_mb, "512", 1, 0,
     "size of its private /tmp", "MB"},
    {"duet", "LOCKLAB_DUET", OPT_ON_OFF, &cfg.duet, "off", 0, 0,
     "run single-thread points of base and patched at the same time, each on its own half of the "
     "CPUs",
     "on|off"},
    {"lockstep", "LOCKLAB_LOCKSTEP", OPT_ON_OFF, &cfg.lockstep, "on", 0, 0,
     "(without a duet) run them in turns of 0.5 ms on one CPU, and hot in turns of 1 ms on every "
     "CPU, each side timing only its own turns",
     "on|off"},
    {"abba", "LOCKLAB_ABBA", OPT_ON_OFF, &cfg.abba, "off", 0, 0,
     "(without a duet or lockstep) run them in turns, a sample (~0.1 s) a side, A B B A", "on|off"},
    {"noise-interval", "LOCKLAB_NOISE_INTERVAL", OPT_INT, &cfg.noise_interval_s, "86400", 0, 0,
     "measure this machine's A/A spread per suite point (the job's base lockbench on both sides) "
     "at the first job of a suite and again after S seconds; the server plans rounds from it; 0: "
     "never",
     "S"},
    {"noise-rounds", "LOCKLAB_NOISE_ROUNDS", OPT_INT, &cfg.noise_rounds, "8", 3, 0,
     "paired A/A rounds of one measurement", "N"},
    {"sandbox-user", "LOCKLAB_SANDBOX_USER", OPT_STR, &sandbox_user, "65534:65534", 0, 0,
     "when the agent runs as root, whose code from a submission runs as (no other process should "
     "run as it)",
     "UID:GID"},
    {"allow-unsandboxed", "LOCKLAB_ALLOW_UNSANDBOXED", OPT_FLAG, &unsandboxed, NULL, 0, 0,
     "run submitted code even when bubblewrap does not work here (it can then read and write all "
     "the agent can)",
     NULL},
};

#define NOPTS (sizeof(opts) / sizeof(opts[0]))

static const struct opt_cmd cmds[] = {{"help", "this text"}, {"version", "the version"}};

static const struct opt_table table = {
    .prog = "locklab-agent",
    .opts = opts,
    .n = NOPTS,
    .cmds = cmds,
    .ncmds = 2,
    .intro = "usage: locklab-agent --server URL --token T --workdir DIR [options]\n\n"
             "Every option but --once can also be set by its variable; flags win.\n\n",
    .outro = "\nSIGTERM finishes the current run and hands the job back.\n",
};

/* path made absolute against the working folder, in buf (which it returns) */
static const char *absolute(const char *path, char *buf, size_t len)
{
	char cwd[2048];
	if (path[0] == '/' || !getcwd(cwd, sizeof(cwd)))
		snprintf(buf, len, "%s", path);
	else
		snprintf(buf, len, "%s/%s", cwd, path);
	return buf;
}

/* Defaults, then variables, then flags into cfg; -1 to run, else the exit status. */
static int parse_options(int argc, char **argv)
{
	gethostname(host, sizeof(host) - 1);
	snprintf(cpus, sizeof(cpus), "%ld", sysconf(_SC_NPROCESSORS_ONLN));
	/* build/lockbench in a checkout, PREFIX/bin/lockbench once installed */
	if (!progdir_path("lockbench", lockbench_beside, sizeof(lockbench_beside)))
		snprintf(lockbench_beside, sizeof(lockbench_beside), "%s",
		         LOCKLAB_SOURCE_DIR "/build/lockbench");
	switch (opts_parse(&table, argc, argv)) {
	case 0:
		return -1;
	case 1:
		opts_usage(&table, stdout);
		return 0;
	case 2:
		version_print(stdout, "locklab-agent");
		return 0;
	default:
		return 2;
	}
}

/*
 * The agent's token (from --token-file when given), server URL and fetch
 * allow list checked: 0, or the exit status after saying what is wrong.
 */
static int settle_token(void)
{
	static char file_token[512];
	if (!cfg.token && cfg.token_file) {
		FILE *tf = fopen(cfg.token_file, "r");
		if (!tf || !fgets(file_token, sizeof(file_token), tf)) {
			fprintf(stderr, "locklab-agent: cannot read the token from %s: %s\n",
			        cfg.token_file, tf ? "empty file" : strerror(errno));
			if (tf)
				fclose(tf);
			return 2;
		}
		fclose(tf);
		file_token[strcspn(file_token, "\r\n")] = 0;
		cfg.token = file_token;
	}
	if (!cfg.token) {
		fprintf(stderr, "locklab-agent: no token (--token or LOCKLAB_AGENT_TOKEN); get one "
		                "with POST /api/v1/agents/register\n");
		return 2;
	}
	if (strncmp(cfg.server, "http://", 7) && strncmp(cfg.server, "https://", 8)) {
		fprintf(stderr, "locklab-agent: --server must be an http:// or https:// URL\n");
		return 2;
	}
	/* a bad allow list is said now, not as every git submission's failure */
	struct addrpolicy allow = ADDRPOLICY_INIT;
	char aerr[256];
	if (addrpolicy_init(&allow, cfg.fetch_allow, aerr, sizeof(aerr))) {
		fprintf(stderr, "locklab-agent: --fetch-allow or LOCKLAB_FETCH_ALLOW: %s\n", aerr);
		return 2;
	}
	addrpolicy_release(&allow);
	return 0;
}

/* The agent's folders made absolute, and its caches chosen where not given. */
static void settle_folders(void)
{
	/*
	 * Folders the sandbox hides or binds must be absolute: bubblewrap reads
	 * its destinations from the new root, not from our working folder.
	 */
	static char wd[4096], tf[4096], lb[4096], kc[4096], bc[4096];
	cfg.workdir = absolute(cfg.workdir, wd, sizeof(wd));
	cfg.lockbench = absolute(cfg.lockbench, lb, sizeof(lb));
	if (cfg.token_file)
		cfg.token_file = absolute(cfg.token_file, tf, sizeof(tf));
	if (cfg.kernel_cache)
		cfg.kernel_cache = absolute(cfg.kernel_cache, kc, sizeof(kc));
	if (cfg.base_cache)
		cfg.base_cache = absolute(cfg.base_cache, bc, sizeof(bc));
	static char bcache[4096];
	if (!cfg.base_cache) {
		snprintf(bcache, sizeof(bcache), "%s/base-cache", cfg.workdir);
		cfg.base_cache = bcache;
	}
	static char kcache[4096];
	if (!cfg.kernel_cache && !fs_mkdirs(KCACHE_DEFAULT) && !access(KCACHE_DEFAULT, W_OK))
		cfg.kernel_cache = KCACHE_DEFAULT;
	if (!cfg.kernel_cache) {
		snprintf(kcache, sizeof(kcache), "%s/kernel-cache", cfg.workdir);
		cfg.kernel_cache = kcache;
		agent_log("info", 0,
		          "cannot write " KCACHE_DEFAULT
		          ": kernel builds are kept in %s, for this agent only",
		          kcache);
	}
}

/* The sandbox's user checked and set: 0, or the exit status after saying what is wrong. */
static int settle_sandbox(void)
{
	/* the token stays in this process: children get a cleared environment anyway */
	unsetenv("LOCKLAB_AGENT_TOKEN");
	sandbox_allow_unsandboxed(unsandboxed);
	unsigned long su, sg;
	char *end;
	su = strtoul(sandbox_user, &end, 10);
	sg = *end == ':' ? strtoul(end + 1, &end, 10) : su;
	if (*end || su == 0 || sg == 0 || su > 0x7fffffff || sg > 0x7fffffff) {
		fprintf(stderr,
		        "locklab-agent: --sandbox-user '%s' is not UID:GID of a user other "
		        "than root\n",
		        sandbox_user);
		return 2;
	}
	sandbox_set_user((uid_t)su, (gid_t)sg);
	if (!sandbox_available() && !unsandboxed) {
		fprintf(stderr,
		        "locklab-agent: bubblewrap (bwrap) does not work on this machine, "
		        "so submitted code cannot be sandboxed; install it, or run with "
		        "--allow-unsandboxed to run submitted code with the agent's rights\n");
		return 2;
	}
	return 0;
}

static int agent_main(int argc, char **argv)
{
	struct agent ag;
	int rc = parse_options(argc, argv);

	if (rc >= 0)
		return rc;
	rc = settle_token();
	if (rc)
		return rc;
	settle_folders();
	rc = settle_sandbox();
	if (rc)
		return rc;
	rc = 1;
	if (curl_global_init(CURL_GLOBAL_DEFAULT)) {
		fprintf(stderr, "locklab-agent: cannot initialise libcurl\n");
		return 1;
	}
	if (agent_init(&ag, &cfg))
		goto out_curl;
	the_agent = &ag;
	struct sigaction sa = {.sa_handler = on_signal};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	agent_log(sandbox_available() ? "info" : "warn", 0,
	          "agent %s on %s, workdir %s, untrusted code runs in %s; %s", cfg.name, cfg.server,
	          cfg.workdir, sandbox_describe(), spawn_describe_limits());

	int backoff = 1;
	rc = 0;
	while (!atomic_load(&ag.stop)) {
		int r = agent_step(&ag);
		if (r == -2) {
			rc = 1; /* a wrong token does not get better by retrying */
			break;
		}
		if (r == 1) {
			backoff = 1;
			if (cfg.once)
				break;
			continue;
		}
		if (r == 0 && cfg.once)
			break;
		int wait = r < 0 ? backoff : cfg.poll_s;
		if (r < 0)
			backoff = backoff < 30 ? backoff * 2 : 30;
		for (int i = 0; i < wait * 10 && !atomic_load(&ag.stop); i++)
			usleep(100000);
	}
	if (spool_flush(ag.spool_dir, &ag.api) > 0)
		agent_log("warn", 0, "results still in the spool %s: delivered at the next start",
		          ag.spool_dir);
	agent_log("info", 0, "agent stopped");
	agent_release(&ag);
out_curl:
	curl_global_cleanup();
	return rc;
}

int main(int argc, char **argv)
{
	/* started by git as its ssh (GIT_SSH) for a submitted ssh:// URL */
	if (sshpin_invoked(argv[0]))
		return sshpin_main(argc, argv, spawn_replace);
	return agent_main(argc, argv);
}
