/*
 * fetch.c - libcurl fetching; one easy handle per thread, reused.
 */
#include "fetch.h"

#include <curl/curl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <zlib.h>

#include "config.h"

static pthread_key_t fetch_key;

static void fetch_free_handle(void *h)
{
	curl_easy_cleanup(h);
}

int fetch_global_init(void)
{
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		return -1;
	return pthread_key_create(&fetch_key, fetch_free_handle) == 0 ? 0 : -1;
}

void fetch_global_cleanup(void)
{
	curl_global_cleanup();
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
	zr = inflate(&zs, Z_FINISH);
	if (zr != Z_STREAM_END) {
		if (zs.avail_out == 0)
			snprintf(err, errlen, "the patch is over %zu bytes once unpacked", max);
		else
			snprintf(err, errlen, "gzip: %s", zs.msg ? zs.msg : "corrupt data");
		inflateEnd(&zs);
		free(buf);
		return -1;
	}
	*outlen = zs.total_out;
	buf[*outlen] = '\0';
	inflateEnd(&zs);
	*out = buf;
	return 0;
}

int fetch_url(const char *url, char **out, size_t *len, char *err, size_t errlen)
{
	CURL *h = pthread_getspecific(fetch_key);
	char curlerr[CURL_ERROR_SIZE] = "";
	struct fetch_buf b = {0};
	long status = 0;
	CURLcode rc;
	int ret = -1;

	*out = NULL;
	*len = 0;
	if (!fetch_url_allowed(url)) {
		snprintf(err, errlen, "only http and https URLs are fetched");
		return -1;
	}
	if (!h) {
		h = curl_easy_init();
		if (!h) {
			snprintf(err, errlen, "cannot start libcurl");
			return -1;
		}
		pthread_setspecific(fetch_key, h);
	} else {
		curl_easy_reset(h);
	}
	b.cap = srv_cfg.fetch_max_bytes;
	b.data = malloc(b.cap + 1);
	if (!b.data) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
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
	if (rc != CURLE_OK) {
		if (b.too_big || rc == CURLE_FILESIZE_EXCEEDED)
			snprintf(err, errlen, "%s: the patch is over %zu bytes", url,
			         srv_cfg.fetch_max_bytes);
		else
			snprintf(err, errlen, "%s: %s", url,
			         curlerr[0] ? curlerr : curl_easy_strerror(rc));
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
		ret = 0;
		goto out;
	}
	b.data[b.len] = '\0';
	*out = b.data;
	*len = b.len;
	b.data = NULL;
	ret = 0;
out:
	free(b.data);
	return ret;
}
