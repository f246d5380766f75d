/*
 * trackmail.c - the mail of a bisected alert (track_internal.h), written
 * as the kernel test robot writes its reports: the finding first, the
 * commit, the range; for a change of a figure the before/after line and
 * the lockbench commands that reproduce it, for a fault (splat, lockup,
 * crash) the words of its finding.  Kept in the outbox (kind 'alert').
 */
#include "track_internal.h"

#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config.h"
#include "db.h"
#include "mail.h"
#include "outbox.h"

/* How an alert's step was found (alerts.found_by), in words for its mail. */
static const char *track_found_by_text(const char *found_by)
{
	if (strcmp(found_by, "ab-head") == 0)
		return "the interleaved A/B of a new head against the last head\nmeasured";
	if (strcmp(found_by, "ab-sample") == 0)
		return "the interleaved A/B of a sample run inside a push";
	return "a change point in the branch's history, confirmed by an\ninterleaved A/B of "
	       "its two commits";
}

/*
 * The subject and body (new, the caller g_frees them) of the mail of
 * bisected fault alert aid, res the row track_mail_alert reads: the
 * fault, the words of its finding, the commit, the range.
 */
static void track_fault_mail_text(PGresult *res, const char *aid, const char *public_url,
                                  char **subject, char **body)
{
	const char *kind = PQgetvalue(res, 0, 11);
	/* where: a splat's key, else the point that locked up or crashed */
	char *where = strcmp(kind, "splat")
	                  ? g_strdup_printf("point: %s %s %s", PQgetvalue(res, 0, 9),
	                                    PQgetvalue(res, 0, 10), PQgetvalue(res, 0, 12))
	                  : g_strdup_printf("key: %s (in the boot: %s)", PQgetvalue(res, 0, 12),
	                                    PQgetvalue(res, 0, 9));

	*subject = g_strdup_printf("[locklab alert %s] %.12s %s: %s", aid, PQgetvalue(res, 0, 0),
	                           PQgetvalue(res, 0, 1), kind);
	*body = g_strdup_printf(
	    "Greeting,\n\n"
	    "locklab found a new %s in %s (branch %s) on the %s machines: the\n"
	    "commit below ran into it where the commit before it ran clean.\n\n"
	    "  %s\n\n"
	    "%s\n\n"
	    "It was found by %s,\nand bisected with A/B runs to:\n\n"
	    "commit: %s\n(\"%s\")\nauthor: %s\n"
	    "tree:   %s %s\nrange:  %.12s..%.12s, %s A/B steps\n\n"
	    "The alert, its history and steps: %s%s/#/alerts\n\n"
	    "Thanks,\nlocklab\n",
	    kind, PQgetvalue(res, 0, 3), PQgetvalue(res, 0, 4), PQgetvalue(res, 0, 8),
	    PQgetisnull(res, 0, 22) ? kind : PQgetvalue(res, 0, 22), where,
	    track_found_by_text(PQgetvalue(res, 0, 21)), PQgetvalue(res, 0, 0),
	    PQgetvalue(res, 0, 1), PQgetvalue(res, 0, 2), PQgetvalue(res, 0, 3),
	    PQgetvalue(res, 0, 4), PQgetvalue(res, 0, 19), PQgetvalue(res, 0, 0),
	    PQgetvalue(res, 0, 18), strncmp(public_url, "http", 4) ? "http://" : "", public_url);
	g_free(where);
}

/*
 * Queue the mail of a bisected alert to the commit's author, Cc the tree's
 * list when it has one, in the kernel test robot's manner: the finding first, the commit, the
 * before/after table, how to reproduce with lockbench.  Kept in the outbox (kind 'alert', held in a
 * dry run) under the confirming A/B's submission.
 */
