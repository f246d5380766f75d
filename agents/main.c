/*
 * locklab-agent - runs on a test machine, claims jobs from locklab-server,
 * measures base and patched, posts the results.
 */
#include <curl/curl.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "addrpolicy.h"
#include "agent.h"
#include "log.h"
#include "sandbox.h"
#include "spawn.h"
#include "spool.h"
#include "sshpin.h"

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

static const char *env_or(const char *name, const char *def)
{
	const char *v = getenv(name);
	return v && *v ? v : def;
}

static void usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: locklab-agent --server URL --token T --workdir DIR [options]\n"
	    "\n"
	    "  --server URL        locklab-server base URL [$LOCKLAB_SERVER, "
	    "http://127.0.0.1:8080]\n"
	    "  --token T           agent token from POST /api/v1/agents/register "
	    "[$LOCKLAB_AGENT_TOKEN]\n"
	    "  --workdir DIR       mirrors, worktrees, builds and the spool "
	    "[$LOCKLAB_WORKDIR, var/agent]\n"
	    "  --name N            name shown in logs [$LOCKLAB_AGENT_NAME, hostname]\n"
	    "  --native-tree URL   tree holding lockbench when a job names none "
	    "[$LOCKLAB_NATIVE_TREE, %s]\n"
	    "  --once              run at most one job, then exit\n"
	    "  --build-timeout S   wall-clock limit of one build [$LOCKLAB_BUILD_TIMEOUT, 1800]\n"
	    "  --run-timeout S     wall-clock limit of one lockbench run "
	    "[$LOCKLAB_RUN_TIMEOUT, 900]\n"
	    "  --max-prefixes N    measure every prefix of series up to N patches "
	    "[$LOCKLAB_MAX_PREFIXES, 5]\n"
	    "  --poll S            seconds between claims when the queue is empty [5]\n"
	    "  --jobs N            make -j for builds [number of CPUs]\n"
	    "  --lockbench PATH    trusted lockbench for kernel trees (kernel build/run)\n"
	    "                      [$LOCKLAB_LOCKBENCH, %s/build/lockbench]\n"
	    "  --kernel-cache DIR  base kernel builds kept by commit [$LOCKLAB_KERNEL_CACHE,\n"
	    "                      WORKDIR/kernel-cache]\n"
	    "  $LOCKLAB_FETCH_ALLOW  internal addresses a submitted git URL may reach: host:port\n"
	    "                      or CIDR entries, comma-separated (default none)\n"
	    "  --token-file PATH   read the token from this file (hidden from submitted code)\n"
	    "                      [$LOCKLAB_AGENT_TOKEN_FILE]\n"
	    "  --sandbox-mem MB    address space of each process built from a submission [8192]\n"
	    "  --sandbox-procs N   processes and threads it may have at once [4096]\n"
	    "  --sandbox-fsize MB  largest file it may write [4096]\n"
	    "  --sandbox-tmp MB    size of its private /tmp [512]\n"
	    "  --duet on|off       run single-thread points of base and patched at the same\n"
	    "                      time, each on its own half of the CPUs [$LOCKLAB_DUET, off]\n"
	    "  --lockstep on|off   (without a duet) run them in turns of 0.5 ms on one CPU,\n"
	    "                      and hot in turns of 1 ms on every CPU, each side timing\n"
	    "                      only its own turns [$LOCKLAB_LOCKSTEP, on]\n"
	    "  --abba on|off       (without a duet or lockstep) run them in turns, a sample\n"
	    "                      (~0.1 s) a side, A B B A [$LOCKLAB_ABBA, off]\n"
	    "  --noise-interval S  measure this machine's A/A spread per suite point (the job's\n"
	    "                      base lockbench on both sides) at the first job of a suite\n"
	    "                      and again after S seconds; the server plans rounds from it;\n"
	    "                      0: never [$LOCKLAB_NOISE_INTERVAL, 86400]\n"
	    "  --noise-rounds N    paired A/A rounds of one measurement, at least 3\n"
	    "                      [$LOCKLAB_NOISE_ROUNDS, 3]\n"
	    "  --allow-unsandboxed run submitted code even when bubblewrap does not work here\n"
	    "                      (it can then read and write all the agent can) "
	    "[$LOCKLAB_ALLOW_UNSANDBOXED=1]\n"
	    "\n"
	    "SIGTERM finishes the current run and hands the job back.\n",
	    LOCKLAB_SOURCE_DIR, LOCKLAB_SOURCE_DIR);
}

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

