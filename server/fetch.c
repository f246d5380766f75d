/*
 * fetch.c - libcurl fetching; one easy handle per thread, reused; the
 * address policy checked before the transfer and at every socket curl opens.
 */
#include "fetch.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <zlib.h>

#include "config.h"

static pthread_key_t fetch_key;

static void fetch_free_handle(void *h)
{
	curl_easy_cleanup(h);
}

/* Fetches running; relaxed: a counter of slots, it orders no other data. */
static atomic_uint fetch_active;

bool fetch_slot_take(void)
{
	unsigned n = atomic_load_explicit(&fetch_active, memory_order_relaxed);

	do {
		if (n >= srv_cfg.fetch_max_active)
			return false;
	} while (!atomic_compare_exchange_weak_explicit(
	    &fetch_active, &n, n + 1, memory_order_relaxed, memory_order_relaxed));
	return true;
}

void fetch_slot_release(void)
{
	atomic_fetch_sub_explicit(&fetch_active, 1, memory_order_relaxed);
}

int fetch_global_init(void)
{
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		return -1;
	return pthread_key_create(&fetch_key, fetch_free_handle) == 0 ? 0 : -1;
}

void fetch_global_cleanup(void)
{
	fetch_policy_release();
	curl_global_cleanup();
}

/* An address range, network byte order; port -1 is any port. */
struct fetch_net {
	int family; /* AF_INET or AF_INET6 */
	unsigned char addr[16];
	int prefix; /* bits */
	int port;
};

/* Refused unless allowed; the first match names the reason. */
static const struct {
	const char *cidr, *what;
} fetch_refused[] = {
    {"0.0.0.0/8", "unspecified"},
    {"10.0.0.0/8", "private"},
    {"100.64.0.0/10", "carrier-grade NAT"},
    {"127.0.0.0/8", "loopback"},
    {"169.254.0.0/16", "link-local"},
    {"172.16.0.0/12", "private"},
    {"192.0.0.0/24", "IETF protocol assignments"},
    {"192.168.0.0/16", "private"},
    {"198.18.0.0/15", "benchmarking"},
    {"224.0.0.0/4", "multicast"},
    {"240.0.0.0/4", "reserved or broadcast"},
    {"::/128", "unspecified"},
    {"::1/128", "loopback"},
    {"::ffff:0:0/96", "IPv4-mapped IPv6"},
    {"::/96", "IPv4-compatible IPv6"},
    {"64:ff9b::/96", "NAT64"},
    {"64:ff9b:1::/48", "NAT64 local use"},
    {"100::/64", "discard-only"},
    {"fc00::/7", "unique local (ULA)"},
    {"fe80::/10", "link-local"},
    {"fec0::/10", "site-local"},
    {"ff00::/8", "multicast"},
};
#define FETCH_NREFUSED (sizeof(fetch_refused) / sizeof(fetch_refused[0]))

static struct fetch_net fetch_refused_nets[FETCH_NREFUSED];

const char *fetch_refused_cidr(size_t i)
{
	return i < FETCH_NREFUSED ? fetch_refused[i].cidr : NULL;
}
/* The operator's allow list; written by fetch_policy_init before threads start. */
static struct fetch_net *fetch_allow_nets;
static size_t fetch_nallow;

/* "addr" or "addr/prefix" into n (any port); 0 or -1. */
static int fetch_parse_net(const char *text, struct fetch_net *n)
{
	char buf[INET6_ADDRSTRLEN + 8];
	char *slash, *end;
	long bits;

	if (strlen(text) >= sizeof(buf))
		return -1;
	strcpy(buf, text);
	slash = strchr(buf, '/');
	if (slash)
		*slash = '\0';
	memset(n, 0, sizeof(*n));
	n->port = -1;
	if (inet_pton(AF_INET, buf, n->addr) == 1)
		n->family = AF_INET;
	else if (inet_pton(AF_INET6, buf, n->addr) == 1)
		n->family = AF_INET6;
	else
		return -1;
	n->prefix = n->family == AF_INET ? 32 : 128;
	if (slash) {
		errno = 0;
		bits = strtol(slash + 1, &end, 10);
		if (errno || end == slash + 1 || *end || bits < 0 || bits > n->prefix)
			return -1;
		n->prefix = (int)bits;
	}
	return 0;
}

