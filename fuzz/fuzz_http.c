/*
 * fuzz_http.c - libFuzzer target: the server's HTTP request path without a
 * listening socket.
 *
 * The input is the bytes a client sends on one connection (one request or
 * several, pipelined).  A libmicrohttpd daemon with no listen socket and
 * external polling is made once; each input is written into one end of a
 * socketpair whose other end is handed to MHD_add_connection, the write
 * side shut, and the daemon run until it closed the connection, reading
 * its replies meanwhile.  So every byte goes through what a real client
 * reaches: libmicrohttpd's request line, header and chunked-body parsing,
 * then server/http.c's own code (compiled into this file to reach its
 * static access handler: the early Content-Length check, the body cap and
 * 413, replies, bearer tokens, static files under a scratch web root with
 * its traversal checks, http_defer's suspend and resume) and
 * server/routes.c's table: path split, {id} parsing, 404/405 with Allow,
 * each route's access rule, and the handlers.
 *
 * Two modes, said on stderr at start:
 *
 * - LOCKLAB_FUZZ_DB unset: the database is a unix socket that does not
 *   exist, so a handler stops at its first query (503).
 * - LOCKLAB_FUZZ_DB set (a libpq conninfo of a scratch database: its tables
 *   are emptied): the schema is migrated at start by db_migrate (the
 *   server's advisory-lock path, LOCKLAB_SQL_DIR or the source tree's
 *   sql/), and before each input (every FUZZ_HTTP_DB_RESET inputs when
 *   fuzzing, default 1) every table is emptied, ids restart at 1, and
 *   these tokens are made, so that inputs carry them literally and a
 *   pipelined input can submit, claim job 1 and post its results:
 *     FUZZ_ADMIN_TOKEN   the admin token
 *     FUZZ_AGENT_TOKEN   agent 1, machine class "default"
 *     FUZZ_AGENT2_TOKEN  agent 2, same class (another agent's job: 403)
 *     FUZZ_SUBMIT_TOKEN  agent 3, a submitter
 *   After each input a transaction left open on the server's connection,
 *   or any 5xx reply the server queued, is a finding (abort): bad input must
 *   get a 4xx, and with the database up nothing is unavailable.
 *
 * FUZZ_HTTP_ECHO=1 in the environment copies the replies to stderr.
 *
 * Not covered: fetch_url is replaced (linked with -Wl,--wrap=fetch_url) by
 * a refusal so that no input makes a network connection; MHD's thread pool
 * and timeouts (the daemon's options, connection handling) are not the
 * ones main() sets; the reaper, the tracker, the intake and the mail
 * sender do not run.
 */
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <microhttpd.h>

/* every reply http.c queues passes here first: a 5xx is a finding (database mode) */
static enum MHD_Result fuzz_queue_response(struct MHD_Connection *conn, unsigned int status,
                                           struct MHD_Response *resp);
#define MHD_queue_response fuzz_queue_response
#include "../server/http.c"
#undef MHD_queue_response

#include "../server/auth.h"
#include "../server/db.h"
#include "../server/fetch.h"
#include "../server/routes.h"

/* the server's route table behind http.c, as main.c serves it */
static const struct http_app fuzz_app = {.dispatch = routes_dispatch};

#define FUZZ_ADMIN_TOKEN  "fuzz-admin-token-0123456789"
#define FUZZ_AGENT_TOKEN  "fuzz-agent-token-0123456789"
#define FUZZ_AGENT2_TOKEN "fuzz-agent2-token-0123456789"
#define FUZZ_SUBMIT_TOKEN "fuzz-submit-token-0123456789"

#ifndef FUZZ_SQL_DIR
#define FUZZ_SQL_DIR "sql"
#endif

static struct MHD_Daemon *fuzz_daemon;
/* FUZZ_HTTP_ECHO=1: the replies go to stderr (what tests/150-fuzz.t looks at) */
static bool fuzz_echo;

/* Database mode: the harness's own connection, which empties the tables between inputs. */
static PGconn *fuzz_pg;
static char *fuzz_reset_sql;
static unsigned long fuzz_reset_every = 1, fuzz_runs;
/* the first 5xx (or 0) queued during the current input */
static unsigned fuzz_bad_status;

