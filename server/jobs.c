/*
 * jobs.c - agents and the job lease protocol (claim, heartbeat, fail,
 * release, the reaper of lost leases); results.c stores what they post and
 * judges the job.  The rounds
 * protocol (docs/api.md): a job asks for `rounds` interleaved A/B rounds;
 * when every round has both documents the server compares them; if a point
 * is inconclusive (and nothing locked up) it raises `rounds` by min_rounds,
 * up to max_rounds, and every answer to the agent says how many are left
 * ("more_rounds").  At zero the job is done.
 */
#include "jobs.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api.h"
#include "config.h"
#include "conn.h"
#include "db.h"
#include "plan.h"
#include "reply.h"

static int jobs_reply_body(PGconn *c, void *arg)
{
	return reply_queue(c, *(long long *)arg);
}

int jobs_reap(PGconn *c)
{
	char max[16];
	const char *p[1] = {max};
	PGresult *res;
	int n;

	snprintf(max, sizeof(max), "%d", srv_cfg.max_attempts);
	res = db_exec(
	    c,
	    "WITH expired AS (SELECT id FROM jobs WHERE state = 'running' AND "
	    "  lease_expires < now() FOR UPDATE SKIP LOCKED), "
	    "upd AS (UPDATE jobs j SET attempts = j.attempts + 1, claimed_by = NULL, "
	    "  lease_expires = NULL, updated = now(), queued_at = now(), "
	    "  state = CASE WHEN j.attempts + 1 >= $1::int THEN 'failed' ELSE 'queued' END, "
	    "  reason = CASE WHEN j.attempts + 1 >= $1::int THEN format('lease expired %s "
	    "times, last held by agent %s', j.attempts + 1, j.claimed_by) ELSE j.reason END "
	    "  FROM expired WHERE j.id = expired.id RETURNING j.id, j.submission_id, j.state, "
	    "  j.reason, j.suite), "
	    "sub AS (UPDATE submissions s SET state = 'failed', updated = now(), "
	    "  reason = format('job %s (%s) failed: %s', upd.id, upd.suite, upd.reason) "
	    "  FROM upd WHERE s.id = upd.submission_id AND upd.state = 'failed' AND "
	    "  s.state IN ('queued', 'running') RETURNING s.id) "
	    "SELECT (SELECT count(*) FROM upd), (SELECT string_agg(id::text, ' ') FROM sub)",
	    1, p);
	if (!res)
		return -1;
	n = atoi(PQgetvalue(res, 0, 0));
	/*
	 * The submissions this failed get their reply, each in its own
	 * transaction.  A crash right here loses those replies (the failure
	 * itself is kept); GET .../reply still builds them.
	 */
	for (const char *s = PQgetvalue(res, 0, 1); *s;) {
		char *end;
		long long id = strtoll(s, &end, 10);

		if (end == s)
			break;
		db_tx(jobs_reply_body, &id);
		s = end;
	}
	PQclear(res);
	return n;
}

static pthread_t reaper;
static atomic_bool reaper_stop;
static bool reaper_running;

static void *jobs_reaper(void *arg)
{
	while (!atomic_load(&reaper_stop)) {
		PGconn *c = db_conn();

		if (c)
			jobs_reap(c);
		sleep(1);
	}
	return NULL;
}

int jobs_reaper_start(void)
{
	if (pthread_create(&reaper, NULL, jobs_reaper, NULL) != 0)
		return -1;
	reaper_running = true;
	return 0;
}

void jobs_reaper_stop(void)
{
	if (!reaper_running)
		return;
	atomic_store(&reaper_stop, true);
	pthread_join(reaper, NULL);
	reaper_running = false;
}

/* POST /api/v1/agents/register */
enum handler_rc api_agent_register(struct http_request *req)
{
	const char *name = "", *mclass = "default", *role = "agent";
	char secret[65], hash[65];
	json_t *doc = NULL;
	json_error_t jerr;
	int trusted = 0;
	PGconn *c;
	PGresult *res;
	enum handler_rc rc;

