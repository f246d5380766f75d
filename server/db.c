/*
 * db.c - thread-local libpq connections, statements, transactions and
 * migrations.
 */
#include "db.h"

#include <dirent.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "strutil.h"

static pthread_key_t db_key;
static pthread_once_t db_once = PTHREAD_ONCE_INIT;
static __thread char db_state[8];
static __thread char db_error[512];
static __thread char db_primary[256];

/*
 * Statements with parameters are prepared once per connection, found by
 * the address of their SQL text (every statement is a string literal).
 */
#define DB_STMT_CACHE 128
static __thread const char *db_stmts[DB_STMT_CACHE];
static __thread int db_nstmts;
static __thread PGconn *db_stmts_conn;

static void db_close(void *conn)
{
	PQfinish(conn);
}

static void db_init_key(void)
{
	pthread_key_create(&db_key, db_close);
}

/*
 * Read what an idle connection has pending.  A session the database ended
 * left its last message (FATAL: terminating connection) and then the end of
 * the stream; one PQconsumeInput reads the message and only the next sees
 * the end, so read while the socket has more (a few times at most): the
 * status turns bad here, not on the request's first statement.  (One read
 * alone let the first statement after a restart fail in 1 of 8 runs of
 * tests/280-server-dberrors.t.)
 */
static void db_drain(PGconn *c)
{
	for (int i = 0; i < 8 && PQstatus(c) == CONNECTION_OK; i++) {
		struct pollfd p = {.fd = PQsocket(c), .events = POLLIN};
		if (p.fd < 0 || poll(&p, 1, 0) <= 0 || !PQconsumeInput(c))
			break;
	}
}

PGconn *db_conn(void)
{
	PGconn *c;

	pthread_once(&db_once, db_init_key);
	/* a new request's errors are its own */
	db_state[0] = db_error[0] = db_primary[0] = '\0';
	c = pthread_getspecific(db_key);
	/*
	 * An idle connection reads what is pending without waiting (libpq's
	 * socket is non-blocking): a database that shut down or restarted since
	 * has closed it, which turns the status bad here rather than failing
	 * the request's first statement.
	 */
	if (c && PQstatus(c) == CONNECTION_OK && PQtransactionStatus(c) == PQTRANS_IDLE)
		db_drain(c);
	if (c && PQstatus(c) == CONNECTION_OK)
		return c;
	if (c) {
		PQreset(c);
		db_stmts_conn = NULL; /* the new session has no prepared statements */
		if (PQstatus(c) == CONNECTION_OK)
			return c;
		PQfinish(c);
		pthread_setspecific(db_key, NULL);
	}
	c = PQconnectdb(srv_cfg.db ? srv_cfg.db : "");
	if (PQstatus(c) != CONNECTION_OK) {
		/* 08001 sqlclient_unable_to_establish_sqlconnection: libpq sets no SQLSTATE */
		snprintf(db_state, sizeof(db_state), "08001");
		snprintf(db_primary, sizeof(db_primary), "cannot connect");
		snprintf(db_error, sizeof(db_error), "%s", PQerrorMessage(c));
		fprintf(stderr, "locklab-server: database: %s", PQerrorMessage(c));
		PQfinish(c);
		return NULL;
	}
	db_stmts_conn = NULL; /* may reuse a freed connection's address */
	pthread_setspecific(db_key, c);
	return c;
}

const char *db_last_state(void)
{
	return db_state;
}

const char *db_last_error(void)
{
	return db_error;
}

const char *db_last_primary(void)
{
	return db_primary;
}

enum db_fault db_last_fault(void)
{
	if (!db_state[0])
		return DB_FAULT_NONE;
	if (strncmp(db_state, "22", 2) == 0)
		return DB_FAULT_DATA;
	if (strcmp(db_state, "23505") == 0)
		return DB_FAULT_DUPLICATE;
	if (strncmp(db_state, "23", 2) == 0)
		return DB_FAULT_DATA;
	/* connection, shutdown, resources, and conflicts still there after the retries */
	if (strncmp(db_state, "08", 2) == 0 || strcmp(db_state, "57P01") == 0 ||
	    strcmp(db_state, "57P02") == 0 || strcmp(db_state, "57P03") == 0 ||
	    strncmp(db_state, "53", 2) == 0 || db_failure() == DB_RETRY)
		return DB_FAULT_UNAVAILABLE;
	return DB_FAULT_INTERNAL;
}

