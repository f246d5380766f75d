/*
 * config.h - the server's settings, filled once by main() from flags and
 * LOCKLAB_* variables before any thread starts, read-only afterwards.
 */
#ifndef LOCKLAB_SERVER_CONFIG_H
#define LOCKLAB_SERVER_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

struct srv_config {
	const char *listen;      /* host:port */
	const char *db;          /* libpq conninfo or URL */
	const char *admin_token; /* NULL or "" disables admin endpoints */
	const char *web_root;    /* static files */
	const char *sql_dir;     /* migrations */
	size_t max_body;         /* bytes of a request body */
	long fetch_timeout;      /* seconds, total */
	size_t fetch_max_bytes;  /* of a fetched patch, after gunzip */
	int lease_seconds;       /* job lease */
	int max_attempts;        /* expired leases before a job fails */
	int min_rounds;          /* rounds a job asks for first */
	int max_rounds;          /* limit when inconclusive points ask for more */
	double alpha;            /* false discovery rate */
	double min_effect;       /* relative */
	bool submit_token_required;
	unsigned max_connections;
	unsigned connection_timeout; /* seconds */
	const char *mail_config;     /* intake.h configuration file, or NULL */
};

/* Defined in config.c, filled by main.c. */
extern struct srv_config srv_cfg;

#endif
