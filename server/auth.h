/*
 * auth.h - bearer tokens: the operator's admin token, agent and submitter
 * tokens (32 random bytes as hex, only their SHA-256 stored).
 */
#ifndef LOCKLAB_SERVER_AUTH_H
#define LOCKLAB_SERVER_AUTH_H

#include <libpq-fe.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "http.h"
#include "sha256.h"

/* A new token from /dev/urandom: 64 hex digits and a NUL.  Returns 0 or -1. */
int auth_new_token(char out[65]);

/* True when token equals the configured admin token (constant time). */
bool auth_is_admin(const char *token);

/*
 * The request's bearer token as an agent (struct auth_agent: http.h).  Returns HANDLER_OK with *out
 * filled, or HANDLER_HANDLED after replying 401 (no or unknown token) or
 * 403 (a token of another role than want_role, when want_role is not NULL).
 */
enum handler_rc auth_require_agent(struct http_request *req, PGconn *c, const char *want_role,
                                   struct auth_agent *out);

/*
 * The agents' token hashes, read once at start: their connections count by
 * token from their first request (conn_agent_token).  Best effort.
 */
void auth_load_agents(void);

#endif