static bool fetch_net_match(const struct fetch_net *n, int family, const unsigned char *a, int port)
{
	int full = n->prefix / 8, rest = n->prefix % 8;

	if (n->family != family || (n->port >= 0 && n->port != port))
		return false;
	if (memcmp(n->addr, a, (size_t)full) != 0)
		return false;
	return !rest || !((n->addr[full] ^ a[full]) & (0xff << (8 - rest)) & 0xff);
}

static int fetch_allow_add(const struct fetch_net *n)
{
	struct fetch_net *na = realloc(fetch_allow_nets, (fetch_nallow + 1) * sizeof(*na));

	if (!na)
		return -1;
	fetch_allow_nets = na;
	fetch_allow_nets[fetch_nallow++] = *n;
	return 0;
}

/* One "host:port" entry: an address literal, or a name resolved now. */
static int fetch_allow_host_port(const char *host, const char *port, char *err, size_t errlen)
{
	struct addrinfo hints = {0}, *ai = NULL, *p;
	struct fetch_net n;
	char *end;
	long pn;
	int gerr;

	errno = 0;
	pn = strtol(port, &end, 10);
	if (errno || end == port || *end || pn < 1 || pn > 65535) {
		snprintf(err, errlen, "bad port '%s'", port);
		return -1;
	}
	if (fetch_parse_net(host, &n) == 0) {
		n.port = (int)pn;
		return fetch_allow_add(&n);
	}
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	gerr = getaddrinfo(host, NULL, &hints, &ai);
	if (gerr) {
		snprintf(err, errlen, "cannot resolve '%s': %s", host, gai_strerror(gerr));
		return -1;
	}
	for (p = ai; p; p = p->ai_next) {
		memset(&n, 0, sizeof(n));
		n.family = p->ai_family;
		n.port = (int)pn;
		if (p->ai_family == AF_INET) {
			memcpy(n.addr, &((struct sockaddr_in *)p->ai_addr)->sin_addr, 4);
			n.prefix = 32;
		} else if (p->ai_family == AF_INET6) {
			memcpy(n.addr, &((struct sockaddr_in6 *)p->ai_addr)->sin6_addr, 16);
			n.prefix = 128;
		} else {
			continue;
		}
		if (fetch_allow_add(&n) != 0) {
			freeaddrinfo(ai);
			return -1;
		}
	}
	freeaddrinfo(ai);
	return 0;
}

/* One entry of the allow list (already trimmed); 0 or -1 with err. */
static int fetch_allow_entry(char *e, char *err, size_t errlen)
{
	struct fetch_net n;
	char *colon, *close;

	if (strchr(e, '/') || fetch_parse_net(e, &n) == 0) {
		if (fetch_parse_net(e, &n) != 0) {
			snprintf(err, errlen, "bad CIDR '%s'", e);
			return -1;
		}
		return fetch_allow_add(&n);
	}
	if (e[0] == '[') {
		close = strchr(e, ']');
		if (!close || close[1] != ':') {
			snprintf(err, errlen, "'%s': want [address]:port", e);
			return -1;
		}
		*close = '\0';
		return fetch_allow_host_port(e + 1, close + 2, err, errlen);
	}
	colon = strrchr(e, ':');
	if (!colon || colon == e || strchr(e, ':') != colon) {
		snprintf(err, errlen, "'%s': want host:port, [address]:port or a CIDR", e);
		return -1;
	}
	*colon = '\0';
	return fetch_allow_host_port(e, colon + 1, err, errlen);
}

static pthread_once_t fetch_refused_once = PTHREAD_ONCE_INIT;

