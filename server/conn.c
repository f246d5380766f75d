/*
 * conn.c - per-connection slots: soft limits answered with 503, absolute
 * header and body deadlines enforced by a watchdog thread (conn.h).
 */
#include "conn.h"

#include <arpa/inet.h>
#include <errno.h>
#include <glib.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "sha256.h"

enum conn_phase {
	PHASE_HEADERS, /* waiting for a request's headers (a new or idle connection) */
	PHASE_BODY,    /* headers in, the body arriving */
	PHASE_RUN,     /* the handler runs or the reply is being sent */
};

struct conn_slot {
	struct conn_slot *prev, *next;
	int fd;
	unsigned char addr[16]; /* the client's, IPv4 as ::ffff:a.b.c.d */
	bool via_proxy;         /* the peer is --trusted-proxy: addr from X-Forwarded-For */
	char token[65]; /* a known agent token's SHA-256 (hex): counted by it; "": by addr */
	enum conn_phase phase;
	int64_t deadline_ms; /* CLOCK_MONOTONIC; 0: none */
	unsigned served;     /* requests completed on this connection */
	bool over_total;     /* opened past max_connections */
	bool cut;            /* the watchdog shut it down */
};

/* Every field of every slot, and the list, under conn_lock. */
static pthread_mutex_t conn_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t conn_wake = PTHREAD_COND_INITIALIZER;
static struct conn_slot *conn_list;
static unsigned conn_open;
static bool conn_stopping;
static pthread_t conn_watchdog;
static bool conn_have_proxy;
static unsigned char conn_proxy[16]; /* --trusted-proxy's address key */
static bool conn_running;
/* SHA-256 (hex) of the agent tokens that have authenticated: a set, keys owned */
static GHashTable *conn_agents;

/* How many agent tokens are told apart; past it an agent counts by its address. */
#define CONN_AGENTS_MAX 4096

/* Counters for /metrics; relaxed: read by /metrics only. */
static atomic_ulong conn_refused_total, conn_refused_ip, conn_refused_token, conn_cut_headers,
    conn_cut_idle, conn_cut_body, conn_late_body, conn_cut_budget;

/* How long past the body deadline a silent body is cut without a reply. */
#define CONN_BODY_GRACE_MS 2000

static int64_t conn_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

unsigned conn_hard_limit(void)
{
	return srv_cfg.max_connections * 2;
}

unsigned conn_hard_per_ip(void)
{
	return srv_cfg.per_ip_connections * 2;
}