	if (req->body_len) {
		doc = http_body_json(req);
		if (!doc)
			return HANDLER_HANDLED;
		if (json_unpack_ex(doc, &jerr, JSON_STRICT, "{s?s, s?s, s?s, s?b}", "name", &name,
		                   "machine_class", &mclass, "role", &role, "trusted",
		                   &trusted) != 0) {
			rc = http_reply_error(req, 400, "invalid", "%s", jerr.text);
			goto out;
		}
		if (strcmp(role, "agent") != 0 && strcmp(role, "submitter") != 0) {
			rc = http_reply_error(req, 400, "invalid", "role: agent or submitter");
			goto out;
		}
		if (trusted && strcmp(role, "submitter") != 0) {
			rc = http_reply_error(req, 400, "invalid", "trusted: only a submitter is");
			goto out;
		}
		if (!*mclass || strlen(mclass) > 100 || strlen(name) > 200) {
			rc = http_reply_error(req, 400, "invalid",
			                      "machine_class: 1 to 100 bytes; name: up to 200");
			goto out;
		}
	}
	if (auth_new_token(secret) != 0) {
		rc = http_reply_error(req, 500, "internal", "cannot read /dev/urandom");
		goto out;
	}
	sha256_hex(secret, strlen(secret), hash);
	c = db_conn();
	if (!c) {
		rc = api_reply_db_error(req, "cannot store the agent");
		goto out;
	}
	{
		const char *p[5] = {name, role, mclass, hash, trusted ? "t" : "f"};

		res = db_exec(c,
		              "INSERT INTO agents (name, role, machine_class, token_hash, trusted) "
		              "VALUES ($1, $2, $3, $4, $5) RETURNING id",
		              5, p);
	}
	if (!res) {
		rc = api_reply_db_error(req, "cannot store the agent");
		goto out;
	}
	if (strcmp(role, "agent") == 0)
		conn_agent_token(hash); /* counted by its token from its first request */
	rc = http_reply_json(req, 201,
	                     json_pack("{s:I, s:s, s:s, s:s, s:s, s:b}", "id",
	                               (json_int_t)strtoll(PQgetvalue(res, 0, 0), NULL, 10),
	                               "token", secret, "name", name, "role", role, "machine_class",
	                               mclass, "trusted", trusted));
	PQclear(res);
out:
	json_decref(doc);
	return rc;
}

/* Rounds of a job that have both documents, and the first one that does not. */
static const char *rounds_sql =
    "WITH r AS (SELECT round, count(DISTINCT variant) AS nv FROM results WHERE job_id = $1 AND "
    "variant IN ('base', 'patched') GROUP BY round) SELECT j.rounds_wanted, (SELECT count(*) "
    "FROM r WHERE nv = 2 AND round < j.rounds_wanted), (SELECT coalesce(min(g), "
    "j.rounds_wanted) FROM generate_series(0, j.rounds_wanted - 1) g LEFT JOIN r ON r.round = "
    "g AND r.nv = 2 WHERE r.round IS NULL), j.state, to_char(j.lease_expires AT TIME ZONE "
    "'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), j.verdict, j.confirm_from FROM jobs j WHERE "
    "j.id = $1";

json_t *jobs_progress(PGconn *c, long long id)
{
	char idbuf[24];
	const char *p[1] = {idbuf};
	PGresult *res;
	json_t *o;
	int wanted, complete;

	snprintf(idbuf, sizeof(idbuf), "%lld", id);
	res = db_exec(c, rounds_sql, 1, p);
	if (!res || PQntuples(res) != 1) {
		PQclear(res);
		return NULL;
	}
	wanted = atoi(PQgetvalue(res, 0, 0));
	complete = atoi(PQgetvalue(res, 0, 1));
	o = json_pack(
	    "{s:I, s:s, s:i, s:i, s:i, s:i, s:s?, s:s?, s:o}", "id", (json_int_t)id, "state",
	    PQgetvalue(res, 0, 3), "rounds", wanted, "rounds_complete", complete, "next_round",
	    atoi(PQgetvalue(res, 0, 2)), "more_rounds",
	    strcmp(PQgetvalue(res, 0, 3), "running") == 0 && wanted > complete ? wanted - complete
	                                                                       : 0,
	    "lease_expires", db_value(res, 0, 4), "verdict", db_value(res, 0, 5), "confirm_from",
	    PQgetisnull(res, 0, 6) ? json_null() : json_integer(atoi(PQgetvalue(res, 0, 6))));
	PQclear(res);
	return o;
}

struct claim_ctx {
	struct auth_agent *agent;
	const char *key; /* the claim's Idempotency-Key, NULL for none */
	json_t *job;     /* out: the description, NULL when the queue is empty */
};

