/*
 * track.h - continuous tracking (docs/api.md "Tracking, alerts, bisection").
 *
 * One tracker thread per server.  Every --track-interval seconds, or at
 * once after POST /api/v1/trees/{id}/poke, it fetches each tracked tree's
 * branch into a bare mirror under --track-dir (git run from an argv array,
 * never a shell) and submits a new head as an A/B git submission against the
 * previous tracked head; many commits landing at once are one run (the
 * newest head), bisection measures what lies between when it must.  Every
 * second it reads the runs that ended: a head run's numbers become history
 * points, E-Divisive (changepoint.h) proposes steps, an A/B run of each
 * step's two commits confirms it, a confirmed regression becomes an alert,
 * and bisection (A/B runs against the known-good end, commits that do not
 * build skipped) names the first bad commit.  A confirmed improvement after
 * an open alert on the same series marks it fixed.
 *
 * Several servers may share one database: runs are unique per pair of
 * commits and bisection steps per (alert, commit), so nothing is measured
 * or counted twice.
 */
#ifndef LOCKLAB_SERVER_TRACK_H
#define LOCKLAB_SERVER_TRACK_H

#include "http.h"

/*
 * main() of the server started as locklab-ssh: git's ssh for an ssh://
 * tree, held to the address the tracker checked (sshpin.h).
 */
int track_ssh_main(int argc, char **argv);

/* Start and stop the tracker thread; start returns 0 or -1. */
int track_start(void);
void track_stop(void);

/* POST /api/v1/trees/{id}/poke (admin): look at the tree now. */
enum handler_rc api_tree_poke(struct http_request *req, long long id);
/* GET /api/v1/alerts[?state=S][&tree=NAME] */
enum handler_rc api_alert_list(struct http_request *req);
/* PATCH /api/v1/alerts/{id} (admin): {"state": ..., "who"?: ..., "note"?: ...} */
enum handler_rc api_alert_update(struct http_request *req, long long id);

#endif
