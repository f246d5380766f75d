/*
 * conn.h - admission and deadlines of the HTTP connections (http.c calls it).
 *
 * libmicrohttpd's idle timeout is reset by every byte received, so a client
 * sending one byte a second holds a connection for ever, and its own limits
 * close surplus connections without a word.  This module keeps one slot per
 * TCP connection (from MHD_OPTION_NOTIFY_CONNECTION) and adds:
 *
 *  - absolute deadlines that no trickle of bytes extends: a request's headers
 *    must be complete within srv_cfg.header_timeout seconds of the
 *    connection's start or of its previous reply (so an idle keep-alive
 *    connection lasts that long), its body within srv_cfg.body_timeout
 *    seconds of its headers.  A watchdog thread cuts a connection past its
 *    deadline with shutdown(2); one that never completed a request is told
 *    "408 Request Timeout" first.  A body past its deadline gets a 408 from
 *    the access handler when its next bytes arrive (or is cut two seconds
 *    later if none come).
 *  - soft limits answered in HTTP: a connection opened while
 *    srv_cfg.max_connections are open, or whose first request comes while
 *    srv_cfg.per_ip_connections others from its address have sent one, gets
 *    503 with Retry-After (and "Connection: close") for its request instead
 *    of a TCP reset.  The hard limits given to libmicrohttpd are twice these
 *    (conn_hard_limit()).
 *  - agents counted by token, not by address: a request whose bearer token
 *    is an agent's that has authenticated before (conn_agent_token) counts
 *    against srv_cfg.per_ip_connections of that token, and neither against
 *    its address nor with the anonymous clients there, so one address's
 *    slow or busy clients cannot refuse the agents behind it (a NAT, a
 *    proxy, a lab's one router).  Until its token has authenticated once
 *    since the server started, an agent counts by its address.
 *  - a budget of their own for connections that have sent no request yet
 *    (slow or idle clients): srv_cfg.header_connections per address; a newer
 *    one cuts the oldest (408).  They never count against the per-address
 *    limit, so slow clients on an address (a NAT, a proxy) cannot lock out
 *    the complete requests of their neighbours.
 *
 * The handler phase (after the body, until the reply is sent) has no
 * deadline: a handler's own timeouts bound it (database, --fetch-timeout).
 */
#ifndef LOCKLAB_SERVER_CONN_H
#define LOCKLAB_SERVER_CONN_H

#include <microhttpd.h>
#include <stdbool.h>
#include <stdio.h>

/* Start the watchdog thread; 0 or -1.  conn_stop joins it. */
int conn_start(void);
void conn_stop(void);

/* The MHD_OPTION_NOTIFY_CONNECTION callback (socket_context holds the slot). */
void conn_notify(void *cls, struct MHD_Connection *c, void **socket_context,
                 enum MHD_ConnectionNotificationCode toe);

/* The limits handed to libmicrohttpd: past these it closes new connections. */
unsigned conn_hard_limit(void);
unsigned conn_hard_per_ip(void);

enum conn_admit {
	CONN_OK,
	CONN_FULL,       /* over srv_cfg.max_connections: reply 503 */
	CONN_IP_FULL,    /* over srv_cfg.per_ip_connections: reply 503 */
	CONN_TOKEN_FULL, /* an agent's token over srv_cfg.per_ip_connections: reply 503 */
	CONN_CUT,        /* the watchdog has cut it: close without a reply */
};

/* A request's headers are complete: admit it and start its body deadline. */
enum conn_admit conn_request_begin(struct MHD_Connection *c);
/* True when the request's body is past its deadline. */
bool conn_body_late(struct MHD_Connection *c);
/*
 * Send "408 Request Timeout" on a connection whose body is late; the caller
 * then closes it (the access handler returns MHD_NO).  libmicrohttpd 0.9.75
 * cannot queue a reply while a body is arriving; nothing else writes then.
 */
void conn_refuse_late_body(struct MHD_Connection *c);
/* The body is complete and the handler runs: no deadline until the reply is sent. */
void conn_request_run(struct MHD_Connection *c);
/* The reply is sent (or the request failed): the next request's header deadline starts. */
void conn_request_done(struct MHD_Connection *c);

/*
 * hash (SHA-256 as hex, auth.c) is a token that authenticated as an agent:
 * its requests are counted by it from now on.  At most 4096 are kept.
 */
void conn_agent_token(const char *hash);

/* Prometheus lines: open connections, refusals and deadline cuts. */
void conn_metrics(FILE *out);

#endif