/*
 * The job this agent already holds under the claim key x->key (a claim sent
 * again because its answer was lost), its lease extended: the same job and
 * the same lease (jobs.claims unchanged).  NULL with *rc DB_OK when there is
 * none, so the claim picks a new job; the key is then taken off any job of
 * this agent whose lease ran out before the reaper saw it (the unique index
 * of sql/019 holds a key on one running job of an agent).
 */
static PGresult *claim_again(PGconn *c, struct claim_ctx *x, const char *agent, const char *lease,
                             int *rc)
{
	const char *p[3] = {agent, x->key, lease};
	PGresult *res;

	*rc = DB_OK;
	if (!x->key)
		return NULL;
	res = db_exec(c,
	              "UPDATE jobs SET lease_expires = now() + make_interval(secs => $3::int), "
	              "updated = now() WHERE state = 'running' AND claimed_by = $1 AND "
	              "claim_key = $2 AND lease_expires >= now() RETURNING id, submission_id",
	              3, p);
	if (!res) {
		*rc = db_failure();
		return NULL;
	}
	if (PQntuples(res) == 1)
		return res;
	PQclear(res);
	*rc = db_run(c, "UPDATE jobs SET claim_key = NULL WHERE claimed_by = $1 AND claim_key = $2",
	             2, p);
	return NULL;
}

static int claim_body(PGconn *c, void *arg)
{
	struct claim_ctx *x = arg;
	char agent[24], lease[16];
	PGresult *res;
	const char *jid;
	json_t *desc = NULL, *progress;
	int rc;

	json_decref(x->job);
	x->job = NULL;
	snprintf(agent, sizeof(agent), "%lld", x->agent->id);
	snprintf(lease, sizeof(lease), "%d", srv_cfg.lease_seconds);
	res = claim_again(c, x, agent, lease, &rc);
	if (rc != DB_OK)
		return rc;
	if (!res) {
		const char *p[4] = {x->agent->machine_class, agent, lease, x->key};

		res = db_exec(
		    c,
		    "WITH pick AS (SELECT id FROM jobs WHERE state = 'queued' AND "
		    "machine_class = $1 ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED) "
		    "UPDATE jobs j SET state = 'running', claimed_by = $2, claims = j.claims + 1, "
		    "lease_expires = now() + make_interval(secs => $3::int), updated = now(), "
		    "claim_key = $4 FROM pick WHERE j.id = pick.id RETURNING j.id, j.submission_id",
		    4, p);
		if (!res)
			return db_failure();
	}
	if (PQntuples(res) == 0) {
		PQclear(res);
		return DB_OK;
	}
	jid = PQgetvalue(res, 0, 0);
	{
		const char *p[1] = {PQgetvalue(res, 0, 1)};
		const char *q[1] = {agent};

		rc = db_run(c,
		            "UPDATE submissions SET state = 'running', updated = now() WHERE "
		            "id = $1 AND state = 'queued'",
		            1, p);
		if (rc == DB_OK)
			rc = db_run(c, "UPDATE agents SET last_seen = now() WHERE id = $1", 1, q);
		/* the rounds this machine class's noise asks for (plan.h), once */
		if (rc == DB_OK)
			rc = plan_job(c, strtoll(jid, NULL, 10));
	}
	if (rc != DB_OK) {
		PQclear(res);
		return rc;
	}
	{
		const char *p[1] = {jid};
		PGresult *d = db_exec(
		    c,
		    "SELECT json_build_object('id', j.id, 'submission_id', s.id, 'suite', j.suite, "
		    " 'machine_class', j.machine_class, 'attempts', j.attempts, 'claim', j.claims, "
		    " 'source', s.source, 'subject', "
		    " s.subject, 'git', CASE WHEN s.git_url IS NULL THEN NULL ELSE "
		    " json_build_object('url', s.git_url, 'ref', s.git_ref, 'base', s.git_base, "
		    " 'pull', s.source <> 'git') "
		    "END, "
		    " 'tree', (SELECT json_build_object('name', t.name, 'url', t.url, 'branch', "
		    " t.branch, 'kind', t.kind) FROM trees t WHERE t.id = s.tree_id), "
		    " 'patches', (SELECT coalesce(json_agg(json_build_object('seq', seq, "
		    " 'message_id', message_id, 'author', author, 'subject', subject, 'diff', "
		    "diff) "
		    " ORDER BY seq), '[]') FROM patches WHERE submission_id = s.id AND NOT "
		    "is_cover), "
		    /* each patch's message as sent, for git am (base64: any charset) */
		    " 'mails', (SELECT coalesce(json_agg(translate(encode(coalesce(raw, "
		    "convert_to(format("
		    "E'From: %s\\nDate: %s\\nSubject: %s\\nMessage-ID: %s\\n\\n%s\\n---\\n%s', "
		    " author, coalesce(date, ''), subject, coalesce(message_id, ''), body, diff), "
		    " 'UTF8')), 'base64'), E'\\n', '') ORDER BY seq), '[]') FROM patches WHERE "
		    "submission_id = "
		    " s.id AND NOT is_cover)"
		    ")::text FROM jobs j JOIN submissions s ON s.id = j.submission_id WHERE j.id = "
		    "$1",
		    1, p);

		if (!d) {
			PQclear(res);
			return db_failure();
		}
		desc = json_loads(PQgetvalue(d, 0, 0), 0, NULL);
		PQclear(d);
	}
	progress = jobs_progress(c, strtoll(jid, NULL, 10));
	PQclear(res);
	if (!desc || !progress) {
		json_decref(desc);
		json_decref(progress);
		return DB_FAIL;
	}
	json_object_set_new(desc, "lease_seconds", json_integer(srv_cfg.lease_seconds));
	json_object_update(desc, progress);
	json_decref(progress);
	x->job = desc;
	return DB_OK;
}