static void fetch_refused_init(void)
{
	size_t i;

	/* the table is literal: a range that does not parse is a bug, caught by tests */
	for (i = 0; i < FETCH_NREFUSED; i++)
		if (fetch_parse_net(fetch_refused[i].cidr, &fetch_refused_nets[i]) != 0)
			abort();
}

int fetch_policy_init(const char *allow, char *err, size_t errlen)
{
	char *copy = NULL, *save = NULL, *tok;
	int ret = -1;

	pthread_once(&fetch_refused_once, fetch_refused_init);
	fetch_policy_release();
	if (!allow || !*allow)
		return 0;
	copy = strdup(allow);
	if (!copy) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *end;
		char entry[300];
		int n;

		while (*tok == ' ' || *tok == '\t')
			tok++;
		end = tok + strlen(tok);
		while (end > tok && (end[-1] == ' ' || end[-1] == '\t'))
			*--end = '\0';
		if (!*tok)
			continue;
		n = snprintf(entry, sizeof(entry), "%s", tok);
		if (n < 0 || (size_t)n >= sizeof(entry)) {
			snprintf(err, errlen, "entry too long");
			goto out;
		}
		if (fetch_allow_entry(entry, err, errlen) != 0)
			goto out;
	}
	ret = 0;
out:
	if (ret != 0)
		fetch_policy_release();
	free(copy);
	return ret;
}

void fetch_policy_release(void)
{
	free(fetch_allow_nets);
	fetch_allow_nets = NULL;
	fetch_nallow = 0;
}

int fetch_addr_allowed(const struct sockaddr *sa, char *why, size_t whylen)
{
	char text[INET6_ADDRSTRLEN] = "?";
	const unsigned char *a;
	int family = sa->sa_family, port;
	size_t i;

	if (family == AF_INET) {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)sa;

		a = (const unsigned char *)&s4->sin_addr;
		port = ntohs(s4->sin_port);
	} else if (family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;

		a = (const unsigned char *)&s6->sin6_addr;
		port = ntohs(s6->sin6_port);
	} else {
		snprintf(why, whylen, "not an IP address (family %d)", family);
		return -1;
	}
	pthread_once(&fetch_refused_once, fetch_refused_init);
	for (i = 0; i < fetch_nallow; i++)
		if (fetch_net_match(&fetch_allow_nets[i], family, a, port))
			return 0;
	for (i = 0; i < FETCH_NREFUSED; i++)
		if (fetch_net_match(&fetch_refused_nets[i], family, a, port)) {
			inet_ntop(family, a, text, sizeof(text));
			snprintf(
			    why, whylen,
			    "%s port %d is %s (%s), not in --fetch-allow / LOCKLAB_FETCH_ALLOW",
			    text, port, fetch_refused[i].what, fetch_refused[i].cidr);
			return -1;
		}
	return 0;
}

int fetch_url_allowed(const char *url)
{
	return strncasecmp(url, "http://", 7) == 0 || strncasecmp(url, "https://", 8) == 0;
}

struct fetch_buf {
	char *data;
	size_t len;
	size_t cap;
	bool too_big;
};

static size_t fetch_write(char *p, size_t size, size_t n, void *arg)
{
	struct fetch_buf *b = arg;
	size_t add = size * n;

	if (b->len + add > b->cap) {
		b->too_big = true;
		return 0; /* aborts the transfer with CURLE_WRITE_ERROR */
	}
	memcpy(b->data + b->len, p, add);
	b->len += add;
	return add;
}

