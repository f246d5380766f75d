/*
 * bench_post.c - `make bench-keepalive`: how many posts a second the agent's
 * api_post (agents/api.c) gets through, over one reused connection and with a
 * new connection for each post, against a running locklab-server.
 *
 *   bench-agent-post URL TOKEN PATH BODYFILE N [REPS]
 *
 * POSTs BODYFILE (JSON; "-" for none) to PATH N times in each mode, REPS
 * times (default 3) alternating the modes, and prints for each mode the
 * median rate, the statuses seen and the TCP connections libcurl opened
 * (CURLINFO_NUM_CONNECTS summed over the posts).  "reuse" is what the agent
 * does: one struct api for its life.  "fresh" makes a struct api per post.
 * A post is sent with an Idempotency-Key, so a result document is stored
 * once and later posts are answered as duplicates.  Exits 1 when a post
 * fails or gets a status >= 400.
 */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../agents/api.h"
#include "strutil.h"

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* One post over a; adds the connections it opened to *conns.  0 or -1. */
static int post_once(struct api *a, const char *path, const char *body, long *conns)
{
	char err[1024];
	json_t *reply = NULL;
	long st = api_post(a, path, body, "bench-keepalive", &reply, err, sizeof(err)), n = 0;

	json_decref(reply);
	curl_easy_getinfo(a->h, CURLINFO_NUM_CONNECTS, &n);
	*conns += n;
	if (st < 200 || st >= 400) {
		fprintf(stderr, "bench-agent-post: %s\n", st < 0 ? err : err[0] ? err : "refused");
		return -1;
	}
	return 0;
}

/* N posts in one mode; the rate, or -1 after a message. */
static double run_mode(const char *url, const char *token, const char *path, const char *body,
                       long n, int reuse, long *conns)
{
	struct api shared;
	double t0;

	*conns = 0;
	if (reuse && api_init(&shared, url, token))
		return -1;
	t0 = now_seconds();
	for (long i = 0; i < n; i++) {
		struct api fresh, *a = &shared;
		int rc;

		if (!reuse) {
			if (api_init(&fresh, url, token))
				return -1;
			a = &fresh;
		}
		rc = post_once(a, path, body, conns);
		if (!reuse)
			api_release(&fresh);
		if (rc) {
			if (reuse)
				api_release(&shared);
			return -1;
		}
	}
	t0 = now_seconds() - t0;
	if (reuse)
		api_release(&shared);
	return n / t0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	struct strutil_buf body = STRUTIL_BUF_INIT;
	double rates[2][16];
	long conns[2] = {0, 0}, n, reps;
	int ret = 1;

	if (argc < 6 || argc > 7) {
		fprintf(stderr, "usage: bench-agent-post URL TOKEN PATH BODYFILE N [REPS]\n");
		return 2;
	}
	n = atol(argv[5]);
	reps = argc == 7 ? atol(argv[6]) : 3;
	if (n <= 0 || reps <= 0 || reps > 16) {
		fprintf(stderr, "bench-agent-post: N > 0 and 1 <= REPS <= 16\n");
		return 2;
	}
	if (strcmp(argv[4], "-") != 0 && strutil_read_file(argv[4], &body) != 0) {
		perror(argv[4]);
		return 2;
	}
	curl_global_init(CURL_GLOBAL_DEFAULT);
	for (long r = 0; r < reps; r++) {
		for (int reuse = 0; reuse < 2; reuse++) {
			long c;

			rates[reuse][r] =
			    run_mode(argv[1], argv[2], argv[3],
			             body.len ? strutil_buf_str(&body) : NULL, n, reuse, &c);
			if (rates[reuse][r] < 0)
				goto out;
			conns[reuse] += c;
		}
	}
	for (int reuse = 0; reuse < 2; reuse++) {
		qsort(rates[reuse], (size_t)reps, sizeof(double), cmp_double);
		printf("%-5s %s: %.0f posts/s (median of %ld x %ld posts, min %.0f, max %.0f), "
		       "%ld TCP connections opened\n",
		       reuse ? "reuse" : "fresh",
		       reuse ? "one connection kept alive" : "a new connection each",
		       rates[reuse][reps / 2], reps, n, rates[reuse][0], rates[reuse][reps - 1],
		       conns[reuse]);
	}
	printf("keep-alive: %.1fx the posts per second\n", rates[1][reps / 2] / rates[0][reps / 2]);
	ret = 0;
out:
	strutil_buf_release(&body);
	curl_global_cleanup();
	return ret;
}