int db_failure(void)
{
	if (strcmp(db_state, "40001") == 0 || strcmp(db_state, "40P01") == 0)
		return DB_RETRY;
	return DB_FAIL;
}

/* Keep res's error as the last one, and say it unless it is a conflict to retry. */
static void db_note_error(PGconn *c, const PGresult *res)
{
	const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
	const char *primary = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : NULL;

	/* libpq's own errors carry no SQLSTATE; a lost connection is 08006 */
	if (!state && PQstatus(c) == CONNECTION_BAD)
		state = "08006";
	snprintf(db_state, sizeof(db_state), "%s", state ? state : "XX000");
	snprintf(db_primary, sizeof(db_primary), "%s", primary ? primary : "no message");
	snprintf(db_error, sizeof(db_error), "%s",
	         res ? PQresultErrorMessage(res) : PQerrorMessage(c));
	if (db_failure() != DB_RETRY)
		fprintf(stderr, "locklab-server: sql failed (%s): %s", db_state, db_error);
}

/*
 * The name of sql's prepared statement on c, preparing it when new; NULL to
 * run it unprepared.  *failed is set when the statement does not prepare:
 * its error is the one to report (running it anyway, inside a transaction,
 * would only report "current transaction is aborted").
 */
static const char *db_prepared(PGconn *c, const char *sql, int nparams, char name[16], bool *failed)
{
	PGresult *res;
	int i;

	if (nparams == 0)
		return NULL;
	if (db_stmts_conn != c) {
		db_stmts_conn = c;
		db_nstmts = 0;
	}
	for (i = 0; i < db_nstmts; i++)
		if (db_stmts[i] == sql) {
			snprintf(name, 16, "s%d", i);
			return name;
		}
	if (db_nstmts == DB_STMT_CACHE)
		return NULL;
	snprintf(name, 16, "s%d", db_nstmts);
	res = PQprepare(c, name, sql, nparams, NULL);
	if (PQresultStatus(res) != PGRES_COMMAND_OK) {
		db_note_error(c, res);
		*failed = true;
		PQclear(res);
		return NULL;
	}
	PQclear(res);
	db_stmts[db_nstmts++] = sql;
	return name;
}

PGresult *db_exec(PGconn *c, const char *sql, int nparams, const char *const *params)
{
	char name[16];
	bool failed = false;
	const char *stmt = db_prepared(c, sql, nparams, name, &failed);
	PGresult *res;
	ExecStatusType st;

	if (failed)
		return NULL;
	res = stmt ? PQexecPrepared(c, stmt, nparams, params, NULL, NULL, 0)
	           : PQexecParams(c, sql, nparams, NULL, params, NULL, NULL, 0);
	st = PQresultStatus(res);
	if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK)
		return res;
	/* conflicts are expected and retried; anything else is worth a line */
	db_note_error(c, res);
	PQclear(res);
	return NULL;
}

PGresult *db_read(const char *sql, int nparams, const char *const *params)
{
	int attempt;

	for (attempt = 0; attempt < 2; attempt++) {
		PGconn *c = db_conn();
		PGresult *res;

		if (!c)
			return NULL;
		res = db_exec(c, sql, nparams, params);
		if (res || PQstatus(c) != CONNECTION_BAD)
			return res;
	}
	return NULL;
}

int db_run(PGconn *c, const char *sql, int nparams, const char *const *params)
{
	PGresult *res = db_exec(c, sql, nparams, params);

	if (!res)
		return db_failure();
	PQclear(res);
	return DB_OK;
}

const char *db_value(const PGresult *res, int row, int col)
{
	if (PQgetisnull(res, row, col))
		return NULL;
	return PQgetvalue(res, row, col);
}

