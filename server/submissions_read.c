/*
 * submissions_read.c - GET /api/v1/submissions, a submission's page and
 * its series' versions (api.h).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "db.h"

static bool sub_state_ok(const char *s)
{
	return !strcmp(s, "queued") || !strcmp(s, "running") || !strcmp(s, "done") ||
	       !strcmp(s, "failed");
}

enum handler_rc api_submission_list(struct http_request *req)
{
	const char *state = http_query(req, "state");
	const char *limit = http_query(req, "limit");
	char lim[16] = "100";
	const char *p[2];

	if (state && !sub_state_ok(state))
		return http_reply_error(req, 400, "invalid",
		                        "state: one of queued, running, done, failed");
	if (limit && !api_query_int(limit, 1000, lim, sizeof(lim)))
		return http_reply_error(req, 400, "invalid", "limit: 1 to 1000");
	p[0] = state;
	p[1] = lim;
	return api_reply_sql(
	    req,
	    "SELECT json_build_object('submissions', coalesce(json_agg(x ORDER BY x.id DESC), "
	    "'[]')) FROM (SELECT s.id, s.state, s.source, s.subject, s.verdict, s.reason, "
	    "url_public(s.url) AS url, "
	    "s.suites, s.created, s.updated,"
	    " (SELECT author FROM patches WHERE submission_id = s.id ORDER BY seq = 0, seq "
	    "  LIMIT 1) AS author,"
	    " (SELECT count(*) FROM patches WHERE submission_id = s.id AND NOT is_cover) AS "
	    "  patches,"
	    " (SELECT coalesce(sum(rounds_wanted), 0) FROM jobs WHERE submission_id = s.id) AS "
	    "  rounds,"
	    " (SELECT count(*) FROM (SELECT r.job_id, r.round FROM results r JOIN jobs j ON "
	    "  j.id = r.job_id WHERE j.submission_id = s.id AND r.variant IN ('base', 'patched')"
	    "  GROUP BY r.job_id, r.round HAVING count(DISTINCT r.variant) = 2) z) AS "
	    "  rounds_complete"
	    " FROM submissions s WHERE ($1::text IS NULL OR s.state = $1) "
	    "ORDER BY s.id DESC LIMIT $2::int) x",
	    2, p, "submissions");
}

/*
 * A submission's page embeds the newest SUB_VERSIONS_EMBEDDED versions of its
 * series, and its own version when it is older (marked current, as on every
 * page): a series posted thousands of times would make every page megabytes
 * (and each connection's libpq buffer with it).  The rest: .../versions.
 */
#define SUB_VERSIONS_EMBEDDED "20"
/* one version (v, a row of submissions) with its patches' subjects and trailer counts;
 * current: it is the submission asked for (s) */
#define SUB_VERSION_JSON                                                                           \
	"json_build_object('id', v.id, 'version', v.version, 'state', v.state, 'verdict', "        \
	"v.verdict, 'subject', v.subject, 'created', v.created, 'patches', (SELECT "               \
	"coalesce(json_agg(json_build_object('seq', vp.seq, 'subject', vp.subject, "               \
	"'message_id', vp.message_id, 'trailers', (SELECT count(*) FROM mail_trailers t WHERE "    \
	"t.target = vp.message_id)) ORDER BY vp.seq), '[]') FROM patches vp WHERE "                \
	"vp.submission_id = v.id), 'current', v.id = s.id)"

