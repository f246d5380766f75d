/*
 * main.c - locklab-server: settings from flags and LOCKLAB_* variables,
 * migrations, then the HTTP daemon until SIGINT or SIGTERM.
 */
#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "auth.h"
#include "config.h"
#include "db.h"
#include "fetch.h"
#include "http.h"
#include "intake.h"
#include "jobs.h"
#include "mail.h"
#include "mbox.h"
#include "options.h"
#include "outbox.h"
#include "progdir.h"
#include "routes.h"
#include "sshpin.h"
#include "submissions.h"
#include "track.h"
#include "version.h"

static struct opt opts[] = {
    {"listen", "LOCKLAB_LISTEN", OPT_STR, &srv_cfg.listen, "127.0.0.1:8080", 0, 0,
     "address to serve on, host:port", "HOST:PORT"},
    {"db", "LOCKLAB_DB", OPT_STR, &srv_cfg.db, "", 0, 0,
     "libpq conninfo or URL (empty: libpq defaults, PG* variables)", "CONNINFO"},
    {"admin-token", "LOCKLAB_ADMIN_TOKEN", OPT_STR, &srv_cfg.admin_token, NULL, 0, 0,
     "token for agent registration and trees (unset: admin endpoints refuse)", "T"},
    {"web-root", "LOCKLAB_WEB_ROOT", OPT_STR, &srv_cfg.web_root, "web", 0, 0,
     "folder of the dashboard's static files (when not given and the server is installed: "
     "share/locklab/web beside its bin/ folder)",
     "DIR"},
    {"sql-dir", "LOCKLAB_SQL_DIR", OPT_STR, &srv_cfg.sql_dir, "sql", 0, 0,
     "folder of the numbered migrations (when not given and the server is installed: "
     "share/locklab/sql beside its bin/ folder)",
     "DIR"},
    {"max-body", "LOCKLAB_MAX_BODY", OPT_SIZE, &srv_cfg.max_body, "16777216", 1, 1e10,
     "largest request body in bytes (413 past it)", "BYTES"},
    {"max-mbox-messages", "LOCKLAB_MAX_MBOX_MESSAGES", OPT_SIZE, &srv_cfg.max_mbox_messages, "5000",
     1, 1e7, "messages one submitted or fetched mbox may hold (413 past it)", "N"},
    {"max-series-patches", "LOCKLAB_MAX_SERIES_PATCHES", OPT_SIZE, &srv_cfg.max_series_patches,
     "500", 1, 1e6, "patches one series may have (413 past it)", "N"},
    {"max-patch-bytes", "LOCKLAB_MAX_PATCH_BYTES", OPT_SIZE, &srv_cfg.max_patch_bytes, "4194304", 1,
     1e10, "bytes of one patch's diff (413 past it)", "BYTES"},
    {"fetch-timeout", "LOCKLAB_FETCH_TIMEOUT", OPT_LONG, &srv_cfg.fetch_timeout, "30", 1, 3600,
     "seconds allowed to fetch a patch URL", "S"},
    {"fetch-max-bytes", "LOCKLAB_FETCH_MAX_BYTES", OPT_SIZE, &srv_cfg.fetch_max_bytes, "16777216",
     1, 1e10, "largest fetched patch in bytes, after gunzip", "BYTES"},
    {"fetch-allow", "LOCKLAB_FETCH_ALLOW", OPT_STR, &srv_cfg.fetch_allow, "", 0, 0,
     "comma list of host:port or CIDR that patch URLs may reach although loopback, private, "
     "link-local, ... (see docs/api.md)",
     "LIST"},
    {"lease-seconds", "LOCKLAB_LEASE_SECONDS", OPT_INT, &srv_cfg.lease_seconds, "300", 1, 86400,
     "job lease; heartbeats extend it", "S"},
    {"max-attempts", "LOCKLAB_MAX_ATTEMPTS", OPT_INT, &srv_cfg.max_attempts, "3", 1, 100,
     "expired leases before a job fails", "N"},
    {"min-rounds", "LOCKLAB_MIN_ROUNDS", OPT_INT, &srv_cfg.min_rounds, "5", 1, 1000,
     "A/B rounds a job asks for first, and the step when it asks for more", "N"},
    {"max-rounds", "LOCKLAB_MAX_ROUNDS", OPT_INT, &srv_cfg.max_rounds, "20", 1, 1000,
     "most rounds inconclusive points may ask for", "N"},
    {"plan-mde-latency", "LOCKLAB_PLAN_MDE_LATENCY", OPT_DOUBLE, &srv_cfg.plan_mde_latency, "0.03",
     0.001, 1,
     "target MDE of single-thread rows (ns per pair, wake time) when a machine class has a "
     "noise profile: its jobs plan the rounds that reach it (relative)",
     "X"},
    {"plan-mde-contended", "LOCKLAB_PLAN_MDE_CONTENDED", OPT_DOUBLE, &srv_cfg.plan_mde_contended,
     "0.10", 0.001, 1, "target MDE of contended throughput and fairness rows (relative)", "X"},
    {"plan-budget", "LOCKLAB_PLAN_BUDGET", OPT_INT, &srv_cfg.plan_budget, "3600", 1, 604800,
     "seconds a planned job's rounds may take (with the profile's seconds a round, it caps the "
     "rounds; never above --max-rounds)",
     "S"},
    {"alpha", "LOCKLAB_ALPHA", OPT_DOUBLE, &srv_cfg.alpha, "0.05", 1e-9, 0.5,
     "false discovery rate of the verdicts (Benjamini-Hochberg)", "X"},
    {"min-effect", "LOCKLAB_MIN_EFFECT", OPT_DOUBLE, &srv_cfg.min_effect, "0.02", 0, 10,
     "smallest relative change called a regression or improvement", "X"},
    {"submit-token-required", "LOCKLAB_SUBMIT_TOKEN_REQUIRED", OPT_FLAG,
     &srv_cfg.submit_token_required, "0", 0, 1, "submissions need a submitter (or admin) token",
     NULL},
    {"allow-local-trees", "LOCKLAB_ALLOW_LOCAL_TREES", OPT_FLAG, &srv_cfg.allow_local_trees, "0", 0,
     1, "trees may name a local path or file:// URL (agents sharing this filesystem)", NULL},
    {"max-connections", "LOCKLAB_MAX_CONNECTIONS", OPT_UINT, &srv_cfg.max_connections, "512", 1,
     100000,
     "open HTTP connections; a request on one past this gets 503 + Retry-After (new "
     "connections are closed at twice this)",
     "N"},
    {"per-ip-connections", "LOCKLAB_PER_IP_CONNECTIONS", OPT_UINT, &srv_cfg.per_ip_connections,
     "64", 1, 100000,
     "HTTP connections from one client address that have sent a request, or with one agent's "
     "token (counted apart from its address); past it 503 + Retry-After (closed at twice this)",
     "N"},
    {"header-connections", "LOCKLAB_HEADER_CONNECTIONS", OPT_UINT, &srv_cfg.header_connections,
     "96", 1, 100000,
     "HTTP connections from one client address that have not sent a whole request yet; a newer "
     "one cuts the oldest (408), so slow clients cannot hold the slots complete requests need",
     "N"},
    {"trusted-proxy", "LOCKLAB_TRUSTED_PROXY", OPT_STR, &srv_cfg.trusted_proxy, "", 0, 0,
     "IP address of a reverse proxy in front of the server: on its connections the client "
     "address (for the per-address limits) is the last of X-Forwarded-For; from anywhere else "
     "the header is ignored",
     "LIST"},
    {"http-threads", "LOCKLAB_HTTP_THREADS", OPT_UINT, &srv_cfg.http_threads, "16", 1, 1024,
     "threads serving HTTP (epoll), each with its own database connection", "N"},
    {"header-timeout", "LOCKLAB_HEADER_TIMEOUT", OPT_UINT, &srv_cfg.header_timeout, "20", 1, 86400,
     "seconds for a request's headers from the connection's start or its previous reply, however "
     "slowly they trickle (408, then closed)",
     "S"},
    {"body-timeout", "LOCKLAB_BODY_TIMEOUT", OPT_UINT, &srv_cfg.body_timeout, "120", 1, 86400,
     "seconds for a request's whole body after its headers (408, then closed)", "S"},
    {"fetch-max-active", "LOCKLAB_FETCH_MAX_ACTIVE", OPT_UINT, &srv_cfg.fetch_max_active, "4", 1,
     1024, "URL submissions fetched at once; past it 503 + Retry-After (keep below --http-threads)",
     "N"},
    {"parse-max-active", "LOCKLAB_PARSE_MAX_ACTIVE", OPT_UINT, &srv_cfg.parse_max_active, "2", 1,
     1024,
     "submitted mboxes parsed at once, each on a thread of its own, off the HTTP threads; past "
     "it 503 + Retry-After (a submission over 64 KiB gets it before its body is read)",
     "N"},
    {"parse-priority", "LOCKLAB_PARSE_PRIORITY", OPT_STR, &srv_cfg.parse_priority, "low", 0, 0,
     "CPU priority of those threads: low (SCHED_BATCH and nice 10), idle (SCHED_IDLE) or normal; "
     "below the HTTP threads, /healthz and agents' posts are answered while a flood is parsed",
     "low|idle|normal"},
    {"mail-config", "LOCKLAB_MAIL_CONFIG", OPT_STR, &srv_cfg.mail_config, NULL, 0, 0,
     "JSON file of the mail intake: Maildir and IMAP sources, trees (unset: no intake)", "FILE"},
    {"connection-timeout", "LOCKLAB_CONNECTION_TIMEOUT", OPT_UINT, &srv_cfg.connection_timeout,
     "60", 1, 86400, "seconds an HTTP connection may stay silent (any byte restarts it)", "S"},
    {"mail-from", "LOCKLAB_MAIL_FROM", OPT_STR, &srv_cfg.mail_from, "locklab <locklab@localhost>",
     0, 0, "From of every mail and the SMTP envelope sender, \"Name <address>\"", "ADDRESS"},
    {"mail-domain", "LOCKLAB_MAIL_DOMAIN", OPT_STR, &srv_cfg.mail_domain, "", 0, 0,
     "domain of Message-IDs (empty: the --mail-from address's domain)", "DOMAIN"},
    {"tested-by", "LOCKLAB_TESTED_BY", OPT_STR, &srv_cfg.tested_by, "", 0, 0,
     "\"Name <address>\" of Tested-by and Reported-by trailers (empty: --mail-from)", "ADDRESS"},
    {"public-url", "LOCKLAB_PUBLIC_URL", OPT_STR, &srv_cfg.public_url, "", 0, 0,
     "dashboard address mails link to (empty: http://<listen>)", "URL"},
    {"smtp-url", "LOCKLAB_SMTP_URL", OPT_STR, &srv_cfg.smtp_url, "", 0, 0,
     "smtp://host:port or smtps://host:port the outbox is sent to (empty: dry run)", "URL"},
    {"smtp-user", "LOCKLAB_SMTP_USER", OPT_STR, &srv_cfg.smtp_user, "", 0, 0,
     "SMTP login name (empty: no login)", "NAME"},
    {"smtp-password", "LOCKLAB_SMTP_PASSWORD", OPT_STR, &srv_cfg.smtp_password, "", 0, 0,
     "SMTP password (prefer the variable to the flag)", "PASSWORD"},
    {"smtp-ca-file", "LOCKLAB_SMTP_CA_FILE", OPT_STR, &srv_cfg.smtp_ca_file, "", 0, 0,
     "CA certificates (PEM) the SMTP server's certificate must chain to (empty: the system's)",
     "FILE"},
    {"smtp-starttls", "LOCKLAB_SMTP_STARTTLS", OPT_FLAG, &srv_cfg.smtp_starttls, "0", 0, 1,
     "smtp:// must switch to TLS with STARTTLS before anything is sent", NULL},
    {"mail-dry-run", "LOCKLAB_MAIL_DRY_RUN", OPT_FLAG, &srv_cfg.mail_dry_run, "0", 0, 1,
     "keep replies in the outbox ('held') and send nothing, even with --smtp-url", NULL},
    {"smtp-timeout", "LOCKLAB_SMTP_TIMEOUT", OPT_INT, &srv_cfg.smtp_timeout, "60", 1, 3600,
     "seconds one delivery attempt may take", "S"},
    {"mail-retry-seconds", "LOCKLAB_MAIL_RETRY_SECONDS", OPT_INT, &srv_cfg.mail_retry_seconds, "30",
     1, 86400, "delay before the first retry of a mail; doubles each time, up to an hour", "S"},
    {"mail-max-attempts", "LOCKLAB_MAIL_MAX_ATTEMPTS", OPT_INT, &srv_cfg.mail_max_attempts, "12", 1,
     1000, "delivery attempts before a mail is marked failed", "N"},
    {"mail-poll-ms", "LOCKLAB_MAIL_POLL_MS", OPT_INT, &srv_cfg.mail_poll_ms, "1000", 10, 600000,
     "how often the sender looks for due mail, in ms", "MS"},
    {"track-interval", "LOCKLAB_TRACK_INTERVAL", OPT_INT, &srv_cfg.track_interval, "300", 1, 86400,
     "seconds between looks at each tracked branch (POST .../poke looks at once)", "S"},
    {"track-dir", "LOCKLAB_TRACK_DIR", OPT_STR, &srv_cfg.track_dir, "var/track", 0, 0,
     "folder of the tracker's bare git mirrors of tracked trees", "DIR"},
    {"track-samples", "LOCKLAB_TRACK_SAMPLES", OPT_INT, &srv_cfg.track_samples, "3", 0, 64,
     "history points sampled inside a push of many commits, per new head, while no job waits "
     "(the middle of the widest gap first; 0: only the newest head)",
     "N"},
};

