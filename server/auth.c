/*
 * auth.c - tokens, stored as their SHA-256 (lib/sha256.c).
 */
#include "auth.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api.h"
#include "config.h"
#include "conn.h"
#include "db.h"
#include "sha256.h"

int auth_new_token(char out[65])
{
	unsigned char raw[32];
	size_t got = 0;
	int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
	int i;

	if (fd < 0)
		return -1;
	while (got < sizeof(raw)) {
		ssize_t n = read(fd, raw + got, sizeof(raw) - got);

		if (n <= 0) {
			close(fd);
			return -1;
		}
		got += (size_t)n;
	}
	close(fd);
	for (i = 0; i < 32; i++)
		snprintf(out + 2 * i, 3, "%02x", raw[i]);
	return 0;
}

bool auth_is_admin(const char *token)
{
	const char *want = srv_cfg.admin_token;
	size_t wl, tl, i;
	unsigned char diff = 0;

	if (!token || !want || !*want)
		return false;
	wl = strlen(want);
	tl = strlen(token);
	for (i = 0; i < wl; i++)
		diff |= (unsigned char)want[i] ^ (unsigned char)(i < tl ? token[i] : 0);
	return diff == 0 && wl == tl;
}

enum handler_rc auth_require_agent(struct http_request *req, PGconn *c, const char *want_role,
                                   struct auth_agent *out)
{
	const char *token = http_bearer(req);
	char hash[65];
	const char *p[1] = {hash};
	PGresult *res;

	memset(out, 0, sizeof(*out));
	if (!token)
		return http_reply_error(req, 401, "unauthorized",
		                        "missing Authorization: Bearer token");
	sha256_hex(token, strlen(token), hash);
	res = db_exec(c, "SELECT id, role, machine_class FROM agents WHERE token_hash = $1", 1, p);
	if (!res)
		return api_reply_db_error(req, "cannot check the token");
	if (PQntuples(res) != 1) {
		PQclear(res);
		return http_reply_error(req, 401, "unauthorized", "unknown token");
	}
	out->id = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
	snprintf(out->role, sizeof(out->role), "%s", PQgetvalue(res, 0, 1));
	snprintf(out->machine_class, sizeof(out->machine_class), "%s", PQgetvalue(res, 0, 2));
	PQclear(res);
	/* an agent's connections count by its token from now on (conn.h) */
	if (strcmp(out->role, "agent") == 0)
		conn_agent_token(hash);
	if (want_role && strcmp(out->role, want_role) != 0)
		return http_reply_error(req, 403, "forbidden", "a %s token cannot do this",
		                        out->role);
	return HANDLER_OK;
}

void auth_load_agents(void)
{
	PGconn *c = db_conn();
	PGresult *res =
	    c ? db_exec(c, "SELECT token_hash FROM agents WHERE role = 'agent'", 0, NULL) : NULL;

	for (int i = 0; res && i < PQntuples(res); i++)
		conn_agent_token(PQgetvalue(res, i, 0));
	PQclear(res);
}
