/*
 * trackapi.c - the tracker's HTTP handlers (track.h): POST
 * /api/v1/trees/{id}/poke, GET /api/v1/alerts and PATCH
 * /api/v1/alerts/{id}.  The tracker itself is track.c, the alerts
 * trackalert.c.
 */
#include "track.h"
#include "track_internal.h"

#include <stdio.h>
#include <string.h>

#include "api.h"
#include "db.h"

/* ---- HTTP ------------------------------------------------------------------------ */

enum handler_rc api_tree_poke(struct http_request *req, long long id)
{
	char idbuf[24];
	const char *p[1] = {idbuf};
	PGconn *c = db_conn();
	PGresult *res;
	enum handler_rc rc;

	snprintf(idbuf, sizeof(idbuf), "%lld", id);
	if (!c)
		return api_reply_db_error(req, "cannot poke the tree");
	res = db_exec(
	    c, "UPDATE trees SET track_poked = now() WHERE id = $1 AND track RETURNING id", 1, p);
	if (!res)
		return api_reply_db_error(req, "cannot poke the tree");
	if (PQntuples(res) == 0)
		rc = http_reply_error(req, 404, "not-found", "no tracked tree %lld", id);
	else
		rc = http_reply_json(req, 202,
		                     json_pack("{s:I, s:b}", "id", (json_int_t)id, "poked", 1));
	PQclear(res);
	track_wake();
	return rc;
}

#define ALERT_JSON                                                                                 \
	"json_build_object('id', a.id, 'tree', t.name, 'branch', a.branch, 'state', a.state, "     \
	"'commit', coalesce(a.commit, ''), 'subject', a.subject, 'author', a.author, 'range', "    \
	"a.good || '..' || a.bad, 'bisect_range', a.bisect_good || '..' || a.bisect_bad, "         \
	"'machine_class', a.machine_class, 'workload', a.workload, 'lock', a.lock, 'metric', "     \
	"a.metric, 'params', a.params_key, 'change', a.change, 'before', a.before_mean, 'after', " \
	"a.after_mean, 'unit', a.unit, 'reason', a.reason, 'fixed_by', a.fixed_by, 'found_by', "   \
	"a.found_by, 'state_by', "                                                                 \
	"a.state_by, 'state_at', a.state_at, 'created', a.created, 'steps', (SELECT "              \
	"coalesce(json_agg(json_build_object('commit', st.commit, 'good', st.good, 'verdict', "    \
	"st.verdict, 'change', st.change, 'submission', r.submission_id) ORDER BY st.created), "   \
	"'[]') FROM bisect_steps st JOIN track_runs r ON r.id = st.run_id WHERE st.alert_id = "    \
	"a.id), 'events', (SELECT coalesce(json_agg(json_build_object('state', e.state, 'who', "   \
	"e.who, 'at', e.at, 'note', e.note) ORDER BY e.at), '[]') FROM alert_events e WHERE "      \
	"e.alert_id = a.id), 'history', (SELECT coalesce(json_agg(json_build_object('seq', "       \
	"tc.seq, 'commit', p.commit, 'value', p.value) ORDER BY tc.seq), '[]') FROM track_points " \
	"p JOIN track_commits tc ON tc.tree_id = p.tree_id AND tc.branch = p.branch AND "          \
	"tc.commit "                                                                               \
	"= p.commit WHERE p.tree_id = a.tree_id AND p.branch = a.branch AND p.machine_class = "    \
	"a.machine_class AND p.workload = a.workload AND p.lock = a.lock AND p.metric = a.metric " \
	"AND p.params_key = a.params_key AND tc.segment = (SELECT segment FROM track_commits "     \
	"WHERE tree_id = a.tree_id AND branch = a.branch AND commit = a.bad)), 'seqs', (SELECT "   \
	"json_object_agg(CASE tc.commit WHEN "                                                     \
	"a.good THEN 'good' WHEN a.bad THEN 'bad' ELSE 'commit' END, tc.seq) FROM track_commits "  \
	"tc "                                                                                      \
	"WHERE tc.tree_id = a.tree_id AND tc.branch = a.branch AND tc.commit IN (a.good, a.bad, "  \
	"coalesce(a.commit, a.good))))"

enum handler_rc api_alert_list(struct http_request *req)
{
	const char *state = http_query(req, "state"), *tree = http_query(req, "tree");
	const char *p[2] = {state, tree};

	return api_reply_sql(req,
	                     "SELECT json_build_object('alerts', coalesce(json_agg(" ALERT_JSON
	                     " ORDER BY a.id DESC), '[]')) FROM alerts a JOIN trees t ON t.id = "
	                     "a.tree_id WHERE ($1::text IS NULL OR a.state = $1) AND ($2::text "
	                     "IS NULL OR t.name = $2)",
	                     2, p, "alerts");
}

enum handler_rc api_alert_update(struct http_request *req, long long id)
{
	static const char *const states[] = {"new",   "confirmed", "bisected",
	                                     "fixed", "invalid",   "wontfix"};
	const char *state, *who = "admin", *note = NULL;
	char idbuf[24];
	json_t *doc = http_body_json(req);
	json_error_t jerr;
	PGconn *c;
	PGresult *res = NULL;
	enum handler_rc rc;
	size_t i;

	if (!doc)
		return HANDLER_HANDLED;
	if (json_unpack_ex(doc, &jerr, JSON_STRICT, "{s:s, s?s, s?s}", "state", &state, "who", &who,
	                   "note", &note) != 0) {
		rc = http_reply_error(req, 400, "invalid", "%s", jerr.text);
		goto out;
	}
	for (i = 0; i < sizeof(states) / sizeof(states[0]); i++)
		if (strcmp(state, states[i]) == 0)
			break;
	if (i == sizeof(states) / sizeof(states[0])) {
		rc = http_reply_error(req, 400, "invalid",
		                      "state: new, confirmed, bisected, fixed, invalid or wontfix");
		goto out;
	}
	if (!*who || strlen(who) > 200 || (note && strlen(note) > 2000)) {
		rc = http_reply_error(req, 400, "invalid",
		                      "who: 1 to 200 bytes; note: at most 2000");
		goto out;
	}
	c = db_conn();
	if (!c) {
		rc = api_reply_db_error(req, "cannot change the alert");
		goto out;
	}
	snprintf(idbuf, sizeof(idbuf), "%lld", id);
	{
		const char *p[3] = {idbuf, state, who};

		res = db_exec(c,
		              "UPDATE alerts SET state = $2, state_by = $3, state_at = now() WHERE "
		              "id = $1 RETURNING id",
		              3, p);
	}
	if (!res) {
		rc = api_reply_db_error(req, "cannot change the alert");
		goto out;
	}
	if (PQntuples(res) == 0) {
		rc = http_reply_error(req, 404, "not-found", "no alert %lld", id);
		goto out;
	}
	track_event(c, idbuf, state, who, note);
	{
		const char *p[1] = {idbuf};

		PQclear(res);
		res = NULL;
		rc = api_reply_sql(req,
		                   "SELECT " ALERT_JSON " FROM alerts a JOIN trees t ON t.id = "
		                   "a.tree_id WHERE a.id = $1",
		                   1, p, "alert");
	}
out:
	PQclear(res);
	json_decref(doc);
	return rc;
}