static enum MHD_Result fuzz_queue_response(struct MHD_Connection *conn, unsigned int status,
                                           struct MHD_Response *resp)
{
	if (status >= 500 && !fuzz_bad_status)
		fuzz_bad_status = status;
	return MHD_queue_response(conn, status, resp);
}

/* No input may reach the network: every fetch is refused before any connection. */
int __wrap_fetch_url(const char *url, char **out, size_t *len, char *err, size_t errlen);
int __wrap_fetch_url(const char *url, char **out, size_t *len, char *err, size_t errlen)
{
	*out = NULL;
	*len = 0;
	snprintf(err, errlen, "fetching is off in the fuzzer");
	return FETCH_REFUSED;
}

static void fuzz_write_file(const char *dir, const char *name, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f)
		abort();
	fputs(text, f);
	fclose(f);
}

static char fuzz_root[] = "/tmp/locklab-fuzz-web.XXXXXX";

/* The scratch web root goes when the fuzzer exits. */
static void fuzz_remove_root(void)
{
	static const char *const files[] = {"index.html", "app.js", "css/site.css", "css", ""};
	char path[600];

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", fuzz_root, files[i]);
		if (remove(path) != 0 && i + 1 == sizeof(files) / sizeof(files[0]))
			rmdir(fuzz_root);
	}
}

/* One value of a query on the harness's connection, or abort: the scratch database must work. */
static char *fuzz_pg_value(const char *sql)
{
	PGresult *res = PQexec(fuzz_pg, sql);
	char *v;

	if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1) {
		fprintf(stderr, "fuzz_http: %s: %s", sql, PQresultErrorMessage(res));
		abort();
	}
	v = strdup(PQgetvalue(res, 0, 0));
	PQclear(res);
	if (!v)
		abort();
	return v;
}

/*
 * The statements that empty every table but schema_migrations, start ids at
 * 1 again and make the agents of the fuzz tokens.  DELETE, not TRUNCATE (a
 * TRUNCATE of every table makes new files for each: 100 ms a reset), with
 * the foreign keys' triggers off for the harness's session
 * (session_replication_role, a superuser's setting: else TRUNCATE).
 */
static char *fuzz_reset_statement(void)
{
	static const struct {
		const char *token, *name, *role;
	} agents[] = {{FUZZ_AGENT_TOKEN, "fuzz-agent", "agent"},
	              {FUZZ_AGENT2_TOKEN, "fuzz-agent2", "agent"},
	              {FUZZ_SUBMIT_TOKEN, "fuzz-submitter", "submitter"}};
	PGresult *res = PQexec(fuzz_pg, "SET session_replication_role = replica");
	bool replica = PQresultStatus(res) == PGRES_COMMAND_OK;
	char *tables = fuzz_pg_value(
	    replica ? "SELECT string_agg('DELETE FROM ' || quote_ident(tablename), '; ') FROM "
	              "pg_tables WHERE schemaname = current_schema() AND tablename <> "
	              "'schema_migrations'"
	            : "SELECT 'TRUNCATE ' || string_agg(quote_ident(tablename), ', ') || ' RESTART "
	              "IDENTITY CASCADE' FROM pg_tables WHERE schemaname = current_schema() AND "
	              "tablename <> 'schema_migrations'");
	char *sql = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&sql, &len);

	PQclear(res);
	if (!f)
		abort();
	fprintf(f, "%s; %sINSERT INTO agents (name, role, machine_class, token_hash) VALUES ",
	        tables,
	        replica ? "SELECT setval(oid, 1, false) FROM pg_class WHERE relkind = 'S' AND "
	                  "relnamespace = current_schema()::regnamespace; "
	                : "");
	for (size_t i = 0; i < sizeof(agents) / sizeof(agents[0]); i++) {
		char hash[65];

		sha256_hex(agents[i].token, strlen(agents[i].token), hash);
		fprintf(f, "%s('%s', '%s', 'default', '%s')", i ? ", " : "", agents[i].name,
		        agents[i].role, hash);
	}
	fclose(f);
	free(tables);
	return sql;
}

static void fuzz_db_reset(void)
{
	PGresult *res = PQexec(fuzz_pg, fuzz_reset_sql);

	if (PQresultStatus(res) != PGRES_COMMAND_OK) {
		fprintf(stderr, "fuzz_http: cannot empty the tables: %s",
		        PQresultErrorMessage(res));
		abort();
	}
	PQclear(res);
}

