/*
 * api.h - the agent's side of the job lease protocol (docs/api.md), over
 * one reused libcurl easy handle: api_post resets its options but keeps its
 * connection cache, so one struct api sends every post over one kept-alive
 * connection (make bench-keepalive: about 20x the posts per second of a new
 * connection each).  curl_global_init is main's job.
 */
#ifndef LOCKLAB_AGENT_API_H
#define LOCKLAB_AGENT_API_H

#include <curl/curl.h>
#include <jansson.h>
#include <stddef.h>

struct api {
	CURL *h;
	char *server; /* base URL without trailing slash */
	char *token;
	char errbuf[CURL_ERROR_SIZE];
};

/* Returns 0 or -1 (out of memory).  api_release pairs with it. */
int api_init(struct api *a, const char *server, const char *token);
void api_release(struct api *a);

/*
 * POST body (JSON text, may be NULL for an empty object) to path with the
 * bearer token and, when idem_key is set, an Idempotency-Key header.
 * Returns the HTTP status (>= 100), or -1 when the server could not be
 * reached (err says why).  *reply gets the parsed JSON answer (new
 * reference) or NULL.
 */
long api_post(struct api *a, const char *path, const char *body, const char *idem_key,
              json_t **reply, char *err, size_t errlen);

#endif