#define NOPTS (sizeof(opts) / sizeof(opts[0]))

static bool opt_given[NOPTS]; /* set by its variable or flag, not by the default */

static const struct opt_cmd cmds[] = {
    {"help", "this text"},
    {"version", "the version"},
    {"routes", "the routes: method, path, who may call it"},
};

static const struct opt_table table = {
    .prog = "locklab-server",
    .opts = opts,
    .n = NOPTS,
    .given = opt_given,
    .cmds = cmds,
    .ncmds = sizeof(cmds) / sizeof(cmds[0]),
    .intro = "usage: locklab-server [options]\n\n"
             "Serves the locklab API (/api/v1), /healthz, /metrics and the dashboard.\n"
             "Every option can also be set by its environment variable; flags win.\n\n",
};

/*
 * Check the mail identities and default --mail-domain to the --mail-from
 * address's domain.  The domain string lives until exit.
 */
static int mail_config(void)
{
	static char *domain;
	char *from = mail_addr_spec(srv_cfg.mail_from), *tested = NULL;
	int rc = -1;

	if (!from || !strchr(from, '@')) {
		fprintf(stderr, "locklab-server: --mail-from '%s' holds no address\n",
		        srv_cfg.mail_from);
		goto out;
	}
	if (*srv_cfg.tested_by && !(tested = mail_addr_spec(srv_cfg.tested_by))) {
		fprintf(stderr, "locklab-server: --tested-by '%s' holds no address\n",
		        srv_cfg.tested_by);
		goto out;
	}
	if (!*srv_cfg.mail_domain) {
		free(domain);
		domain = strdup(strchr(from, '@') + 1);
		srv_cfg.mail_domain = domain ? domain : "localhost";
	}
	rc = 0;
out:
	free(from);
	free(tested);
	return rc;
}