int db_tx(int (*body)(PGconn *c, void *arg), void *arg)
{
	int attempt, rc = DB_FAIL;

	for (attempt = 0; attempt < 10; attempt++) {
		PGconn *c = db_conn();

		if (!c)
			return DB_FAIL;
		if (db_run(c, "BEGIN", 0, NULL) != DB_OK) {
			/* nothing ran yet: a connection found broken is opened again once */
			if (attempt == 0 && PQstatus(c) == CONNECTION_BAD)
				continue;
			return DB_FAIL;
		}
		rc = body(c, arg);
		if (rc == DB_OK) {
			rc = db_run(c, "COMMIT", 0, NULL);
			if (rc == DB_OK)
				return DB_OK;
		}
		db_run(c, "ROLLBACK", 0, NULL);
		if (rc != DB_RETRY)
			return rc;
		usleep(1000u * (1u << (attempt < 6 ? attempt : 6)));
	}
	return rc;
}

static int db_name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* 0x6c6f636b6c6162, "locklab" in ASCII: the advisory lock key of migrations */
#define DB_MIGRATE_LOCK "30521770279461218"

int db_migrate(const char *dir)
{
	PGconn *c = db_conn();
	DIR *d = NULL;
	struct dirent *e;
	char **names = NULL;
	size_t n = 0, cap = 0, i;
	int applied = 0, ret = -1;

	if (!c)
		return -1;
	d = opendir(dir);
	if (!d) {
		fprintf(stderr, "locklab-server: cannot open migrations folder '%s'\n", dir);
		return -1;
	}
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);

		if (len < 5 || strcmp(e->d_name + len - 4, ".sql") != 0 || e->d_name[0] < '0' ||
		    e->d_name[0] > '9')
			continue;
		if (n == cap) {
			char **nn = realloc(names, (cap = cap ? 2 * cap : 16) * sizeof(*names));

			if (!nn)
				goto out;
			names = nn;
		}
		if (!(names[n] = strdup(e->d_name)))
			goto out;
		n++;
	}
	qsort(names, n, sizeof(*names), db_name_cmp);

	if (db_run(c, "BEGIN", 0, NULL) != DB_OK)
		goto out;
	if (db_run(c, "SELECT pg_advisory_xact_lock(" DB_MIGRATE_LOCK ")", 0, NULL) != DB_OK ||
	    db_run(c,
	           "CREATE TABLE IF NOT EXISTS schema_migrations (version text PRIMARY KEY, "
	           "applied timestamptz NOT NULL DEFAULT now())",
	           0, NULL) != DB_OK)
		goto rollback;
	for (i = 0; i < n; i++) {
		const char *p[1] = {names[i]};
		PGresult *res =
		    db_exec(c, "SELECT 1 FROM schema_migrations WHERE version = $1", 1, p);
		char path[4096];
		char *sql;
		int have;

		if (!res)
			goto rollback;
		have = PQntuples(res);
		PQclear(res);
		if (have)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		sql = strutil_file_text(path);
		if (!sql) {
			fprintf(stderr, "locklab-server: cannot read %s\n", path);
			goto rollback;
		}
		/* A migration is several statements and has no parameters: PQexec. */
		res = PQexec(c, sql);
		free(sql);
		if (PQresultStatus(res) != PGRES_COMMAND_OK &&
		    PQresultStatus(res) != PGRES_TUPLES_OK) {
			fprintf(stderr, "locklab-server: migration %s failed: %s", names[i],
			        PQresultErrorMessage(res));
			PQclear(res);
			goto rollback;
		}
		PQclear(res);
		if (db_run(c, "INSERT INTO schema_migrations (version) VALUES ($1)", 1, p) != DB_OK)
			goto rollback;
		fprintf(stderr, "locklab-server: applied migration %s\n", names[i]);
		applied++;
	}
	if (db_run(c, "COMMIT", 0, NULL) != DB_OK)
		goto out;
	ret = applied;
	goto out;
rollback:
	db_run(c, "ROLLBACK", 0, NULL);
out:
	if (d)
		closedir(d);
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return ret;
}