/* True when libFuzzer was given files to run (a replay), not folders to fuzz from. */
static bool fuzz_replaying(int argc, char **argv)
{
	struct stat st;

	for (int i = 1; i < argc; i++)
		if (argv[i][0] != '-' && stat(argv[i], &st) == 0 && S_ISREG(st.st_mode))
			return true;
	return false;
}

/* Database mode: migrate through the server's own path, then the first reset. */
static void fuzz_db_start(const char *conninfo, bool replay)
{
	const char *dir = getenv("LOCKLAB_SQL_DIR") ? getenv("LOCKLAB_SQL_DIR") : FUZZ_SQL_DIR;
	const char *every = getenv("FUZZ_HTTP_DB_RESET");
	int applied;

	srv_cfg.db = conninfo;
	applied = db_migrate(dir);
	if (applied < 0) {
		fprintf(stderr, "fuzz_http: cannot migrate %s with %s\n", conninfo, dir);
		abort();
	}
	fuzz_pg = PQconnectdb(conninfo);
	if (PQstatus(fuzz_pg) != CONNECTION_OK) {
		fprintf(stderr, "fuzz_http: %s", PQerrorMessage(fuzz_pg));
		abort();
	}
	fuzz_reset_sql = fuzz_reset_statement();
	if (every && !replay)
		fuzz_reset_every = strtoul(every, NULL, 10) ? strtoul(every, NULL, 10) : 1;
	fprintf(stderr,
	        "fuzz_http: database mode (LOCKLAB_FUZZ_DB): %d migration(s) applied from %s, "
	        "tables emptied before %s\n",
	        applied, dir,
	        fuzz_reset_every == 1 ? "every input" : "every FUZZ_HTTP_DB_RESET inputs");
}

