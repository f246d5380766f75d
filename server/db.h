/*
 * db.h - PostgreSQL through libpq: one connection per thread, parameterised
 * statements only, transactions retried on serialization failures and
 * deadlocks (SQLSTATE 40001 / 40P01), migrations applied at start.
 */
#ifndef LOCKLAB_SERVER_DB_H
#define LOCKLAB_SERVER_DB_H

#include <libpq-fe.h>
#include <stdbool.h>

/*
 * The calling thread's connection to srv_cfg.db, opened on first use and
 * reset when broken; closed when the thread exits.  NULL (with a message on
 * stderr) when the database cannot be reached.  Borrowed: never PQfinish it.
 */
PGconn *db_conn(void);

/*
 * PQexecParams with text parameters (NULL is SQL NULL).  Returns the result
 * when the command succeeded (the caller PQclears it), else NULL after
 * logging and clearing; db_last_state()/db_last_error() then tell why.
 */
PGresult *db_exec(PGconn *c, const char *sql, int nparams, const char *const *params);

/*
 * SQLSTATE and message of this thread's last failed statement since its
 * last db_conn() (a lost connection is 08006, one that cannot be opened
 * 08001).  db_last_error() is libpq's whole text, for the log only;
 * db_last_primary() the primary message alone ("invalid byte sequence for
 * encoding \"UTF8\": 0xff"), fit for a 4xx reply.
 */
const char *db_last_state(void);
const char *db_last_error(void);
const char *db_last_primary(void);

/* Whose fault the last failure was, by its SQLSTATE. */
enum db_fault {
	DB_FAULT_NONE,        /* no database error: the caller failed on its own */
	DB_FAULT_DATA,        /* class 22, or 23 but 23505: the data sent was refused */
	DB_FAULT_DUPLICATE,   /* 23505 unique_violation */
	DB_FAULT_UNAVAILABLE, /* 08, 53, 57P01-57P03, 40001/40P01 after the retries */
	DB_FAULT_INTERNAL,    /* anything else */
};
enum db_fault db_last_fault(void);

/*
 * A read-only statement outside a transaction on this thread's connection;
 * when that connection turns out broken (the database restarted since it was
 * last used), run once more on a new one.  Like db_exec: the result or NULL.
 */
PGresult *db_read(const char *sql, int nparams, const char *const *params);

/* db_exec that only needs success; returns 0 or a db_tx code (DB_FAIL/DB_RETRY). */
int db_run(PGconn *c, const char *sql, int nparams, const char *const *params);

/* What a transaction body returns. */
enum db_rc {
	DB_OK = 0,     /* commit */
	DB_FAIL = -1,  /* database error: roll back, 500 */
	DB_RETRY = -2, /* 40001/40P01: roll back and run the body again */
	DB_ABORT = 1,  /* the body's own reason (bad input): roll back */
};

/* DB_RETRY when the last failure was a conflict worth retrying, else DB_FAIL. */
int db_failure(void);

/*
 * BEGIN; rc = body(c, arg); COMMIT when rc is DB_OK, else ROLLBACK.  A body
 * or COMMIT failing with DB_RETRY runs again (up to 10 times); a BEGIN on a
 * connection found broken runs again once on a new one.  Returns the
 * body's final code, or DB_FAIL when no connection could be had.
 */
int db_tx(int (*body)(PGconn *c, void *arg), void *arg);

/* Value of row, col, or NULL when SQL NULL.  Borrowed from res. */
const char *db_value(const PGresult *res, int row, int col);

/*
 * Apply the missing sql/NNN_*.sql files of dir in name order, each recorded
 * in schema_migrations, all inside one transaction that holds an advisory
 * lock, so servers starting together apply each file once.  Returns the
 * number applied, or -1 with a message on stderr.
 */
int db_migrate(const char *dir);

#endif