enum handler_rc jobs_agent_request(struct http_request *req, PGconn **c, struct auth_agent *agent)
{
	*agent = req->caller;
	*c = db_conn();
	if (!*c)
		return api_reply_db_error(req, "no database connection");
	return HANDLER_OK;
}

/* The reply for a job_lock refusal (404, 403 or 409). */
static enum handler_rc lease_refusal(struct http_request *req, int status, const char *msg)
{
	return http_reply_error(req, (unsigned)status,
	                        status == 404   ? "not-found"
	                        : status == 403 ? "forbidden"
	                                        : "lease-lost",
	                        "%s", msg);
}

enum handler_rc api_job_claim(struct http_request *req)
{
	struct auth_agent agent;
	struct claim_ctx x = {&agent, http_header(req, "Idempotency-Key"), NULL};
	PGconn *c;
	enum handler_rc rc;

	if (x.key && (!*x.key || strlen(x.key) > 200))
		return http_reply_error(req, 400, "invalid",
		                        "a claim's Idempotency-Key has 1 to 200 bytes");
	rc = jobs_agent_request(req, &c, &agent);
	if (rc != HANDLER_OK)
		return rc;
	jobs_reap(c);
	if (db_tx(claim_body, &x) != DB_OK) {
		json_decref(x.job);
		return api_reply_db_error(req, "cannot claim a job");
	}
	if (!x.job)
		return http_reply_json(req, 200, json_pack("{s:n, s:i}", "job", "retry_after", 5));
	return http_reply_json(req, 200, json_pack("{s:o}", "job", x.job));
}

/*
 * Lock job id for agent: DB_OK when it is running under agent's lease, else
 * DB_ABORT with *status and msg set (404, 403 another agent's job, 409 lease
 * lost or job finished).
 */
static int job_lock(PGconn *c, long long id, const struct auth_agent *agent, int *status, char *msg,
                    size_t msglen, long long *submission)
{
	char idbuf[24];
	const char *p[1] = {idbuf};
	PGresult *res;
	const char *state, *owner;
	int rc = DB_ABORT;

	snprintf(idbuf, sizeof(idbuf), "%lld", id);
	res = db_exec(c,
	              "SELECT state, claimed_by, submission_id, lease_expires < now() FROM jobs "
	              "WHERE id = $1 FOR UPDATE",
	              1, p);
	if (!res)
		return db_failure();
	if (PQntuples(res) != 1) {
		*status = 404;
		snprintf(msg, msglen, "no job %lld", id);
		goto out;
	}
	state = PQgetvalue(res, 0, 0);
	owner = db_value(res, 0, 1);
	if (submission)
		*submission = strtoll(PQgetvalue(res, 0, 2), NULL, 10);
	if (owner && strtoll(owner, NULL, 10) != agent->id) {
		*status = 403;
		snprintf(msg, msglen, "job %lld is leased to another agent", id);
		goto out;
	}
	if (strcmp(state, "running") != 0 || !owner) {
		*status = 409;
		snprintf(msg, msglen, "job %lld is %s: the lease is gone", id, state);
		goto out;
	}
	if (db_value(res, 0, 3) && PQgetvalue(res, 0, 3)[0] == 't') {
		*status = 409;
		snprintf(msg, msglen, "job %lld: the lease expired", id);
		goto out;
	}
	rc = DB_OK;
out:
	PQclear(res);
	return rc;
}