void track_mail_alert(PGconn *c, const char *aid)
{
	const char *p[1] = {aid};
	PGresult *res = db_exec(
	    c,
	    "SELECT a.commit, a.subject, a.author, t.name, a.branch, t.url, a.good, a.bad, "
	    "a.machine_class, a.workload, a.lock, a.metric, a.params_key, a.change, a.before_mean, "
	    "a.after_mean, a.unit, r.submission_id, (SELECT count(*) FROM bisect_steps st WHERE "
	    "st.alert_id = a.id), a.bisect_good, t.list, a.found_by, (SELECT e.note FROM "
	    "alert_events e WHERE e.alert_id = a.id AND e.state = 'new' ORDER BY e.at LIMIT 1) "
	    "FROM alerts a JOIN trees t ON "
	    "t.id = "
	    "a.tree_id "
	    "JOIN "
	    "track_runs r ON r.id = a.confirm_run WHERE a.id = $1 AND a.commit IS NOT NULL AND NOT "
	    "EXISTS (SELECT 1 FROM outbox o WHERE o.kind = 'alert' AND o.subject LIKE '%alert ' "
	    "|| a.id || ']%')",
	    1, p);
	char *body = NULL, *subject = NULL, *msg = NULL, *msgid = NULL, *to = NULL, err[256];
	const char *public_url = *srv_cfg.public_url ? srv_cfg.public_url : srv_cfg.listen;
	double change;

	if (!res || PQntuples(res) != 1)
		goto out;
	change = strtod(PQgetvalue(res, 0, 13), NULL);
	if (track_metric_is_fault(PQgetvalue(res, 0, 11))) {
		track_fault_mail_text(res, aid, public_url, &subject, &body);
		goto send;
	}
	subject = g_strdup_printf("[locklab alert %s] %.12s %s: %+.1f%% %s regression", aid,
	                          PQgetvalue(res, 0, 0), PQgetvalue(res, 0, 1), 100 * change,
	                          PQgetvalue(res, 0, 11));
	body = g_strdup_printf(
	    "Greeting,\n\n"
	    "locklab found a %+.1f%% change of %s (%s) in %s on the %s lock (%s), on the\n"
	    "%s machines. It was found by %s,\nand bisected with interleaved A/B runs to:\n\n"
	    "commit: %s\n(\"%s\")\nauthor: %s\n"
	    "tree:   %s %s\nrange:  %.12s..%.12s, %s A/B steps\n\n"
	    "%16.12s %28.12s\n---------------- ---------------------------\n"
	    "%16.6g %+10.1f%% %16.6g  %s.%s.%s.%s\n\n"
	    "To reproduce (the lockbench of each commit, A/B):\n\n"
	    "  git clone %s tree && cd tree\n"
	    "  git checkout %.12s && make build/lockbench && cp build/lockbench /tmp/lb-base\n"
	    "  git checkout %.12s && make build/lockbench\n"
	    "  for r in 0 1 2; do\n"
	    "    /tmp/lb-base run --suite smoke --locks %s --workloads %s --round $r --json "
	    "base-$r.json\n"
	    "    build/lockbench run --suite smoke --locks %s --workloads %s --variant patched "
	    "--round $r --json patched-$r.json\n"
	    "  done\n"
	    "  build/lockbench compare base-0.json,base-1.json,base-2.json "
	    "patched-0.json,patched-1.json,patched-2.json\n\n"
	    "The alert, its history and steps: %s%s/#/alerts\n\n"
	    "Thanks,\nlocklab\n",
	    100 * change, PQgetvalue(res, 0, 11), PQgetvalue(res, 0, 16), PQgetvalue(res, 0, 9),
	    PQgetvalue(res, 0, 10), PQgetvalue(res, 0, 12), PQgetvalue(res, 0, 8),
	    track_found_by_text(PQgetvalue(res, 0, 21)), PQgetvalue(res, 0, 0),
	    PQgetvalue(res, 0, 1), PQgetvalue(res, 0, 2), PQgetvalue(res, 0, 3),
	    PQgetvalue(res, 0, 4), PQgetvalue(res, 0, 6), PQgetvalue(res, 0, 7),
	    PQgetvalue(res, 0, 18), PQgetvalue(res, 0, 19), PQgetvalue(res, 0, 0),
	    strtod(PQgetvalue(res, 0, 14), NULL), 100 * change,
	    strtod(PQgetvalue(res, 0, 15), NULL), PQgetvalue(res, 0, 9), PQgetvalue(res, 0, 10),
	    PQgetvalue(res, 0, 11), PQgetvalue(res, 0, 12), PQgetvalue(res, 0, 5),
	    PQgetvalue(res, 0, 19), PQgetvalue(res, 0, 0), PQgetvalue(res, 0, 10),
	    PQgetvalue(res, 0, 9), PQgetvalue(res, 0, 10), PQgetvalue(res, 0, 9),
	    strncmp(public_url, "http", 4) ? "http://" : "", public_url);
send:
	to = mail_addr_spec(PQgetvalue(res, 0, 2));
	{
		struct mail_reply m = {.from = srv_cfg.mail_from,
		                       .to = PQgetvalue(res, 0, 2),
		                       .cc = db_value(res, 0, 20),
		                       .subject = subject,
		                       .domain = srv_cfg.mail_domain,
		                       .body = body,
		                       .tag = strtoll(aid, NULL, 10),
		                       .date = time(NULL),
		                       .new_thread = true};

		msg = mail_build_reply(&m, &msgid, err, sizeof(err));
	}
	if (!msg || !to) {
		fprintf(stderr, "locklab-server: tracker: alert %s: no mail: %s\n", aid,
		        msg ? "no author address" : err);
		goto out;
	}
	{
		const char *list = db_value(res, 0, 20);
		char *rcpt = list ? g_strdup_printf("%s, %s", to, list) : g_strdup(to);
		const char *q[6] = {PQgetvalue(res, 0, 17),
		                    rcpt,
		                    subject,
		                    msg,
		                    msgid,
		                    outbox_sending() ? "queued" : "held"};

		db_run(c,
		       "INSERT INTO outbox (submission_id, kind, recipients, subject, message, "
		       "message_id, state) VALUES ($1, 'alert', $2, $3, $4, $5, $6)",
		       6, q);
		g_free(rcpt);
	}
out:
	g_free(body);
	g_free(subject);
	free(msg);
	free(msgid);
	free(to);
	PQclear(res);
}