static void conn_addr_key(const struct sockaddr *sa, unsigned char key[16])
{
	memset(key, 0, 16);
	if (!sa)
		return;
	if (sa->sa_family == AF_INET6) {
		memcpy(key, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
	} else if (sa->sa_family == AF_INET) {
		key[10] = key[11] = 0xff;
		memcpy(key + 12, &((const struct sockaddr_in *)sa)->sin_addr, 4);
	}
}

/* Whether s has sent a request: it counts against --per-ip-connections. */
static bool conn_admitted(const struct conn_slot *s)
{
	return s->phase != PHASE_HEADERS || s->served > 0;
}

/* Whether o and s are counted together: the same agent token, else the same address. */
static bool conn_same_key(const struct conn_slot *o, const struct conn_slot *s)
{
	if (s->token[0] || o->token[0])
		return strcmp(o->token, s->token) == 0;
	return memcmp(o->addr, s->addr, 16) == 0;
}

void conn_agent_token(const char *hash)
{
	pthread_mutex_lock(&conn_lock);
	if (!conn_agents)
		conn_agents = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	if (!g_hash_table_contains(conn_agents, hash) &&
	    g_hash_table_size(conn_agents) < CONN_AGENTS_MAX)
		g_hash_table_add(conn_agents, g_strdup(hash));
	pthread_mutex_unlock(&conn_lock);
}

/*
 * The SHA-256 (hex) of the request's bearer token into hash; false without
 * one.  Hashed outside conn_lock; whether it is an agent's is asked under it.
 */
static bool conn_bearer_hash(struct MHD_Connection *c, char hash[65])
{
	const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");

	if (!h || strncasecmp(h, "Bearer ", 7) != 0)
		return false;
	h += 7 + strspn(h + 7, " ");
	if (!*h || strlen(h) > 512)
		return false;
	sha256_hex(h, strlen(h), hash);
	return true;
}

/*
 * A new connection from s's address while --header-connections others from
 * it have sent no request yet: the oldest of those is cut (conn_lock held),
 * so that slow or idle clients cannot hold the slots that complete
 * requests need.  The list is newest first.
 */
static void conn_cut(struct conn_slot *s);
static void conn_header_budget(const struct conn_slot *s)
{
	struct conn_slot *o, *oldest = NULL;
	unsigned pending = 0;

	for (o = conn_list; o; o = o->next)
		if (!o->cut && !conn_admitted(o) && memcmp(o->addr, s->addr, 16) == 0) {
			pending++;
			oldest = o;
		}
	if (pending >= srv_cfg.header_connections && oldest && oldest->fd >= 0) {
		conn_cut(oldest);
		atomic_fetch_add_explicit(&conn_cut_budget, 1, memory_order_relaxed);
	}
}

/* An address as text into key; false when it is none. */
static bool conn_text_key(const char *text, unsigned char key[16])
{
	memset(key, 0, 16);
	if (inet_pton(AF_INET, text, key + 12) == 1) {
		key[10] = key[11] = 0xff;
		return true;
	}
	return inet_pton(AF_INET6, text, key) == 1;
}

/*
 * Behind --trusted-proxy: the client is the last address of
 * X-Forwarded-For (the one the proxy itself added); false when the header
 * holds none, so the proxy's own address counts.
 */
static bool conn_forwarded(struct MHD_Connection *c, unsigned char key[16])
{
	const char *xff = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-Forwarded-For");
	char last[64];
	const char *p;
	size_t l;

	if (!xff)
		return false;
	p = strrchr(xff, ',');
	p = p ? p + 1 : xff;
	p += strspn(p, " \t");
	l = strcspn(p, " \t");
	if (l == 0 || l >= sizeof(last))
		return false;
	memcpy(last, p, l);
	last[l] = 0;
	return conn_text_key(last, key);
}

static struct conn_slot *conn_slot_of(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
	    MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return ci ? ci->socket_context : NULL;
}

void conn_notify(void *cls, struct MHD_Connection *c, void **socket_context,
                 enum MHD_ConnectionNotificationCode toe)
{
	struct conn_slot *s = *socket_context;
	const union MHD_ConnectionInfo *ci;

	if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
		/* MHD closes the fd after this returns: the watchdog no longer sees it */
		if (!s)
			return;
		pthread_mutex_lock(&conn_lock);
		if (s->prev)
			s->prev->next = s->next;
		else
			conn_list = s->next;
		if (s->next)
			s->next->prev = s->prev;
		conn_open--;
		pthread_mutex_unlock(&conn_lock);
		free(s);
		*socket_context = NULL;
		return;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return; /* no slot: no soft limits or deadlines for this one */
	ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	s->fd = ci ? ci->connect_fd : -1;
	ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	conn_addr_key(ci ? ci->client_addr : NULL, s->addr);
	s->via_proxy = conn_have_proxy && memcmp(s->addr, conn_proxy, 16) == 0;
	s->phase = PHASE_HEADERS;
	s->deadline_ms = conn_now_ms() + (int64_t)srv_cfg.header_timeout * 1000;
	pthread_mutex_lock(&conn_lock);
	conn_header_budget(s);
	s->over_total = conn_open >= srv_cfg.max_connections;
	s->next = conn_list;
	if (conn_list)
		conn_list->prev = s;
	conn_list = s;
	conn_open++;
	pthread_mutex_unlock(&conn_lock);
	*socket_context = s;
}

enum conn_admit conn_request_begin(struct MHD_Connection *c)
{
	struct conn_slot *s = conn_slot_of(c), *o;
	enum conn_admit rc = CONN_OK;
	unsigned same_ip = 0;
	unsigned char fwd[16];
	char hash[65];
	bool forwarded, bearer;

	if (!s)
		return CONN_OK;
	forwarded = s->via_proxy && conn_forwarded(c, fwd);
	bearer = conn_bearer_hash(c, hash);
	pthread_mutex_lock(&conn_lock);
	if (forwarded)
		memcpy(s->addr, fwd, 16); /* this request's client, not the proxy */
	/* a known agent's request counts against its token's slots, not its address's */
	if (bearer && conn_agents && g_hash_table_contains(conn_agents, hash))
		memcpy(s->token, hash, sizeof(s->token));
	else
		s->token[0] = '\0';
	if (s->cut) {
		rc = CONN_CUT;
		goto out;
	}
	/* a connection opened over a limit is let in once others have left */
	if (s->over_total && conn_open > srv_cfg.max_connections) {
		rc = CONN_FULL;
		goto out;
	}
	s->over_total = false;
	/*
	 * its first request (every request through the proxy, each another
	 * client's): the others of its address (or its agent token) that sent
	 * one are counted
	 */
	if (s->served == 0 || s->via_proxy) {
		for (o = conn_list; o; o = o->next)
			same_ip += o != s && conn_admitted(o) && conn_same_key(o, s);
		if (same_ip >= srv_cfg.per_ip_connections) {
			rc = s->token[0] ? CONN_TOKEN_FULL : CONN_IP_FULL;
			goto out;
		}
	}
	s->phase = PHASE_BODY;
	s->deadline_ms = conn_now_ms() + (int64_t)srv_cfg.body_timeout * 1000;
out:
	pthread_mutex_unlock(&conn_lock);
	if (rc == CONN_FULL)
		atomic_fetch_add_explicit(&conn_refused_total, 1, memory_order_relaxed);
	else if (rc == CONN_IP_FULL)
		atomic_fetch_add_explicit(&conn_refused_ip, 1, memory_order_relaxed);
	else if (rc == CONN_TOKEN_FULL)
		atomic_fetch_add_explicit(&conn_refused_token, 1, memory_order_relaxed);
	return rc;
}

bool conn_body_late(struct MHD_Connection *c)
{
	struct conn_slot *s = conn_slot_of(c);
	bool late;

	if (!s)
		return false;
	pthread_mutex_lock(&conn_lock);
	late = s->phase == PHASE_BODY && s->deadline_ms && conn_now_ms() > s->deadline_ms;
	pthread_mutex_unlock(&conn_lock);
	if (late)
		atomic_fetch_add_explicit(&conn_late_body, 1, memory_order_relaxed);
	return late;
}

void conn_request_run(struct MHD_Connection *c)
{
	struct conn_slot *s = conn_slot_of(c);

	if (!s)
		return;
	pthread_mutex_lock(&conn_lock);
	s->phase = PHASE_RUN;
	s->deadline_ms = 0;
	pthread_mutex_unlock(&conn_lock);
}

void conn_request_done(struct MHD_Connection *c)
{
	struct conn_slot *s = conn_slot_of(c);

	if (!s)
		return;
	pthread_mutex_lock(&conn_lock);
	s->phase = PHASE_HEADERS;
	s->served++;
	s->deadline_ms = conn_now_ms() + (int64_t)srv_cfg.header_timeout * 1000;
	pthread_mutex_unlock(&conn_lock);
}

/*
 * Cut s (conn_lock held).  MHD is not writing on a connection waiting for
 * headers, so a 408 can go out first; shutdown(2) leaves the fd open (MHD
 * closes it after conn_notify's CLOSED, which waits for conn_lock) and wakes
 * MHD's epoll with an end of file.
 */
#define CONN_408_BODY "{\"error\":\"timeout\",\"detail\":\"the request did not arrive in time\"}\n"
_Static_assert(sizeof(CONN_408_BODY) - 1 == 66, "the 408's Content-Length");

/* Best effort (the client may be gone or not reading): the 408 reply. */
static void conn_send_408(int fd)
{
	static const char r408[] =
	    "HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n"
	    "Content-Type: application/json\r\nContent-Length: 66\r\n\r\n" CONN_408_BODY;
	ssize_t n = send(fd, r408, sizeof(r408) - 1, MSG_DONTWAIT | MSG_NOSIGNAL);

	(void)n;
}

void conn_refuse_late_body(struct MHD_Connection *c)
{
	struct conn_slot *s = conn_slot_of(c);

	if (s && s->fd >= 0)
		conn_send_408(s->fd);
}

static void conn_cut(struct conn_slot *s)
{
	s->cut = true;
	s->deadline_ms = 0;
	if (s->phase == PHASE_HEADERS && s->served == 0) {
		conn_send_408(s->fd);
		atomic_fetch_add_explicit(&conn_cut_headers, 1, memory_order_relaxed);
	} else if (s->phase == PHASE_HEADERS) {
		atomic_fetch_add_explicit(&conn_cut_idle, 1, memory_order_relaxed);
	} else {
		atomic_fetch_add_explicit(&conn_cut_body, 1, memory_order_relaxed);
	}
	shutdown(s->fd, SHUT_RDWR);
}

static void *conn_watch(void *arg)
{
	struct timespec ts;

	pthread_mutex_lock(&conn_lock);
	while (!conn_stopping) {
		int64_t now = conn_now_ms();
		struct conn_slot *s;

		for (s = conn_list; s; s = s->next) {
			/* a body still trickling gets its 408 from the access handler */
			int64_t grace = s->phase == PHASE_BODY ? CONN_BODY_GRACE_MS : 0;

			if (!s->cut && s->fd >= 0 && s->deadline_ms && now > s->deadline_ms + grace)
				conn_cut(s);
		}
		/* deadlines are whole seconds: a quarter second late at most */
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 250000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&conn_wake, &conn_lock, &ts);
	}
	pthread_mutex_unlock(&conn_lock);
	return NULL;
}