enum handler_rc api_submission_get(struct http_request *req, long long id)
{
	return api_reply_sql_id(
	    req,
	    "SELECT json_build_object("
	    " 'id', s.id, 'state', s.state, 'source', s.source, 'url', url_public(s.url),"
	    " 'git', CASE WHEN s.git_url IS NULL THEN NULL ELSE json_build_object('url', "
	    "   url_public(s.git_url), 'ref', s.git_ref, 'base', s.git_base) END,"
	    " 'tree', (SELECT json_build_object('name', t.name, 'url', url_public(t.url), "
	    "   'branch', t.branch, "
	    "   'kind', t.kind) FROM trees t WHERE t.id = s.tree_id),"
	    " 'suites', s.suites, 'notify', s.notify, 'subject', s.subject,"
	    " 'message_id', s.reply_to_msgid, 'version', s.version, 'previous_id', s.previous_id,"
	    " 'verdict', s.verdict, 'reason', s.reason, 'created', s.created, 'updated', s.updated,"
	    " 'patches', (SELECT coalesce(json_agg(json_build_object('seq', seq, 'total', total,"
	    "   'cover', is_cover, 'message_id', message_id, 'in_reply_to', in_reply_to,"
	    "   'author', author, 'subject', subject, 'date', date, 'body', body, 'diff', diff)"
	    "   ORDER BY seq), '[]') FROM patches WHERE submission_id = s.id),"
	    /* patch mails not tested: past the numbering, or an earlier copy (sql/028) */
	    " 'set_aside', (SELECT coalesce(json_agg(json_build_object('seq', seq, 'total', "
	    "   total, 'why', why, 'message_id', message_id, 'author', author, 'subject', "
	    "   subject, 'date', date, 'diff', diff) ORDER BY id), '[]') FROM set_aside WHERE "
	    "   submission_id = s.id),"
	    " 'jobs', (SELECT coalesce(json_agg(json_build_object('id', j.id, 'suite', j.suite,"
	    "   'machine_class', j.machine_class, 'state', j.state, 'rounds', j.rounds_wanted,"
	    "   'rounds_complete', (SELECT count(*) FROM (SELECT round FROM results r WHERE "
	    "     r.job_id = j.id AND variant IN ('base', 'patched') GROUP BY round "
	    "     HAVING count(DISTINCT variant) = 2) z),"
	    "   'attempts', j.attempts, 'claimed_by', j.claimed_by, 'lease_expires', "
	    "   j.lease_expires, 'reason', j.reason, 'verdict', j.verdict, 'confirm_from', "
	    "   j.confirm_from, 'max_rounds', j.max_rounds, 'plan', j.plan,"
	    /* what its agent last said it was doing, while it runs */
	    "   'activity', CASE WHEN j.state = 'running' THEN j.activity END, 'activity_at', "
	    "   CASE WHEN j.state = 'running' THEN j.activity_at END,"
	    /* both sides ran one image: the patch changed no code (compare.h) */
	    "   'identical_code', coalesce((SELECT (c.machine->>'identical_code')::boolean "
	    "     FROM comparisons c WHERE c.job_id = j.id ORDER BY c.id DESC LIMIT 1), false),"
	    "   'image', (SELECT c.machine->>'image' FROM comparisons c WHERE c.job_id = j.id "
	    "     ORDER BY c.id DESC LIMIT 1)) ORDER BY j.id), "
	    "   '[]')"
	    "   FROM jobs j WHERE j.submission_id = s.id),"
	    " 'verdicts', (SELECT coalesce(json_agg(json_build_object('job', c.job_id, "
	    "   'suite', c.suite, 'final', c.final, 'workload', v.workload, 'lock', v.lock, "
	    "   'metric', v.metric, 'unit', v.unit, 'params', v.params_key, 'users', v.users,"
	    "   'better', CASE WHEN v.higher_better THEN 'higher' ELSE 'lower' END,"
	    "   'base', json_build_object('n', v.base_n, 'mean', v.base_mean, 'stddev', "
	    "     v.base_stddev),"
	    "   'patched', json_build_object('n', v.patched_n, 'mean', v.patched_mean, "
	    "     'stddev', v.patched_stddev),"
	    "   'change', v.change, 'change_lo', v.change_lo, 'change_hi', v.change_hi,"
	    "   'margin', v.margin, 'moved', v.moved, 'p', v.p, 'q', v.q, 'verdict', v.verdict,"
	    "   'significant', v.significant, 'control', v.control, 'pairs', v.pairs,"
	    /*
	     * what a row its machine cannot resolve can resolve at the job's most
	     * rounds: its plan's (plan.h; a plan before resolution_at_max: the
	     * MDE), else the job's own rounds' (plan_mark_futile)
	     */
	    "   'unresolvable', coalesce((SELECT coalesce((x->>'resolution_at_max')::float8, "
	    "     (x->>'mde_at_max')::float8) FROM "
	    "     jsonb_array_elements(j.plan->'rows') x WHERE x->>'resolvable' = 'false' AND "
	    "     x->>'workload' = v.workload AND x->>'lock' = v.lock AND x->>'params' = "
	    "     v.params_key AND x->>'metric' = v.metric LIMIT 1), v.unresolvable))"
	    "   ORDER BY c.job_id, v.idx), '[]') FROM comparisons c JOIN verdicts v ON "
	    "   v.comparison_id = c.id JOIN jobs j ON j.id = c.job_id WHERE j.submission_id = "
	    "   s.id),"
	    " 'lockups', (SELECT coalesce(json_agg(json_build_object('job', l.job_id, "
	    "   'variant', l.variant, 'round', l.round, 'workload', l.workload, 'lock', l.lock,"
	    "   'params', l.params_key, 'kind', l.kind, 'message', l.message, 'stacks', "
	    "   l.stacks) ORDER BY l.id), '[]') FROM lockups l JOIN jobs j ON j.id = l.job_id "
	    "   WHERE j.submission_id = s.id),"
	    " 'mails', (SELECT coalesce(json_agg(json_build_object('id', o.id, 'kind', o.kind, "
	    "   'state', o.state, 'message_id', o.message_id, 'recipients', o.recipients, "
	    "   'subject', o.subject, 'attempts', o.attempts, 'next_attempt', o.next_attempt, "
	    "   'last_error', o.last_error, 'created', o.created, 'sent', o.sent) ORDER BY o.id), "
	    "   '[]') FROM outbox o WHERE o.submission_id = s.id),"
	    /* trailers given on the list in replies to its mails (seq 0: the whole series) */
	    " 'trailers', (SELECT coalesce(json_agg(json_build_object('seq', p.seq, 'kind', "
	    "   t.kind, 'who', t.who, 'from', t.sender, 'reply_id', t.reply_id, 'received', "
	    "   t.received) ORDER BY p.seq, t.received, t.kind, t.who), '[]') FROM patches p "
	    "   JOIN mail_trailers t ON t.target = p.message_id WHERE p.submission_id = s.id),"
	    /* the newest versions of the series and its own (all of them: .../versions, paged) */
	    " 'versions_total', (SELECT count(*) FROM submissions v WHERE v.mail_series = "
	    "   s.mail_series),"
	    " 'versions', (SELECT coalesce(json_agg(" SUB_VERSION_JSON " ORDER BY v.version DESC,"
	    "   v.id DESC), '[]') FROM submissions v WHERE v.mail_series = s.mail_series AND "
	    "   (v.id = s.id OR v.id IN (SELECT n.id FROM submissions n WHERE n.mail_series = "
	    "   s.mail_series ORDER BY n.version DESC, n.id DESC LIMIT " SUB_VERSIONS_EMBEDDED ")))"
	    ") FROM submissions s WHERE s.id = $1",
	    id, "submission");
}

