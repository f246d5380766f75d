/* api.c - see api.h. */
#include "api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REPLY_MAX (4 * 1024 * 1024)

struct reply_buf {
	char *s;
	size_t len;
	int overflow;
};

static size_t on_data(char *data, size_t size, size_t n, void *arg)
{
	struct reply_buf *b = arg;
	size_t len = size * n;
	if (b->len + len > REPLY_MAX) {
		b->overflow = 1;
		return 0; /* aborts the transfer */
	}
	char *s = realloc(b->s, b->len + len + 1);
	if (!s)
		return 0;
	memcpy(s + b->len, data, len);
	b->s = s;
	b->len += len;
	b->s[b->len] = 0;
	return len;
}

int api_init(struct api *a, const char *server, const char *token)
{
	memset(a, 0, sizeof(*a));
	a->h = curl_easy_init();
	a->server = strdup(server);
	a->token = strdup(token);
	if (!a->h || !a->server || !a->token) {
		api_release(a);
		return -1;
	}
	size_t l = strlen(a->server);
	while (l && a->server[l - 1] == '/')
		a->server[--l] = 0;
	return 0;
}

void api_release(struct api *a)
{
	if (a->h)
		curl_easy_cleanup(a->h);
	free(a->server);
	free(a->token);
	memset(a, 0, sizeof(*a));
}

long api_post(struct api *a, const char *path, const char *body, const char *idem_key,
              json_t **reply, char *err, size_t errlen)
{
	struct reply_buf b = {0};
	struct curl_slist *hdrs = NULL;
	char url[2048], auth[512], idem[512];
	long status = -1;
	CURLcode cc;

	*reply = NULL;
	snprintf(url, sizeof(url), "%s%s", a->server, path);
	snprintf(auth, sizeof(auth), "Authorization: Bearer %s", a->token);
	hdrs = curl_slist_append(hdrs, auth);
	hdrs = curl_slist_append(hdrs, "Content-Type: application/json");
	if (idem_key) {
		snprintf(idem, sizeof(idem), "Idempotency-Key: %s", idem_key);
		hdrs = curl_slist_append(hdrs, idem);
	}
	curl_easy_reset(a->h);
	a->errbuf[0] = 0;
	curl_easy_setopt(a->h, CURLOPT_URL, url);
	curl_easy_setopt(a->h, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(a->h, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(a->h, CURLOPT_POSTFIELDS, body ? body : "{}");
	curl_easy_setopt(a->h, CURLOPT_CONNECTTIMEOUT, 10L);
	curl_easy_setopt(a->h, CURLOPT_TIMEOUT, 120L);
	curl_easy_setopt(a->h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(a->h, CURLOPT_ERRORBUFFER, a->errbuf);
	curl_easy_setopt(a->h, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(a->h, CURLOPT_WRITEDATA, &b);
	cc = curl_easy_perform(a->h);
	if (cc != CURLE_OK) {
		snprintf(err, errlen, "%s%s: %s", a->server, path,
		         b.overflow     ? "reply too large"
		         : a->errbuf[0] ? a->errbuf
		                        : curl_easy_strerror(cc));
		goto out;
	}
	curl_easy_getinfo(a->h, CURLINFO_RESPONSE_CODE, &status);
	if (b.len)
		*reply = json_loadb(b.s, b.len, 0, NULL);
	if (status >= 400) {
		const char *e = NULL, *d = NULL;
		if (*reply)
			json_unpack(*reply, "{s?s, s?s}", "error", &e, "detail", &d);
		snprintf(err, errlen, "%s%s: HTTP %ld: %s%s%s", a->server, path, status,
		         e ? e : "error", d ? ": " : "", d ? d : "");
	}
out:
	curl_slist_free_all(hdrs);
	free(b.s);
	return status;
}