/* gunzip in into a new buffer of at most max bytes; 0 or -1 with err. */
static int fetch_gunzip(const char *in, size_t inlen, size_t max, char **out, size_t *outlen,
                        char *err, size_t errlen)
{
	z_stream zs;
	char *buf = malloc(max + 1);
	int zr;

	if (!buf) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	memset(&zs, 0, sizeof(zs));
	if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) {
		free(buf);
		snprintf(err, errlen, "gzip: cannot start zlib");
		return -1;
	}
	zs.next_in = (Bytef *)in;
	zs.avail_in = (uInt)inlen;
	zs.next_out = (Bytef *)buf;
	zs.avail_out = (uInt)max;
	/* a .gz may be several members (cat a.gz b.gz): all of them, not the first only */
	while ((zr = inflate(&zs, Z_FINISH)) == Z_STREAM_END && zs.avail_in > 0)
		if (inflateReset(&zs) != Z_OK)
			break;
	if (zr != Z_STREAM_END) {
		if (zs.avail_out == 0)
			snprintf(err, errlen, "the patch is over %zu bytes once unpacked", max);
		else
			snprintf(err, errlen, "gzip: %s", zs.msg ? zs.msg : "corrupt data");
		inflateEnd(&zs);
		free(buf);
		return -1;
	}
	*outlen = max - zs.avail_out; /* total_out restarts with each member */
	buf[*outlen] = '\0';
	inflateEnd(&zs);
	*out = buf;
	return 0;
}

/* What the socket callback saw; per transfer. */
struct fetch_guard {
	bool refused;
	char why[256];
};

/*
 * CURLOPT_OPENSOCKETFUNCTION: every connection curl makes (redirects and
 * each address it tries included) passes the policy here, after curl's own
 * resolution, so a name that resolves differently the second time (DNS
 * rebinding) is still checked against what is actually dialled.
 */
static curl_socket_t fetch_open_socket(void *arg, curlsocktype purpose, struct curl_sockaddr *a)
{
	struct fetch_guard *g = arg;
	struct sockaddr_storage ss;
	int fd;

	memset(&ss, 0, sizeof(ss));
	memcpy(&ss, &a->addr, a->addrlen < sizeof(ss) ? a->addrlen : sizeof(ss));
	if (purpose != CURLSOCKTYPE_IPCXN) {
		g->refused = true;
		snprintf(g->why, sizeof(g->why), "not a plain IP connection");
		return CURL_SOCKET_BAD;
	}
	if (fetch_addr_allowed((struct sockaddr *)&ss, g->why, sizeof(g->why)) != 0) {
		g->refused = true;
		return CURL_SOCKET_BAD;
	}
	fd = socket(a->family, a->socktype | SOCK_CLOEXEC, a->protocol);
	return fd < 0 ? CURL_SOCKET_BAD : fd;
}

/*
 * Before any connection: the URL's scheme, and every address its host
 * resolves to now.  FETCH_OK, or FETCH_FAILED/FETCH_REFUSED with err.
 */
static int fetch_preflight(const char *url, char *err, size_t errlen)
{
	CURLU *u = curl_url();
	char *host = NULL, *port = NULL;
	struct addrinfo hints = {0}, *ai = NULL, *p;
	char why[256];
	const char *h;
	size_t hlen;
	char hbuf[256];
	int gerr, ret = FETCH_FAILED;

	if (!u) {
		snprintf(err, errlen, "out of memory");
		return FETCH_FAILED;
	}
	if (curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) != CURLUE_OK) {
		snprintf(err, errlen, "%s: not a URL with a host", url);
		ret = FETCH_REFUSED;
		goto out;
	}
	h = host;
	hlen = strlen(h);
	if (h[0] == '[' && hlen >= 2 && h[hlen - 1] == ']') {
		h++;
		hlen -= 2;
	}
	if (hlen >= sizeof(hbuf)) {
		snprintf(err, errlen, "%s: host name too long", url);
		ret = FETCH_REFUSED;
		goto out;
	}
	memcpy(hbuf, h, hlen);
	hbuf[hlen] = '\0';
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICSERV;
	gerr = getaddrinfo(hbuf, port, &hints, &ai);
	if (gerr) {
		snprintf(err, errlen, "%s: cannot resolve '%s': %s", url, hbuf, gai_strerror(gerr));
		goto out;
	}
	for (p = ai; p; p = p->ai_next)
		if (fetch_addr_allowed(p->ai_addr, why, sizeof(why)) != 0) {
			snprintf(err, errlen, "%s: refused by the fetch policy: %s", url, why);
			ret = FETCH_REFUSED;
			goto out;
		}
	ret = FETCH_OK;