enum handler_rc api_submission_versions(struct http_request *req, long long id)
{
	const char *limit = http_query(req, "limit");
	const char *before = http_query(req, "before");
	char idbuf[24], lim[24] = SUB_VERSIONS_EMBEDDED, beforebuf[24];
	const char *p[3] = {idbuf, lim, NULL};
	PGresult *res;
	enum handler_rc rc;

	if (limit && !api_query_int(limit, 100, lim, sizeof(lim)))
		return http_reply_error(req, 400, "invalid", "limit: 1 to 100");
	if (before && !api_query_int(before, LLONG_MAX, beforebuf, sizeof(beforebuf)))
		return http_reply_error(req, 400, "invalid",
		                        "before: the id of a version of this series");
	snprintf(idbuf, sizeof(idbuf), "%lld", id);
	p[2] = before ? beforebuf : NULL;
	/* one more row than the page tells whether older versions are left */
	res = db_read(
	    "SELECT s.id, CASE WHEN $3::bigint IS NOT NULL AND b.id IS NULL THEN NULL ELSE "
	    " json_build_object('submission', s.id, 'total', (SELECT count(*) FROM submissions c "
	    " WHERE c.mail_series = s.mail_series), 'versions', coalesce(p.list, '[]'), "
	    " 'next_before', CASE WHEN p.more THEN p.oldest END) END"
	    " FROM submissions s LEFT JOIN submissions b ON b.id = $3::bigint AND b.mail_series = "
	    " s.mail_series LEFT JOIN LATERAL (SELECT json_agg(" SUB_VERSION_JSON
	    " ORDER BY v.version DESC, v.id DESC) FILTER (WHERE v.rn <= $2::int) AS list,"
	    " count(*) > $2::int AS more, (array_agg(v.id ORDER BY v.version, v.id) FILTER (WHERE"
	    " v.rn <= $2::int))[1] AS oldest FROM (SELECT x.*, row_number() OVER (ORDER BY "
	    " x.version DESC, x.id DESC) AS rn FROM submissions x WHERE x.mail_series = "
	    " s.mail_series AND (b.id IS NULL OR (x.version, x.id) < (b.version, b.id)) ORDER BY"
	    " x.version DESC, x.id DESC LIMIT $2::int + 1) v) p ON true WHERE s.id = $1",
	    3, p);
	if (!res)
		return api_reply_db_error(req, "cannot read the database");
	if (PQntuples(res) != 1)
		rc = http_reply_error(req, 404, "not-found", "no such submission");
	else if (PQgetisnull(res, 0, 1))
		rc = http_reply_error(req, 400, "invalid",
		                      "before: %s is not the id of a version of this series",
		                      beforebuf);
	else
		rc = http_reply(req, 200, "application/json", PQgetvalue(res, 0, 1),
		                (size_t)PQgetlength(res, 0, 1));
	PQclear(res);
	return rc;
}
