/*
 * metrics.h - the server's own counters for /metrics: request latency by
 * route, verdicts by kind, mails sent and failed, fetches refused.  Each
 * is a relaxed atomic (read by /metrics only), cheap to bump from any
 * thread.  health.c prints them with the database's gauges.
 */
#ifndef LOCKLAB_SERVER_METRICS_H
#define LOCKLAB_SERVER_METRICS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/*
 * Routes as metrics_request_done counts them: an index of the route table
 * (routes.h), or one of these.
 */
#define METRICS_ROUTE_STATIC (-2) /* a file of the dashboard */
#define METRICS_ROUTE_OTHER  (-1) /* no route: refused or not found before one matched */

/* A request of route took seconds from its first byte to its reply's end. */
void metrics_request_done(int route, double seconds);
/* A job was judged: verdict as verdict_name() spells it (static string). */
void metrics_verdict(const char *verdict);
/* A reply mail went out (sent) or was given up (!sent). */
void metrics_mail(bool sent);
/* A fetch of a submitted URL was refused by the address policy. */
void metrics_fetch_refused(void);

/*
 * A counter family in the Prometheus text format: its HELP and TYPE lines,
 * then name{label="values[i]"} counts[i] for each of the n values.
 */
void metrics_print_counters(FILE *out, const char *name, const char *help, const char *label,
                            const char *const *values, atomic_ulong *counts, size_t n);

/*
 * All of them in the Prometheus text format; the latency histograms are
 * labelled with the nroutes names that route_name gives (the route
 * table's: routes_count and routes_name of routes.h).
 */
void metrics_print(FILE *out, size_t nroutes,
                   void (*route_name)(size_t i, const char **method, const char **pattern));

#endif
