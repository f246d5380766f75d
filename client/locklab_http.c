/*
 * locklab_http.c - the client's requests (locklab_internal.h): the one
 * libcurl handle of a run, a request under the --timeout deadline with its
 * reply capped at MAX_REPLY, a JSON reply, and the fields read from one.
 */
#include <curl/curl.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "locklab_internal.h"
#include "strutil.h"

#define MAX_REPLY (64u << 20)

/* --server, $LOCKLAB_SERVER or the default: set by the options' table (locklab.c) */
const char *cl_server;
CURL *cl_conn;      /* the one handle of this run: its connection is reused */
double cl_deadline; /* monotonic seconds, 0: none (--timeout) */
bool cl_timed_out;  /* the last request ran into the deadline */

double cl_now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static size_t on_data(char *p, size_t size, size_t n, void *arg)
{
	struct reply *r = arg;
	size_t add = size * n;
	char *nd;

	if (r->len + add > MAX_REPLY)
		return 0;
	nd = realloc(r->data, r->len + add + 1);
	if (!nd)
		return 0;
	memcpy(nd + r->len, p, add);
	r->data = nd;
	r->len += add;
	r->data[r->len] = '\0';
	return add;
}

/*
 * One request over the run's handle; 0 with r filled (any HTTP status, r->data
 * never NULL), or -1 after a message (timed_out says whether the deadline cut
 * it).  curl_easy_reset keeps the handle's connection cache: the next request
 * reuses the connection when the server kept it open.
 */
int cl_request(const char *method, const char *path, const char *body, struct reply *r)
{
	struct curl_slist *hdrs = NULL;
	char url[4096], err[CURL_ERROR_SIZE] = "";
	long timeout_ms = 300 * 1000L;
	CURLcode rc;

	memset(r, 0, sizeof(*r));
	cl_timed_out = false;
	if (cl_deadline > 0) {
		double left = cl_deadline - cl_now_seconds();

		if (left <= 0) {
			cl_timed_out = true;
			return -1;
		}
		if (left * 1000 < timeout_ms)
			timeout_ms = (long)(left * 1000) + 1;
	}
	snprintf(url, sizeof(url), "%s%s", cl_server, path);
	curl_easy_reset(cl_conn);
	curl_easy_setopt(cl_conn, CURLOPT_URL, url);
	curl_easy_setopt(cl_conn, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(cl_conn, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(cl_conn, CURLOPT_CONNECTTIMEOUT, 10L);
	curl_easy_setopt(cl_conn, CURLOPT_TIMEOUT_MS, timeout_ms);
	curl_easy_setopt(cl_conn, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(cl_conn, CURLOPT_ERRORBUFFER, err);
	curl_easy_setopt(cl_conn, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(cl_conn, CURLOPT_WRITEDATA, r);
	if (body) {
		hdrs = curl_slist_append(hdrs, "Content-Type: application/json");
		curl_easy_setopt(cl_conn, CURLOPT_HTTPHEADER, hdrs);
		curl_easy_setopt(cl_conn, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(cl_conn, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(body));
	}
	rc = curl_easy_perform(cl_conn);
	if (rc == CURLE_OK)
		curl_easy_getinfo(cl_conn, CURLINFO_RESPONSE_CODE, &r->status);
	curl_slist_free_all(hdrs);
	if (rc != CURLE_OK) {
		cl_timed_out = rc == CURLE_OPERATION_TIMEDOUT && cl_deadline > 0 &&
		               cl_now_seconds() >= cl_deadline - 0.01;
		if (!cl_timed_out)
			fprintf(stderr, "locklab: %s: %s\n", url,
			        err[0] ? err : curl_easy_strerror(rc));
		free(r->data);
		r->data = NULL;
		return -1;
	}
	if (!r->data)
		r->data = strutil_xstrdup("");
	return 0;
}

/* Print the server's {"error","detail"} (or the raw body) for a failed call. */
void cl_print_error(const char *path, const struct reply *r)
{
	json_t *doc = json_loadb(r->data, r->len, 0, NULL);
	const char *e = NULL, *d = NULL;

	if (doc && json_unpack(doc, "{s:s, s:s}", "error", &e, "detail", &d) == 0)
		fprintf(stderr, "locklab: %s: server said %ld %s: %s\n", path, r->status, e, d);
	else
		fprintf(stderr, "locklab: %s: server said %ld: %.200s\n", path, r->status, r->data);
	json_decref(doc);
}

/*
 * GET path and parse it; the JSON (new reference) or NULL after a message.
 * When raw is not NULL it takes the body as sent (the caller frees it).
 */
json_t *cl_get_json(const char *path, char **raw)
{
	struct reply r;
	json_t *doc = NULL;
	json_error_t jerr;

	if (raw)
		*raw = NULL;
	if (cl_request("GET", path, NULL, &r) != 0)
		return NULL;
	if (r.status != 200) {
		cl_print_error(path, &r);
		goto out;
	}
	doc = json_loadb(r.data, r.len, 0, &jerr);
	if (!doc) {
		fprintf(stderr, "locklab: %s: not JSON: %s\n", path, jerr.text);
		goto out;
	}
	if (raw) {
		*raw = r.data;
		r.data = NULL;
	}
out:
	free(r.data);
	return doc;
}

/* A document exactly as the server sent it, ending in one newline. */
void cl_print_raw(FILE *out, const char *raw)
{
	size_t len = strlen(raw);

	fputs(raw, out);
	if (!len || raw[len - 1] != '\n')
		fputc('\n', out);
	fflush(out);
}

/*
 * obj[key] as text: a string as it is, an integer in decimal, else dflt
 * (missing, null).  json_unpack's "s?s" refuses a null value and stops there,
 * and the API sends null for what is not known yet.
 */
const char *cl_field_text(json_t *obj, const char *key, char *buf, size_t len, const char *dflt)
{
	json_t *v = json_object_get(obj, key);

	if (json_is_string(v))
		return json_string_value(v);
	if (json_is_integer(v) && buf) {
		snprintf(buf, len, "%lld", (long long)json_integer_value(v));
		return buf;
	}
	return dflt;
}

const char *cl_field_str(json_t *obj, const char *key, const char *dflt)
{
	return cl_field_text(obj, key, NULL, 0, dflt);
}
