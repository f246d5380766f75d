/*
 * apireply.c - what the handlers share (api.h): a reply built by
 * PostgreSQL from one SQL query, the reply to a failed database call, and
 * the check of an integer query argument.  Replies themselves (status,
 * headers, error shape) are http.c; the handlers are in their own files.
 */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "api.h"
#include "db.h"

enum handler_rc api_reply_db_error(struct http_request *req, const char *what)
{
	switch (db_last_fault()) {
	case DB_FAULT_DATA:
		return http_reply_error(req, 422, "invalid", "%s: the database refused a value: %s",
		                        what, db_last_primary());
	case DB_FAULT_DUPLICATE:
		return http_reply_error(req, 409, "conflict", "%s: %s", what, db_last_primary());
	case DB_FAULT_UNAVAILABLE:
		return http_reply_error(req, 503, "database",
		                        "%s: the database is unavailable, try again later", what);
	case DB_FAULT_INTERNAL:
		return http_reply_error(req, 500, "database",
		                        "%s: a database error (the server's log has it)", what);
	default:
		return http_reply_error(req, 500, "internal", "%s", what);
	}
}

/*
 * Reply with the one JSON value sql selects (built by PostgreSQL); a NULL
 * value is a 404 naming what.
 */
enum handler_rc api_reply_sql(struct http_request *req, const char *sql, int n,
                              const char *const *p, const char *what)
{
	PGresult *res = db_read(sql, n, p);
	enum handler_rc rc;

	if (!res)
		return api_reply_db_error(req, "cannot read the database");
	if (PQntuples(res) != 1 || PQgetisnull(res, 0, 0))
		rc = http_reply_error(req, 404, "not-found", "no such %s", what);
	else
		rc = http_reply(req, 200, "application/json", PQgetvalue(res, 0, 0),
		                (size_t)PQgetlength(res, 0, 0));
	PQclear(res);
	return rc;
}

enum handler_rc api_reply_sql_id(struct http_request *req, const char *sql, long long id,
                                 const char *what)
{
	char idbuf[24];
	const char *p[1] = {idbuf};

	snprintf(idbuf, sizeof(idbuf), "%lld", id);
	return api_reply_sql(req, sql, 1, p, what);
}

bool api_query_int(const char *s, long long max, char *buf, size_t len)
{
	char *end;
	long long v;

	if (!s || !isdigit((unsigned char)*s))
		return false;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || *end || v < 1 || v > max)
		return false;
	snprintf(buf, len, "%lld", v);
	return true;
}
