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
 * its traversal checks) and server/routes.c's table: path split, {id}
 * parsing, 404/405 with Allow, each route's access rule, and the handlers
 * up to their first database call.
 *
 * FUZZ_HTTP_ECHO=1 in the environment copies the replies to stderr.
 *
 * Not covered: the database is a unix socket that does not exist, so a
 * handler stops at its first query (503); fetch_url is replaced (linked
 * with -Wl,--wrap=fetch_url) by a refusal so that no input makes a network
 * connection; MHD's thread-per-connection mode and timeouts (the daemon's
 * options, connection handling) are not the ones main() sets.
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

#include "../server/http.c"

#include "../server/fetch.h"

#define FUZZ_ADMIN_TOKEN "fuzz-admin-token-0123456789"

static struct MHD_Daemon *fuzz_daemon;
/* FUZZ_HTTP_ECHO=1: the replies go to stderr (what tests/15-fuzz.t looks at) */
static bool fuzz_echo;

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

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
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
	srv_cfg.min_rounds = 5;
	srv_cfg.max_rounds = 20;
	srv_cfg.lease_seconds = 60;
	srv_cfg.max_attempts = 3;
	srv_cfg.fetch_max_bytes = 1 << 20;
	srv_cfg.fetch_timeout = 1;
	srv_cfg.public_url = "";
	srv_cfg.mail_from = "locklab <locklab@localhost>";
	srv_cfg.mail_domain = "localhost";
	srv_cfg.tested_by = "";
	srv_cfg.smtp_url = "";
	fuzz_daemon =
	    MHD_start_daemon(MHD_USE_NO_LISTEN_SOCKET, 0, NULL, NULL, http_access, NULL,
	                     MHD_OPTION_CONNECTION_TIMEOUT, 2u, MHD_OPTION_NOTIFY_COMPLETED,
	                     http_completed, NULL, MHD_OPTION_END);
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sockaddr_in peer = {.sin_family = AF_INET, .sin_port = htons(40000)};
	char sink[65536];
	int sv[2];
	size_t off = 0;
	int spins;

	peer.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
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
			if (off == size)
				shutdown(sv[1], SHUT_WR);
		} else if (size == 0 && spins == 0) {
			shutdown(sv[1], SHUT_WR);
		}
		MHD_run(fuzz_daemon);
		while ((n = read(sv[1], sink, sizeof(sink))) > 0)
			if (fuzz_echo)
				fwrite(sink, 1, (size_t)n, stderr);
		if (n == 0 || fuzz_connections() == 0)
			break;
		if (spins > 1000) /* a connection waiting on us: poll briefly */
			poll(NULL, 0, 1);
	}
	close(sv[1]);
	/* closing our end makes the daemon drop the connection */
	for (spins = 0; spins < 1000 && fuzz_connections() > 0; spins++)
		MHD_run(fuzz_daemon);
	if (fuzz_connections() > 0) {
		fprintf(stderr, "fuzz_http: a connection outlived its closed peer\n");
		abort();
	}
	return 0;
}
