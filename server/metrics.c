/*
 * metrics.c - the server's own counters (metrics.h): relaxed atomics,
 * bumped where the thing happens and read only here, when /metrics prints
 * them.  Latency is a Prometheus histogram per route: a count per bucket
 * (made cumulative when printed), the sum in microseconds and the count.
 */
#include "metrics.h"

#include <stdatomic.h>
#include <string.h>

/* Slots: 0 no route, 1 the dashboard's files, 2 + i route i of the table. */
#define METRICS_SLOTS    64
#define METRICS_NBUCKETS 13

static const double metrics_bounds[METRICS_NBUCKETS] = {
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
static const char *const metrics_bound_names[METRICS_NBUCKETS] = {
    "0.001", "0.0025", "0.005", "0.01", "0.025", "0.05", "0.1",
    "0.25",  "0.5",    "1",     "2.5",  "5",     "10"};

struct metrics_hist {
	atomic_ulong bucket[METRICS_NBUCKETS + 1]; /* the last: over every bound */
	atomic_ullong sum_us;
	atomic_ulong count;
};

static struct metrics_hist metrics_latency[METRICS_SLOTS];

static const char *const metrics_verdicts[] = {"no-change",    "improvement", "regression",
                                               "inconclusive", "lockup",      "splat"};
#define METRICS_NVERDICTS (sizeof(metrics_verdicts) / sizeof(metrics_verdicts[0]))
static atomic_ulong metrics_verdict_total[METRICS_NVERDICTS];
static atomic_ulong metrics_mail_sent, metrics_mail_failed, metrics_fetch_refused_total;

static int metrics_slot(int route)
{
	if (route == METRICS_ROUTE_OTHER)
		return 0;
	if (route == METRICS_ROUTE_STATIC)
		return 1;
	if (route >= 0 && route + 2 < METRICS_SLOTS)
		return route + 2;
	return 0;
}

void metrics_request_done(int route, double seconds)
{
	struct metrics_hist *h = &metrics_latency[metrics_slot(route)];
	int b = 0;

	if (seconds < 0)
		seconds = 0;
	while (b < METRICS_NBUCKETS && seconds > metrics_bounds[b])
		b++;
	atomic_fetch_add_explicit(&h->bucket[b], 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&h->sum_us, (unsigned long long)(seconds * 1e6),
	                          memory_order_relaxed);
	atomic_fetch_add_explicit(&h->count, 1, memory_order_relaxed);
}

void metrics_verdict(const char *verdict)
{
	for (size_t i = 0; verdict && i < METRICS_NVERDICTS; i++)
		if (strcmp(verdict, metrics_verdicts[i]) == 0)
			atomic_fetch_add_explicit(&metrics_verdict_total[i], 1,
			                          memory_order_relaxed);
}

void metrics_mail(bool sent)
{
	atomic_fetch_add_explicit(sent ? &metrics_mail_sent : &metrics_mail_failed, 1,
	                          memory_order_relaxed);
}

void metrics_fetch_refused(void)
{
	atomic_fetch_add_explicit(&metrics_fetch_refused_total, 1, memory_order_relaxed);
}

/* One route's histogram, when it has counted anything. */
static void metrics_print_hist(FILE *out, int slot, const char *method, const char *route)
{
	struct metrics_hist *h = &metrics_latency[slot];
	unsigned long count = atomic_load_explicit(&h->count, memory_order_relaxed);
	unsigned long long sum = atomic_load_explicit(&h->sum_us, memory_order_relaxed);
	unsigned long cum = 0;
	int b;

	if (!count)
		return;
	for (b = 0; b < METRICS_NBUCKETS; b++) {
		cum += atomic_load_explicit(&h->bucket[b], memory_order_relaxed);
		fprintf(out,
		        "locklab_http_request_duration_seconds_bucket{method=\"%s\",route=\"%s\","
		        "le=\"%s\"} %lu\n",
		        method, route, metrics_bound_names[b], cum);
	}
	/* +Inf is the count, read once, so that it is never below a bucket */
	cum += atomic_load_explicit(&h->bucket[b], memory_order_relaxed);
	if (cum < count)
		cum = count;
	fprintf(out,
	        "locklab_http_request_duration_seconds_bucket{method=\"%s\",route=\"%s\","
	        "le=\"+Inf\"} %lu\n"
	        "locklab_http_request_duration_seconds_sum{method=\"%s\",route=\"%s\"} %.6f\n"
	        "locklab_http_request_duration_seconds_count{method=\"%s\",route=\"%s\"} %lu\n",
	        method, route, cum, method, route, (double)sum / 1e6, method, route, cum);
}

void metrics_print_counters(FILE *out, const char *name, const char *help, const char *label,
                            const char *const *values, atomic_ulong *counts, size_t n)
{
	fprintf(out, "# HELP %s %s\n# TYPE %s counter\n", name, help, name);
	for (size_t i = 0; i < n; i++)
		fprintf(out, "%s{%s=\"%s\"} %lu\n", name, label, values[i],
		        atomic_load_explicit(&counts[i], memory_order_relaxed));
}

void metrics_print(FILE *out, size_t nroutes,
                   void (*route_name)(size_t i, const char **method, const char **pattern))
{
	size_t i, n = nroutes;

	fprintf(out, "# HELP locklab_http_request_duration_seconds Time from a request's first "
	             "byte to the end of its reply, by route.\n"
	             "# TYPE locklab_http_request_duration_seconds histogram\n");
	for (i = 0; i < n && i + 2 < METRICS_SLOTS; i++) {
		const char *method, *pattern;

		route_name(i, &method, &pattern);
		metrics_print_hist(out, (int)i + 2, method, pattern);
	}
	metrics_print_hist(out, 1, "GET", "static");
	metrics_print_hist(out, 0, "any", "none");
	metrics_print_counters(out, "locklab_verdicts_total", "Jobs judged, by verdict.", "verdict",
	                       metrics_verdicts, metrics_verdict_total, METRICS_NVERDICTS);
	fprintf(out,
	        "# HELP locklab_mail_out_total Reply mails the SMTP server took (sent) or that "
	        "were given up on (failed).\n"
	        "# TYPE locklab_mail_out_total counter\n"
	        "locklab_mail_out_total{result=\"sent\"} %lu\n"
	        "locklab_mail_out_total{result=\"failed\"} %lu\n"
	        "# HELP locklab_fetch_refused_total Fetches of submitted URLs refused by the "
	        "address policy.\n"
	        "# TYPE locklab_fetch_refused_total counter\n"
	        "locklab_fetch_refused_total %lu\n",
	        atomic_load_explicit(&metrics_mail_sent, memory_order_relaxed),
	        atomic_load_explicit(&metrics_mail_failed, memory_order_relaxed),
	        atomic_load_explicit(&metrics_fetch_refused_total, memory_order_relaxed));
}