out:
	if (ai)
		freeaddrinfo(ai);
	curl_free(host);
	curl_free(port);
	curl_url_cleanup(u);
	return ret;
}

int fetch_url(const char *url, char **out, size_t *len, char *err, size_t errlen)
{
	CURL *h = pthread_getspecific(fetch_key);
	char curlerr[CURL_ERROR_SIZE] = "";
	struct fetch_buf b = {0};
	struct fetch_guard guard = {0};
	long status = 0;
	CURLcode rc;
	int ret = FETCH_FAILED;

	*out = NULL;
	*len = 0;
	if (!fetch_url_allowed(url)) {
		snprintf(err, errlen, "only http and https URLs are fetched");
		return FETCH_REFUSED;
	}
	ret = fetch_preflight(url, err, errlen);
	if (ret != FETCH_OK)
		return ret;
	ret = FETCH_FAILED;
	if (!h) {
		h = curl_easy_init();
		if (!h) {
			snprintf(err, errlen, "cannot start libcurl");
			return FETCH_FAILED;
		}
		pthread_setspecific(fetch_key, h);
	} else {
		curl_easy_reset(h);
	}
	b.cap = srv_cfg.fetch_max_bytes;
	b.data = malloc(b.cap + 1);
	if (!b.data) {
		snprintf(err, errlen, "out of memory");
		return FETCH_FAILED;
	}
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
	/* "": no proxy, not even from http_proxy: the policy must see the real peer */
	curl_easy_setopt(h, CURLOPT_PROXY, "");
	curl_easy_setopt(h, CURLOPT_OPENSOCKETFUNCTION, fetch_open_socket);
	curl_easy_setopt(h, CURLOPT_OPENSOCKETDATA, &guard);
	curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 1L);
	curl_easy_setopt(h, CURLOPT_MAXREDIRS, 5L);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT,
	                 srv_cfg.fetch_timeout < 10 ? srv_cfg.fetch_timeout : 10L);
	curl_easy_setopt(h, CURLOPT_TIMEOUT, srv_cfg.fetch_timeout);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");
	curl_easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)srv_cfg.fetch_max_bytes);
	curl_easy_setopt(h, CURLOPT_USERAGENT, "locklab-server/1");
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, curlerr);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, fetch_write);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
	rc = curl_easy_perform(h);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, NULL);
	curl_easy_setopt(h, CURLOPT_OPENSOCKETDATA, NULL);
	if (rc != CURLE_OK) {
		if (guard.refused && rc == CURLE_COULDNT_CONNECT) {
			snprintf(err, errlen,
			         "%s: a connection was refused by the fetch policy: %s", url,
			         guard.why);
			ret = FETCH_REFUSED;
		} else if (b.too_big || rc == CURLE_FILESIZE_EXCEEDED) {
			snprintf(err, errlen, "%s: the patch is over %zu bytes", url,
			         srv_cfg.fetch_max_bytes);
		} else {
			snprintf(err, errlen, "%s: %s", url,
			         curlerr[0] ? curlerr : curl_easy_strerror(rc));
		}
		goto out;
	}
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
	if (status != 200) {
		snprintf(err, errlen, "%s: HTTP status %ld", url, status);
		goto out;
	}
	if (b.len >= 2 && (unsigned char)b.data[0] == 0x1f && (unsigned char)b.data[1] == 0x8b) {
		if (fetch_gunzip(b.data, b.len, srv_cfg.fetch_max_bytes, out, len, err, errlen))
			goto out;
		ret = FETCH_OK;
		goto out;
	}
	b.data[b.len] = '\0';
	*out = b.data;
	*len = b.len;
	b.data = NULL;
	ret = FETCH_OK;
out:
	free(b.data);
	return ret;
}
