/*
 * post.c - what the job tells the server: results (spooled when the server
 * is away), progress from the replies, failure, hand-back.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"
#include "fsutil.h"
#include "job.h"
#include "log.h"
#include "sandbox.h"
#include "spawn.h"
#include "spool.h"

static void update_progress(struct job *j, json_t *reply)
{
	json_int_t more = -1, next = -1;
	json_t *from = json_object_get(reply, "confirm_from");

	if (reply && !json_unpack(reply, "{s:I, s:I}", "more_rounds", &more, "next_round", &next)) {
		j->more_rounds = (int)more;
		j->next_round = (int)next;
		if (more == 0)
			atomic_store(&j->done, 1); /* the server holds every round it wants */
	}
	if (json_is_integer(from) && json_integer_value(from) > 0 && !j->confirm_from) {
		j->confirm_from = (int)json_integer_value(from);
		agent_log("info", j->id,
		          "rounds 0-%d found a change: rounds %d and later must confirm it",
		          j->confirm_from - 1, j->confirm_from);
	}
}

/* Post one document; on failure spool it and retry until delivered. */
int post_result(struct job *j, const char *variant, int round, const char *doc)
{
	char key[128], path[128], err[1024];
	/* one key per lease: a restarted agent re-running a round posts anew */
	if (j->claim > 0)
		snprintf(key, sizeof(key), "job%lld-c%d-%s-r%d", j->id, j->claim, variant, round);
	else
		snprintf(key, sizeof(key), "job%lld-%s-r%d", j->id, variant, round);
	snprintf(path, sizeof(path), "/api/v1/jobs/%lld/results", j->id);
	int delay = 1;
	bool spooled = false, warned = false;
	for (;;) {
		json_t *reply = NULL;
		pthread_mutex_lock(&j->post_lock);
		long st = api_post(&j->ag->api, path, doc, key, &reply, err, sizeof(err));
		if (st >= 200 && st < 300)
			update_progress(j, reply);
		pthread_mutex_unlock(&j->post_lock);
		if (st >= 200 && st < 300) {
			json_decref(reply);
			if (spooled) {
				char f[4096];
				snprintf(f, sizeof(f), "%s/%lld.%s.json", j->ag->spool_dir, j->id,
				         key);
				unlink(f);
				agent_log("info", j->id, "spooled result %s delivered", key);
			}
			return 0;
		}
		json_decref(reply);
		if (st >= 400 && st < 500 && st != 408 && st != 429) {
			snprintf(j->fail_reason, sizeof(j->fail_reason),
			         "the server refused the %s round %d result: %s", variant, round,
			         err);
			if (st == 403 || st == 404 || st == 409)
				atomic_store(&j->lost, 1);
			return -1;
		}
		if (!warned) {
			agent_log("warn", j->id, "cannot post %s: %s", key, err);
			warned = true;
		}
		/*
		 * A spool that cannot take it (full, read-only: spool_put says
		 * why) is tried again each time; meanwhile the document is held
		 * here and posted as soon as the server answers.
		 */
		if (!spooled)
			spooled = spool_put(j->ag->spool_dir, j->id, key, doc) == 0;
		if (atomic_load(&j->ag->stop)) {
			if (!spooled)
				agent_log("error", j->id,
				          "result %s is lost: the server did not take it and the "
				          "spool %s could not hold it",
				          key, j->ag->spool_dir);
			return -1; /* a spooled one is posted at the next start */
		}
		sleep((unsigned)delay);
		delay = delay < 30 ? delay * 2 : 30;
	}
}

/* Replace each needle in s (at most cap bytes with its NUL) by repl. */
static void redact_all(char *s, size_t cap, const char *needle, const char *repl)
{
	size_t nl = needle ? strlen(needle) : 0, rl = strlen(repl);
	if (nl < 4)
		return; /* a path such as "/" or an empty token names nothing */
	for (char *p = strstr(s, needle); p; p = strstr(p + rl, needle)) {
		size_t off = (size_t)(p - s), tail = strlen(p + nl) + 1;
		if (off + rl + 1 >= cap) {
			*p = 0;
			return;
		}
		if (off + rl + tail > cap)
			tail = cap - off - rl;
		memmove(p + rl, p + nl, tail);
		memcpy(p, repl, rl);
		s[cap - 1] = 0;
	}
}

/* Blank each line's rest after a case-blind marker (headers carrying credentials). */
static void redact_lines(char *s, const char *marker, size_t keep)
{
	size_t ml = strlen(marker);
	for (char *p = s; (p = strcasestr(p, marker)); p += ml) {
		char *end = p + ml + strcspn(p + ml, "\n");
		for (char *q = p + keep; q < end; q++)
			*q = '*';
	}
}

/* Blank each PEM private key block (its BEGIN line to its END line). */
static void redact_keys(char *s)
{
	for (char *p = s; (p = strstr(p, "-----BEGIN ")); p++) {
		char *eol = p + strcspn(p, "\n");
		if (!memmem(p, (size_t)(eol - p), "PRIVATE KEY-----", 16))
			continue;
		char *end = strstr(eol, "-----END ");
		end = end ? end + strcspn(end, "\n") : s + strlen(s);
		for (char *q = eol; q < end; q++)
			if (*q != '\n')
				*q = '*';
		p = end > p ? end - 1 : p;
	}
}

/*
 * What a failure says is published: whatever the submission's code printed
 * reaches it, so the agent's secrets and its own paths are taken out first
 * (the token, credential headers, private keys; its workdir, caches and
 * token file by name).
 */
void post_redact(const struct agent_cfg *cfg, char *s, size_t cap)
{
	redact_all(s, cap, cfg->token, "[agent token]");
	redact_all(s, cap, cfg->token_file, "<token file>");
	redact_all(s, cap, cfg->kernel_cache, "<kernel cache>");
	redact_all(s, cap, cfg->base_cache, "<base cache>");
	redact_all(s, cap, cfg->workdir, "<workdir>");
	redact_lines(s, "authorization:", 14);
	redact_lines(s, "private-token:", 14);
	redact_keys(s);
}

void post_fail(struct job *j)
{
	char path[128], err[512];
	post_redact(&j->ag->cfg, j->fail_reason, sizeof(j->fail_reason));
	json_t *body = json_pack("{s:s}", "reason", j->fail_reason);
	char *text = json_dumps(body, JSON_COMPACT);
	json_t *reply = NULL;
	snprintf(path, sizeof(path), "/api/v1/jobs/%lld/fail", j->id);
	long st = api_post(&j->ag->api, path, text, NULL, &reply, err, sizeof(err));
	if (st < 200 || st >= 300)
		agent_log("error", j->id, "cannot report the failure: %s", err);
	json_decref(reply);
	free(text);
	json_decref(body);
}

/* Give the job back to the queue (SIGTERM): another agent takes it over. */
void post_release(struct job *j)
{
	char path[128], err[512];
	json_t *reply = NULL;
	snprintf(path, sizeof(path), "/api/v1/jobs/%lld/release", j->id);
	long st = api_post(&j->ag->api, path, NULL, NULL, &reply, err, sizeof(err));
	json_decref(reply);
	if (st >= 200 && st < 300)
		agent_log("info", j->id, "job handed back to the queue");
	else
		agent_log("warn", j->id, "cannot hand the job back (%s); its lease will expire",
		          err);
}
