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

#include "addrpolicy.h"
#include "config.h"
#include "metrics.h"
#include "strutil.h"

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

/* The operator's allow list; written by fetch_policy_init before threads start. */
static struct addrpolicy fetch_policy = ADDRPOLICY_INIT;

int fetch_policy_init(const char *allow, char *err, size_t errlen)
{
	return addrpolicy_init(&fetch_policy, allow, err, errlen);
}

void fetch_policy_release(void)
{
	addrpolicy_release(&fetch_policy);
}

int fetch_addr_allowed(const struct sockaddr *sa, char *why, size_t whylen)
{
	char reason[200];

	if (addrpolicy_check(&fetch_policy, sa, reason, sizeof(reason)) == 0)
		return 0;
	snprintf(why, whylen, "%s, not in --fetch-allow / LOCKLAB_FETCH_ALLOW", reason);
	return -1;
}

int fetch_url_allowed(const char *url)
{
	return strncasecmp(url, "http://", 7) == 0 || strncasecmp(url, "https://", 8) == 0;
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
			/* why names the address: an oracle for internal names, kept in the log */
			fprintf(stderr, "locklab-server: fetch of %s refused: %s\n", url, why);
			snprintf(err, errlen,
			         "%s: refused by the fetch policy: %s port %s is not a place this "
			         "server may fetch from (--fetch-allow)",
			         url, hbuf, port);
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

static int fetch_url_run(const char *url, char **out, size_t *len, char *err, size_t errlen)
{
	CURL *h = pthread_getspecific(fetch_key);
	char curlerr[CURL_ERROR_SIZE] = "";
	struct strutil_capped b = {STRUTIL_BUF_INIT, 0, false};
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
	b.max = srv_cfg.fetch_max_bytes;
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
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, strutil_capped_write);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
	rc = curl_easy_perform(h);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, NULL);
	curl_easy_setopt(h, CURLOPT_OPENSOCKETDATA, NULL);
	if (rc != CURLE_OK) {
		if (guard.refused && rc == CURLE_COULDNT_CONNECT) {
			fprintf(stderr, "locklab-server: fetch of %s refused: %s\n", url,
			        guard.why);
			snprintf(err, errlen, "%s: a connection was refused by the fetch policy",
			         url);
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
	if (b.buf.len >= 2 && (unsigned char)b.buf.buf[0] == 0x1f &&
	    (unsigned char)b.buf.buf[1] == 0x8b) {
		if (fetch_gunzip(b.buf.buf, b.buf.len, srv_cfg.fetch_max_bytes, out, len, err,
		                 errlen))
			goto out;
		ret = FETCH_OK;
		goto out;
	}
	*len = b.buf.len;
	*out = strutil_buf_detach(&b.buf);
	ret = FETCH_OK;
out:
	strutil_buf_release(&b.buf);
	return ret;
}

int fetch_url(const char *url, char **out, size_t *len, char *err, size_t errlen)
{
	int ret = fetch_url_run(url, out, len, err, errlen);

	if (ret == FETCH_REFUSED)
		metrics_fetch_refused();
	return ret;
}
