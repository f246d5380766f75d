/*
 * config.h - the server's settings, filled once by main() from flags and
 * LOCKLAB_* variables before any thread starts, read-only afterwards.
 */
#ifndef LOCKLAB_SERVER_CONFIG_H
#define LOCKLAB_SERVER_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

struct srv_config {
	const char *listen;        /* host:port */
	const char *db;            /* libpq conninfo or URL */
	const char *admin_token;   /* NULL or "" disables admin endpoints */
	const char *web_root;      /* static files */
	const char *sql_dir;       /* migrations */
	size_t max_body;           /* bytes of a request body */
	size_t max_mbox_messages;  /* messages in one mbox (mbox.h limits) */
	size_t max_series_patches; /* patches in one series */
	size_t max_patch_bytes;    /* bytes of one patch's diff */
	long fetch_timeout;        /* seconds, total */
	size_t fetch_max_bytes;    /* of a fetched patch, after gunzip */
	const char *fetch_allow;   /* comma list of host:port or CIDR the fetch policy allows */
	int lease_seconds;         /* job lease */
	int max_attempts;          /* expired leases before a job fails */
	int min_rounds;            /* rounds a job asks for first */
	int max_rounds;            /* limit when inconclusive points ask for more */
	/* rounds planned from a machine class's noise profile (plan.c) */
	double plan_mde_latency;   /* target MDE of single-thread rows, relative */
	double plan_mde_contended; /* target MDE of contended throughput / fairness rows */
	int plan_budget;           /* seconds a planned job's rounds may take */
	double alpha;              /* false discovery rate */
	double min_effect;         /* relative */
	bool submit_token_required;
	bool allow_local_trees;      /* trees may be local paths or file:// URLs */
	unsigned max_connections;    /* open at once; past it requests get 503 (conn.h) */
	unsigned per_ip_connections; /* with a request, from one address; past it 503 */
	unsigned header_connections; /* without a request yet, from one address (conn.h) */
	const char *trusted_proxy;   /* its X-Forwarded-For names the client; "" none */
	unsigned connection_timeout; /* seconds without a byte before MHD closes */
	unsigned header_timeout;     /* seconds for a request's headers, however they trickle */
	unsigned body_timeout;       /* seconds for a request's whole body */
	unsigned http_threads;       /* the fixed pool serving every connection */
	unsigned fetch_max_active;   /* URL fetches at once; past it submissions get 503 */
	unsigned parse_max_active;   /* submitted mboxes parsed at once; past it 503 */
	const char *parse_priority;  /* their threads' CPU priority: low, idle or normal */
	/* outgoing mail (reply.c, outbox.c) */
	const char *mail_from;     /* "Name <addr>": From and the SMTP envelope sender */
	const char *mail_domain;   /* right-hand side of Message-IDs */
	const char *tested_by;     /* "Name <addr>" of Tested-by/Reported-by; "" = mail_from */
	const char *public_url;    /* dashboard base for links; "" = http://listen */
	const char *smtp_url;      /* smtp://host:port or smtps://; "" = dry run */
	const char *smtp_user;     /* login; "" = none */
	const char *smtp_password; /* with smtp_user */
	const char *smtp_ca_file;  /* CA bundle for the SMTP server's certificate; "" = system's */
	bool smtp_starttls;        /* smtp:// must upgrade with STARTTLS */
	bool mail_dry_run;         /* keep mail in the outbox only */
	int smtp_timeout;          /* seconds per delivery attempt */
	int mail_retry_seconds;    /* first retry delay; doubles up to an hour */
	int mail_max_attempts;     /* then the mail is 'failed' */
	int mail_poll_ms;          /* how often the sender looks at the outbox */
	/* incoming mail (intake.c) */
	const char *mail_config; /* intake.h configuration file, or NULL */
	/* tracking (track.c) */
	int track_interval;    /* seconds between looks at a tracked branch */
	const char *track_dir; /* bare mirrors of the tracked trees */
	int track_samples;     /* sample runs inside a big push, per new head */
};

/* Defined in config.c, filled by main.c. */
extern struct srv_config srv_cfg;

#endif