struct hb_ctx {
	long long id;
	struct auth_agent *agent;
	const char *activity; /* what the agent says it is doing, NULL when it did not say */
	int status;
	char msg[256];
	json_t *progress;
};

static int heartbeat_body(PGconn *c, void *arg)
{
	struct hb_ctx *x = arg;
	char idbuf[24], lease[16];
	int rc;

	json_decref(x->progress);
	x->progress = NULL;
	rc = job_lock(c, x->id, x->agent, &x->status, x->msg, sizeof(x->msg), NULL);
	if (rc != DB_OK)
		return rc;
	snprintf(idbuf, sizeof(idbuf), "%lld", x->id);
	snprintf(lease, sizeof(lease), "%d", srv_cfg.lease_seconds);
	const char *q[3] = {idbuf, lease, x->activity};
	rc = db_run(c,
	            "UPDATE jobs SET lease_expires = now() + make_interval(secs => $2::int), "
	            "updated = now(), activity = coalesce($3, activity), activity_at = CASE "
	            "WHEN $3 IS NULL THEN activity_at ELSE now() END WHERE id = $1",
	            3, q);
	if (rc != DB_OK)
		return rc;
	x->progress = jobs_progress(c, x->id);
	return x->progress ? DB_OK : DB_FAIL;
}

/*
 * The heartbeat's optional body {"activity": "..."}: printable text of at
 * most JOBS_MAX_ACTIVITY bytes (anything else is a 400, an empty body says
 * nothing); *out borrows from *doc.
 */
#define JOBS_MAX_ACTIVITY 200
static enum handler_rc heartbeat_activity(struct http_request *req, json_t **doc, const char **out)
{
	*doc = NULL;
	*out = NULL;
	if (!req->body_len)
		return HANDLER_OK;
	json_error_t jerr;
	*doc = json_loadb(req->body, req->body_len, 0, &jerr);
	json_t *a = json_is_object(*doc) ? json_object_get(*doc, "activity") : NULL;
	if (!json_is_object(*doc) || (a && !json_is_string(a)))
		return http_reply_error(req, 400, "invalid",
		                        "a heartbeat's body is {\"activity\": \"text\"} or empty");
	if (!a)
		return HANDLER_OK;
	const char *t = json_string_value(a);
	size_t n = strlen(t);
	if (n != json_string_length(a) || n > JOBS_MAX_ACTIVITY)
		return http_reply_error(req, 400, "invalid", "activity: at most %d bytes of text",
		                        JOBS_MAX_ACTIVITY);
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)t[i] < 0x20 || t[i] == 0x7f)
			return http_reply_error(req, 400, "invalid",
			                        "activity: one line of printable text");
	*out = t;
	return HANDLER_OK;
}

enum handler_rc api_job_heartbeat(struct http_request *req, long long id)
{
	struct auth_agent agent;
	struct hb_ctx x = {id, &agent, NULL, 0, "", NULL};
	PGconn *c;
	enum handler_rc rc;
	json_t *doc;
	int dbrc;

	rc = heartbeat_activity(req, &doc, &x.activity);
	if (rc != HANDLER_OK) {
		json_decref(doc);
		return rc;
	}
	rc = jobs_agent_request(req, &c, &agent);
	if (rc != HANDLER_OK) {
		json_decref(doc);
		return rc;
	}
	jobs_reap(c);
	dbrc = db_tx(heartbeat_body, &x);
	json_decref(doc);
	if (dbrc == DB_ABORT)
		return lease_refusal(req, x.status, x.msg);
	if (dbrc != DB_OK) {
		json_decref(x.progress);
		return api_reply_db_error(req, "cannot extend the lease");
	}
	return http_reply_json(req, 200, x.progress);
}

struct fail_ctx {
	long long id;
	struct auth_agent *agent;
	const char *reason;
	int status;
	char msg[256];
};