static int parse_on_off(const char *s, const char *what, bool *out)
{
	if (strcmp(s, "on") && strcmp(s, "off")) {
		fprintf(stderr, "locklab-agent: %s: '%s' is not on or off\n", what, s);
		return -1;
	}
	*out = !strcmp(s, "on");
	return 0;
}

static int parse_min(const char *s, const char *what, long min, int *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (!*s || *end || errno || v < min || v > INT_MAX) {
		if (min == 1)
			fprintf(stderr, "locklab-agent: %s: '%s' is not a positive whole number\n",
			        what, s);
		else
			fprintf(stderr,
			        "locklab-agent: %s: '%s' is not a whole number of at least %ld\n",
			        what, s, min);
		return -1;
	}
	*out = (int)v;
	return 0;
}

static int parse_pos(const char *s, const char *what, int *out)
{
	return parse_min(s, what, 1, out);
}

static int agent_main(int argc, char **argv)
{
	static char host[256];
	struct agent_cfg cfg = {
	    .server = env_or("LOCKLAB_SERVER", "http://127.0.0.1:8080"),
	    .token = env_or("LOCKLAB_AGENT_TOKEN", NULL),
	    .workdir = env_or("LOCKLAB_WORKDIR", "var/agent"),
	    .native_tree = env_or("LOCKLAB_NATIVE_TREE", LOCKLAB_SOURCE_DIR),
	    .build_timeout_s = 1800,
	    .run_timeout_s = 900,
	    .max_prefixes = 5,
	    .duet = false,    /* see agent.h: not shown to help on this machine kind yet */
	    .abba = false,    /* nor this (README, Measured) */
	    .lockstep = true, /* A/A spread 4.1% -> 0.13% per sample (README, Measured) */
	    .noise_interval_s = 86400,
	    .noise_rounds = 3,
	    .poll_s = 5,
	    .jobs = (int)sysconf(_SC_NPROCESSORS_ONLN),
	    .lockbench = env_or("LOCKLAB_LOCKBENCH", LOCKLAB_SOURCE_DIR "/build/lockbench"),
	    .kernel_cache = env_or("LOCKLAB_KERNEL_CACHE", NULL),
	    .token_file = env_or("LOCKLAB_AGENT_TOKEN_FILE", NULL),
	    .fetch_allow = env_or("LOCKLAB_FETCH_ALLOW", ""),
	    .sandbox_mem_mb = 8192,
	    .sandbox_procs = 4096,
	    .sandbox_fsize_mb = 4096,
	    .sandbox_tmp_mb = 512,
	};
	bool unsandboxed = !strcmp(env_or("LOCKLAB_ALLOW_UNSANDBOXED", "0"), "1");
	int mb;
	struct agent ag;
	enum {
		O_SERVER = 256,
		O_TOKEN,
		O_WORKDIR,
		O_NAME,
		O_TREE,
		O_ONCE,
		O_BT,
		O_RT,
		O_PREF,
		O_POLL,
		O_JOBS,
		O_LB,
		O_KCACHE,
		O_TOKEN_FILE,
		O_SB_MEM,
		O_SB_PROCS,
		O_SB_FSIZE,
		O_SB_TMP,
		O_UNSANDBOXED,
		O_DUET,
		O_ABBA,
		O_LOCKSTEP,
		O_NOISE_INTERVAL,
		O_NOISE_ROUNDS,
		O_HELP
	};
	static const struct option opts[] = {
	    {"server", required_argument, NULL, O_SERVER},
	    {"token", required_argument, NULL, O_TOKEN},
	    {"workdir", required_argument, NULL, O_WORKDIR},
	    {"name", required_argument, NULL, O_NAME},
	    {"native-tree", required_argument, NULL, O_TREE},
	    {"once", no_argument, NULL, O_ONCE},
	    {"build-timeout", required_argument, NULL, O_BT},
	    {"run-timeout", required_argument, NULL, O_RT},
	    {"max-prefixes", required_argument, NULL, O_PREF},
	    {"poll", required_argument, NULL, O_POLL},
	    {"jobs", required_argument, NULL, O_JOBS},
	    {"lockbench", required_argument, NULL, O_LB},
	    {"kernel-cache", required_argument, NULL, O_KCACHE},
	    {"token-file", required_argument, NULL, O_TOKEN_FILE},
	    {"sandbox-mem", required_argument, NULL, O_SB_MEM},
	    {"sandbox-procs", required_argument, NULL, O_SB_PROCS},
	    {"sandbox-fsize", required_argument, NULL, O_SB_FSIZE},
	    {"sandbox-tmp", required_argument, NULL, O_SB_TMP},
	    {"allow-unsandboxed", no_argument, NULL, O_UNSANDBOXED},
	    {"duet", required_argument, NULL, O_DUET},
	    {"abba", required_argument, NULL, O_ABBA},
	    {"lockstep", required_argument, NULL, O_LOCKSTEP},
	    {"noise-interval", required_argument, NULL, O_NOISE_INTERVAL},
	    {"noise-rounds", required_argument, NULL, O_NOISE_ROUNDS},
	    {"help", no_argument, NULL, O_HELP},
	    {NULL, 0, NULL, 0},
	};
	int c, rc = 1;

	gethostname(host, sizeof(host) - 1);
	cfg.name = env_or("LOCKLAB_AGENT_NAME", host);
	if (getenv("LOCKLAB_BUILD_TIMEOUT") &&
	    parse_pos(getenv("LOCKLAB_BUILD_TIMEOUT"), "LOCKLAB_BUILD_TIMEOUT",
	              &cfg.build_timeout_s))
		return 2;
	if (getenv("LOCKLAB_RUN_TIMEOUT") &&
	    parse_pos(getenv("LOCKLAB_RUN_TIMEOUT"), "LOCKLAB_RUN_TIMEOUT", &cfg.run_timeout_s))
		return 2;
	if (getenv("LOCKLAB_DUET") &&
	    parse_on_off(getenv("LOCKLAB_DUET"), "LOCKLAB_DUET", &cfg.duet))
		return 2;
	if (getenv("LOCKLAB_LOCKSTEP") &&
	    parse_on_off(getenv("LOCKLAB_LOCKSTEP"), "LOCKLAB_LOCKSTEP", &cfg.lockstep))
		return 2;
	if (getenv("LOCKLAB_ABBA") &&
	    parse_on_off(getenv("LOCKLAB_ABBA"), "LOCKLAB_ABBA", &cfg.abba))
		return 2;
	if (getenv("LOCKLAB_NOISE_INTERVAL") &&
	    parse_min(getenv("LOCKLAB_NOISE_INTERVAL"), "LOCKLAB_NOISE_INTERVAL", 0,
	              &cfg.noise_interval_s))
		return 2;
	if (getenv("LOCKLAB_NOISE_ROUNDS") &&
	    parse_min(getenv("LOCKLAB_NOISE_ROUNDS"), "LOCKLAB_NOISE_ROUNDS", 3, &cfg.noise_rounds))
		return 2;
	if (getenv("LOCKLAB_MAX_PREFIXES") &&
	    parse_pos(getenv("LOCKLAB_MAX_PREFIXES"), "LOCKLAB_MAX_PREFIXES", &cfg.max_prefixes))
		return 2;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case O_SERVER:
			cfg.server = optarg;
			break;
		case O_TOKEN:
			cfg.token = optarg;
			break;
		case O_WORKDIR:
			cfg.workdir = optarg;
			break;
		case O_NAME:
			cfg.name = optarg;
			break;
		case O_TREE:
			cfg.native_tree = optarg;
			break;
		case O_ONCE:
			cfg.once = true;
			break;
		case O_BT:
			if (parse_pos(optarg, "--build-timeout", &cfg.build_timeout_s))
				return 2;
			break;
		case O_RT:
			if (parse_pos(optarg, "--run-timeout", &cfg.run_timeout_s))
				return 2;
			break;
		case O_PREF:
			if (parse_pos(optarg, "--max-prefixes", &cfg.max_prefixes))
				return 2;
			break;
		case O_POLL:
			if (parse_pos(optarg, "--poll", &cfg.poll_s))
				return 2;
			break;
		case O_JOBS:
			if (parse_pos(optarg, "--jobs", &cfg.jobs))
				return 2;
			break;
		case O_LB:
			cfg.lockbench = optarg;
			break;
		case O_KCACHE:
			cfg.kernel_cache = optarg;
			break;
		case O_TOKEN_FILE:
			cfg.token_file = optarg;
			break;
		case O_SB_MEM:
			if (parse_pos(optarg, "--sandbox-mem", &mb))
				return 2;
			cfg.sandbox_mem_mb = mb;
			break;
		case O_SB_PROCS:
			if (parse_pos(optarg, "--sandbox-procs", &cfg.sandbox_procs))
				return 2;
			break;
		case O_SB_FSIZE:
			if (parse_pos(optarg, "--sandbox-fsize", &mb))
				return 2;
			cfg.sandbox_fsize_mb = mb;
			break;
		case O_SB_TMP:
			if (parse_pos(optarg, "--sandbox-tmp", &mb))
				return 2;
			cfg.sandbox_tmp_mb = mb;
			break;
		case O_DUET:
			if (parse_on_off(optarg, "--duet", &cfg.duet))
				return 2;
			break;
		case O_ABBA:
			if (parse_on_off(optarg, "--abba", &cfg.abba))
				return 2;
			break;
		case O_LOCKSTEP:
			if (parse_on_off(optarg, "--lockstep", &cfg.lockstep))
				return 2;
			break;
		case O_NOISE_INTERVAL:
			if (parse_min(optarg, "--noise-interval", 0, &cfg.noise_interval_s))
				return 2;
			break;
		case O_NOISE_ROUNDS:
			if (parse_min(optarg, "--noise-rounds", 3, &cfg.noise_rounds))
				return 2;
			break;
		case O_UNSANDBOXED:
			unsandboxed = true;
			break;
		case O_HELP:
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "locklab-agent: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
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
		fprintf(stderr, "locklab-agent: LOCKLAB_FETCH_ALLOW: %s\n", aerr);
		return 2;
	}
	addrpolicy_release(&allow);
	/*
	 * Folders the sandbox hides or binds must be absolute: bubblewrap reads
	 * its destinations from the new root, not from our working folder.
	 */
	static char wd[4096], tf[4096], lb[4096], kc[4096];
	cfg.workdir = absolute(cfg.workdir, wd, sizeof(wd));
	cfg.lockbench = absolute(cfg.lockbench, lb, sizeof(lb));
	if (cfg.token_file)
		cfg.token_file = absolute(cfg.token_file, tf, sizeof(tf));
	if (cfg.kernel_cache)
		cfg.kernel_cache = absolute(cfg.kernel_cache, kc, sizeof(kc));
	static char kcache[4096];
	if (!cfg.kernel_cache) {
		snprintf(kcache, sizeof(kcache), "%s/kernel-cache", cfg.workdir);
		cfg.kernel_cache = kcache;
	}
	/* the token stays in this process: children get a cleared environment anyway */
	unsetenv("LOCKLAB_AGENT_TOKEN");
	sandbox_allow_unsandboxed(unsandboxed);
	if (!sandbox_available() && !unsandboxed) {
		fprintf(stderr,
		        "locklab-agent: bubblewrap (bwrap) does not work on this machine, "
		        "so submitted code cannot be sandboxed; install it, or run with "
		        "--allow-unsandboxed to run submitted code with the agent's rights\n");
		return 2;
	}
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