/*
 * --listen is host:port (an IPv6 host in brackets) with a port of 0 to
 * 65535: said at once, before the database is touched.
 */
static int check_listen(const char *listen)
{
	const char *colon = strrchr(listen, ':');
	char *end;
	long port;

	if (!colon || colon == listen || (listen[0] == '[') != (colon[-1] == ']') ||
	    (colon - listen == 2 && listen[0] == '['))
		goto bad;
	errno = 0;
	port = strtol(colon + 1, &end, 10);
	if (!colon[1] || *end || errno || port < 0 || port > 65535)
		goto bad;
	return 0;
bad:
	fprintf(stderr, "locklab-server: --listen wants host:port (port 0 to 65535), got '%s'\n",
	        listen);
	return -1;
}

/* A URL option, when set, must start with one of the schemes given. */
static int check_scheme(const char *name, const char *value, const char *a, const char *b)
{
	if (!*value || !strncmp(value, a, strlen(a)) || !strncmp(value, b, strlen(b)))
		return 0;
	fprintf(stderr, "locklab-server: --%s wants a %s or %s URL, got '%s'\n", name, a, b, value);
	return -1;
}

/*
 * An installed server (make install) finds the dashboard and the migrations
 * in share/locklab beside its bin/ folder when neither flag nor variable
 * names them; otherwise the defaults are the checkout's web and sql.
 */