int conn_start(void)
{
	conn_have_proxy = srv_cfg.trusted_proxy && *srv_cfg.trusted_proxy;
	if (conn_have_proxy && !conn_text_key(srv_cfg.trusted_proxy, conn_proxy)) {
		fprintf(stderr, "locklab-server: --trusted-proxy '%s' is not an IP address\n",
		        srv_cfg.trusted_proxy);
		return -1;
	}
	conn_stopping = false;
	if (pthread_create(&conn_watchdog, NULL, conn_watch, NULL) != 0)
		return -1;
	conn_running = true;
	return 0;
}

void conn_stop(void)
{
	if (!conn_running)
		return;
	pthread_mutex_lock(&conn_lock);
	conn_stopping = true;
	pthread_cond_signal(&conn_wake);
	pthread_mutex_unlock(&conn_lock);
	pthread_join(conn_watchdog, NULL);
	conn_running = false;
	pthread_mutex_lock(&conn_lock);
	if (conn_agents)
		g_hash_table_destroy(conn_agents);
	conn_agents = NULL;
	pthread_mutex_unlock(&conn_lock);
}

void conn_metrics(FILE *out)
{
	unsigned open;

	pthread_mutex_lock(&conn_lock);
	open = conn_open;
	pthread_mutex_unlock(&conn_lock);
	fprintf(out,
	        "# HELP locklab_http_connections Open HTTP connections.\n"
	        "# TYPE locklab_http_connections gauge\n"
	        "locklab_http_connections %u\n"
	        "# HELP locklab_http_refused_total Requests answered 503 because of a "
	        "connection limit.\n"
	        "# TYPE locklab_http_refused_total counter\n"
	        "locklab_http_refused_total{limit=\"total\"} %lu\n"
	        "locklab_http_refused_total{limit=\"per-ip\"} %lu\n"
	        "locklab_http_refused_total{limit=\"per-agent\"} %lu\n"
	        "# HELP locklab_http_deadline_total Connections past a deadline, by phase: "
	        "answered 408 then closed (status \"408\") or closed without a reply "
	        "(status \"cut\").\n"
	        "# TYPE locklab_http_deadline_total counter\n"
	        "locklab_http_deadline_total{phase=\"headers\",status=\"408\"} %lu\n"
	        "locklab_http_deadline_total{phase=\"idle\",status=\"cut\"} %lu\n"
	        "locklab_http_deadline_total{phase=\"body\",status=\"cut\"} %lu\n"
	        "locklab_http_deadline_total{phase=\"body\",status=\"408\"} %lu\n"
	        "# HELP locklab_http_header_budget_total Connections without a request cut to "
	        "make room for a newer one from their address (--header-connections).\n"
	        "# TYPE locklab_http_header_budget_total counter\n"
	        "locklab_http_header_budget_total %lu\n",
	        open, atomic_load_explicit(&conn_refused_total, memory_order_relaxed),
	        atomic_load_explicit(&conn_refused_ip, memory_order_relaxed),
	        atomic_load_explicit(&conn_refused_token, memory_order_relaxed),
	        atomic_load_explicit(&conn_cut_headers, memory_order_relaxed),
	        atomic_load_explicit(&conn_cut_idle, memory_order_relaxed),
	        atomic_load_explicit(&conn_cut_body, memory_order_relaxed),
	        atomic_load_explicit(&conn_late_body, memory_order_relaxed),
	        atomic_load_explicit(&conn_cut_budget, memory_order_relaxed));
}