static int fail_body(PGconn *c, void *arg)
{
	struct fail_ctx *x = arg;
	char idbuf[24], sub[24];
	long long submission = 0;
	int rc;

	rc = job_lock(c, x->id, x->agent, &x->status, x->msg, sizeof(x->msg), &submission);
	if (rc != DB_OK)
		return rc;
	snprintf(idbuf, sizeof(idbuf), "%lld", x->id);
	snprintf(sub, sizeof(sub), "%lld", submission);
	{
		const char *p[3] = {idbuf, x->reason, sub};

		rc = db_run(c,
		            "UPDATE jobs SET state = 'failed', reason = $2, lease_expires = NULL, "
		            "updated = now() WHERE id = $1",
		            2, p);
		if (rc == DB_OK)
			rc = db_run(
			    c,
			    "UPDATE submissions s SET state = 'failed', updated = now(), "
			    "reason = format('job %s (%s) failed: %s', j.id, j.suite, $2::text) "
			    "FROM jobs j WHERE j.id = $1 AND s.id = $3 AND s.state IN "
			    "('queued', 'running')",
			    3, p);
	}
	if (rc == DB_OK)
		rc = reply_queue(c, submission); /* the developer hears why */
	return rc;
}

enum handler_rc api_job_fail(struct http_request *req, long long id)
{
	struct auth_agent agent;
	struct fail_ctx x = {id, &agent, NULL, 0, ""};
	PGconn *c;
	json_t *doc;
	json_error_t jerr;
	enum handler_rc rc;
	int dbrc;

	rc = jobs_agent_request(req, &c, &agent);
	if (rc != HANDLER_OK)
		return rc;
	doc = http_body_json(req);
	if (!doc)
		return HANDLER_HANDLED;
	if (json_unpack_ex(doc, &jerr, JSON_STRICT, "{s:s}", "reason", &x.reason) != 0) {
		rc = http_reply_error(req, 400, "invalid", "%s", jerr.text);
		goto out;
	}
	/* shown in every public view of the submission: bounded like a document's strings */
	if (!*x.reason || strlen(x.reason) > JOBS_MAX_REASON) {
		rc =
		    http_reply_error(req, 400, "invalid", "reason: 1 to %d bytes", JOBS_MAX_REASON);
		goto out;
	}
	dbrc = db_tx(fail_body, &x);
	if (dbrc == DB_ABORT)
		rc = lease_refusal(req, x.status, x.msg);
	else if (dbrc != DB_OK)
		rc = api_reply_db_error(req, "cannot record the failure");
	else
		rc = http_reply_json(req, 200,
		                     json_pack("{s:I, s:s, s:s}", "id", (json_int_t)id, "state",
		                               "failed", "reason", x.reason));
out:
	json_decref(doc);
	return rc;
}

static int release_body(PGconn *c, void *arg)
{
	struct fail_ctx *x = arg;
	char idbuf[24];
	long long submission = 0;
	int rc;

	rc = job_lock(c, x->id, x->agent, &x->status, x->msg, sizeof(x->msg), &submission);
	if (rc != DB_OK)
		return rc;
	snprintf(idbuf, sizeof(idbuf), "%lld", x->id);
	{
		const char *p[1] = {idbuf};

		/* back to the queue as it was: stored rounds stay, no attempt is counted */
		rc = db_run(
		    c,
		    "UPDATE jobs SET state = 'queued', claimed_by = NULL, lease_expires = NULL, "
		    "queued_at = now(), updated = now() WHERE id = $1",
		    1, p);
	}
	return rc;
}

/*
 * POST /api/v1/jobs/{id}/release: the claiming agent hands the job back
 * (it is stopping); another agent goes on from the next round.
 */
enum handler_rc api_job_release(struct http_request *req, long long id)
{
	struct auth_agent agent;
	struct fail_ctx x = {id, &agent, NULL, 0, ""};
	PGconn *c;
	enum handler_rc rc;
	int dbrc;

	rc = jobs_agent_request(req, &c, &agent);
	if (rc != HANDLER_OK)
		return rc;
	dbrc = db_tx(release_body, &x);
	if (dbrc == DB_ABORT)
		return lease_refusal(req, x.status, x.msg);
	if (dbrc != DB_OK)
		return api_reply_db_error(req, "cannot release the job");
	return http_reply_json(req, 200,
	                       json_pack("{s:I, s:s}", "id", (json_int_t)id, "state", "queued"));
}