static void data_dirs_find(void)
{
	static char web[4096], sql[4096];
	size_t i;

	for (i = 0; i < NOPTS; i++) {
		if (opt_given[i])
			continue;
		if (opts[i].ptr == &srv_cfg.web_root &&
		    progdir_existing("../share/locklab/web", web, sizeof(web)))
			srv_cfg.web_root = web;
		if (opts[i].ptr == &srv_cfg.sql_dir &&
		    progdir_existing("../share/locklab/sql", sql, sizeof(sql)))
			srv_cfg.sql_dir = sql;
	}
}

static int parse_config(int argc, char **argv)
{
	switch (opts_parse(&table, argc, argv)) {
	case 0:
		break;
	case 1:
		opts_usage(&table, stdout);
		exit(0);
	case 2:
		version_print(stdout, "locklab-server");
		exit(0);
	case 3:
		routes_print(stdout);
		exit(0);
	default:
		return -1;
	}
	if (check_listen(srv_cfg.listen) != 0 ||
	    check_scheme("public-url", srv_cfg.public_url, "http://", "https://") != 0 ||
	    check_scheme("smtp-url", srv_cfg.smtp_url, "smtp://", "smtps://") != 0)
		return -1;
	if (mail_config() != 0)
		return -1;
	mbox_set_limits(&(struct mbox_limits){srv_cfg.max_mbox_messages, srv_cfg.max_series_patches,
	                                      srv_cfg.max_patch_bytes});
	if (srv_cfg.max_rounds < srv_cfg.min_rounds) {
		fprintf(stderr, "locklab-server: --max-rounds %d is below --min-rounds %d\n",
		        srv_cfg.max_rounds, srv_cfg.min_rounds);
		return -1;
	}
	data_dirs_find();
	return 0;
}