/* Database mode: the pooled connection in a transaction after an input is a leak. */
static void fuzz_db_check(void)
{
	PGconn *c = db_conn();

	if (c && PQtransactionStatus(c) != PQTRANS_IDLE) {
		fprintf(stderr, "fuzz_http: an input left a transaction open (status %d)\n",
		        (int)PQtransactionStatus(c));
		abort();
	}
	if (fuzz_bad_status) {
		fprintf(stderr,
		        "fuzz_http: a %u reply in database mode (FUZZ_HTTP_ECHO=1 shows it)\n",
		        fuzz_bad_status);
		abort();
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *db = getenv("LOCKLAB_FUZZ_DB");
	char *root = fuzz_root;
	char sub[600];

	fuzz_echo = getenv("FUZZ_HTTP_ECHO") != NULL;
	if (!mkdtemp(root))
		abort();
	atexit(fuzz_remove_root);
	fuzz_write_file(root, "index.html", "<!doctype html><title>locklab</title>\n");
	fuzz_write_file(root, "app.js", "export const x = 1;\n");
	snprintf(sub, sizeof(sub), "%s/css", root);
	mkdir(sub, 0755);
	fuzz_write_file(sub, "site.css", "body{}\n");
	srv_cfg.web_root = root;
	srv_cfg.db = "host=/nonexistent/locklab-fuzz port=1 connect_timeout=1";
	srv_cfg.admin_token = FUZZ_ADMIN_TOKEN;
	srv_cfg.max_body = 4096;
	/* few rounds: a pipelined input of 16 KiB can run a job to its verdict */
	srv_cfg.min_rounds = 3;
	srv_cfg.max_rounds = 6;
	srv_cfg.lease_seconds = 60;
	srv_cfg.max_attempts = 3;
	srv_cfg.fetch_max_bytes = 1 << 20;
	srv_cfg.fetch_timeout = 1;
	srv_cfg.fetch_max_active = 1; /* a URL submission goes through http_defer */
	srv_cfg.parse_max_active = 1; /* so does a submitted mbox's parse */
	srv_cfg.max_mbox_messages = 5000;
	srv_cfg.max_series_patches = 500;
	srv_cfg.max_patch_bytes = 4 << 20;
	srv_cfg.header_connections = 96;
	srv_cfg.trusted_proxy = "";
	srv_cfg.public_url = "";
	srv_cfg.mail_from = "locklab <locklab@localhost>";
	srv_cfg.mail_domain = "localhost";
	srv_cfg.tested_by = "";
	srv_cfg.smtp_url = "";
	srv_cfg.alpha = 0.05;
	srv_cfg.min_effect = 0.02;
	srv_cfg.plan_mde_latency = 0.03;
	srv_cfg.plan_mde_contended = 0.10;
	srv_cfg.plan_budget = 3600;
	if (db && *db)
		fuzz_db_start(db, fuzz_replaying(*argc, *argv));
	else
		fprintf(stderr, "fuzz_http: no-database mode (LOCKLAB_FUZZ_DB unset): handlers "
		                "stop at their first query (503)\n");
	fuzz_daemon =
	    MHD_start_daemon(MHD_USE_NO_LISTEN_SOCKET | MHD_ALLOW_SUSPEND_RESUME, 0, NULL, NULL,
	                     http_access, (void *)&fuzz_app, MHD_OPTION_CONNECTION_TIMEOUT, 2u,
	                     MHD_OPTION_NOTIFY_COMPLETED, http_completed, NULL, MHD_OPTION_END);
	if (!fuzz_daemon) {
		fprintf(stderr, "fuzz_http: cannot start libmicrohttpd\n");
		abort();
	}
	return 0;
}

static unsigned fuzz_connections(void)
{
	const union MHD_DaemonInfo *i =
	    MHD_get_daemon_info(fuzz_daemon, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);

	return i ? i->num_connections : 0;
}

/* Deferred works still running (http.c's http_defer): their connection is suspended, not gone. */
static unsigned fuzz_deferred(void)
{
	pthread_mutex_lock(&http_defer_lock);
	unsigned n = http_defer_running;
	pthread_mutex_unlock(&http_defer_lock);
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sockaddr_in peer = {.sin_family = AF_INET, .sin_port = htons(40000)};
	char sink[65536];
	int sv[2];
	size_t off = 0;
	int spins;
	bool shut = false;

	peer.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fuzz_pg && fuzz_runs++ % fuzz_reset_every == 0)
		fuzz_db_reset();
	fuzz_bad_status = 0;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
		abort();
	fcntl(sv[1], F_SETFL, O_NONBLOCK);
	if (MHD_add_connection(fuzz_daemon, sv[0], (struct sockaddr *)&peer, sizeof(peer)) !=
	    MHD_YES) {
		close(sv[1]);
		return 0;
	}
	/* feed the input, run the daemon and drain its replies until it closes */
	for (spins = 0; spins < 100000; spins++) {
		ssize_t n;

		if (off < size) {
			n = write(sv[1], data + off, size - off);
			if (n > 0)
				off += (size_t)n;
		}
		MHD_run(fuzz_daemon);
		/*
		 * the end of the input once the daemon has run on it and no
		 * deferred work holds its connection suspended: a client that
		 * half-closes while its request is deferred loses the reply
		 */
		if (off == size && !shut && !fuzz_deferred()) {
			shutdown(sv[1], SHUT_WR);
			shut = true;
		}
		while ((n = read(sv[1], sink, sizeof(sink))) > 0)
			if (fuzz_echo)
				fwrite(sink, 1, (size_t)n, stderr);
		if (n == 0 || (fuzz_connections() == 0 && !fuzz_deferred()))
			break;
		if (spins > 1000 || fuzz_deferred()) /* waiting on us or on a deferred work */
			poll(NULL, 0, 1);
	}
	close(sv[1]);
	/*
	 * closing our end makes the daemon drop the connection.  A deferred
	 * work ends by itself, however long a loaded machine makes it take (a
	 * work that never ends is libFuzzer's -timeout); only the daemon's own
	 * spins, with no work in flight, are counted.
	 */
	for (spins = 0; spins < 1000 && (fuzz_connections() > 0 || fuzz_deferred());) {
		MHD_run(fuzz_daemon);
		if (fuzz_deferred())
			poll(NULL, 0, 1);
		else
			spins++;
	}
	if (fuzz_connections() > 0) {
		fprintf(stderr, "fuzz_http: a connection outlived its closed peer\n");
		abort();
	}
	if (fuzz_pg)
		fuzz_db_check();
	return 0;
}