/*
 * Every connection, up to twice --max-connections, holds a descriptor: take
 * the hard limit of open files (the usual soft one is 1024).
 */
static void raise_fd_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur >= rl.rlim_max)
		return;
	rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
		fprintf(stderr, "locklab-server: cannot raise the open file limit: %s\n",
		        strerror(errno));
}

/* what the HTTP front end serves: the route table */
static const struct http_app server_app = {.dispatch = routes_dispatch,
                                           .busy_early = submission_busy_early};

int main(int argc, char **argv)
{
	sigset_t sigs;
	int sig, applied, ret = 1;

	/* started by git as its ssh (GIT_SSH) for a tracked ssh:// tree */
	if (sshpin_invoked(argv[0]))
		return track_ssh_main(argc, argv);
	mail_global_init();
	if (parse_config(argc, argv) != 0)
		return 2;
	signal(SIGPIPE, SIG_IGN);
	raise_fd_limit();
	/*
	 * Memory: each pool thread allocating on its own glibc arena (up to 8
	 * per core) keeps what it freed mapped, and the server's RSS crept up
	 * for minutes under make bench-load without a leak.  Fewer arenas, set
	 * before any thread starts (unless MALLOC_ARENA_MAX says otherwise),
	 * and malloc_trim once a second in the wait for a signal below, which
	 * gives the free pages back.
	 */
	if (!getenv("MALLOC_ARENA_MAX"))
		mallopt(M_ARENA_MAX, 2);
	/* threads started below inherit the mask; main takes the signals with sigwait */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);

	if (submission_parse_priority_check(srv_cfg.parse_priority) != 0) {
		fprintf(stderr,
		        "locklab-server: --parse-priority: '%s' is not low, idle or normal\n",
		        srv_cfg.parse_priority);
		return 2;
	}
	if (fetch_global_init() != 0) {
		fprintf(stderr, "locklab-server: cannot initialise libcurl\n");
		return 1;
	}
	{
		char err[256];

		if (fetch_policy_init(srv_cfg.fetch_allow, err, sizeof(err)) != 0) {
			fprintf(stderr, "locklab-server: --fetch-allow: %s\n", err);
			ret = 2;
			goto out;
		}
	}
	if (srv_cfg.mail_config && *srv_cfg.mail_config &&
	    intake_configure(srv_cfg.mail_config) != 0) {
		ret = 2;
		goto out;
	}
	applied = db_migrate(srv_cfg.sql_dir);
	if (applied < 0) {
		fprintf(stderr, "locklab-server: cannot prepare the database\n");
		goto out;
	}
	auth_load_agents();
	if (http_start(&server_app) != 0)
		goto out;
	if (jobs_reaper_start() != 0) {
		fprintf(stderr, "locklab-server: cannot start the lease reaper\n");
		http_stop();
		goto out;
	}
	if (outbox_sender_start() != 0) {
		fprintf(stderr, "locklab-server: cannot start the mail sender\n");
		jobs_reaper_stop();
		http_stop();
		goto out;
	}
	fprintf(stderr, "locklab-server: mail: %s\n",
	        outbox_sending() ? srv_cfg.smtp_url
	                         : "dry run, replies are kept in the outbox ('held')");
	if (srv_cfg.mail_config && *srv_cfg.mail_config && intake_start() != 0) {
		outbox_sender_stop();
		http_stop();
		jobs_reaper_stop();
		goto out;
	}
	if (track_start() != 0) {
		fprintf(stderr, "locklab-server: cannot start the tracker\n");
		intake_stop();
		outbox_sender_stop();
		http_stop();
		jobs_reaper_stop();
		goto out;
	}
	fprintf(stderr, "locklab-server: listening on %s (%d migration(s) applied)\n",
	        srv_cfg.listen, applied);
	/* malloc_trim once a second while waiting (the arenas: above) */
	for (;;) {
		struct timespec second = {1, 0};

		sig = sigtimedwait(&sigs, NULL, &second);
		if (sig > 0)
			break;
		malloc_trim(0);
	}
	fprintf(stderr, "locklab-server: stopping on signal %d\n", sig);
	track_stop();
	intake_stop();
	http_stop();
	jobs_reaper_stop();
	outbox_sender_stop();
	ret = 0;
out:
	intake_stop(); /* the configuration when the server stopped before starting it */
	fetch_global_cleanup();
	mail_global_cleanup();
	return ret;
}
