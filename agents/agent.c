/* agent.c - the agent's lifecycle: folders, one step (flush, claim, run), a job's
 * heartbeat and its end (agent.h).  The steps of a job are job.h's. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
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
#include "sshpin.h"

int agent_init(struct agent *ag, const struct agent_cfg *cfg)
{
	char p[4096];
	memset(ag, 0, sizeof(*ag));
	ag->cfg = *cfg;
	snprintf(ag->accel, sizeof(ag->accel), "auto"); /* probed again at each start */
	if (fs_mkdirs(cfg->workdir)) {
		fprintf(stderr, "locklab-agent: cannot create workdir %s: %s\n", cfg->workdir,
		        strerror(errno));
		return -1;
	}
	snprintf(p, sizeof(p), "%s/spool", cfg->workdir);
	ag->spool_dir = strdup(p);
	snprintf(p, sizeof(p), "%s/mirrors", cfg->workdir);
	ag->mirrors_dir = strdup(p);
	snprintf(p, sizeof(p), "%s/jobs", cfg->workdir);
	ag->jobs_dir = strdup(p);
	if (fs_mkdirs(ag->spool_dir) || fs_mkdirs(ag->mirrors_dir) || fs_mkdirs(ag->jobs_dir)) {
		fprintf(stderr, "locklab-agent: cannot create folders in %s: %s\n", cfg->workdir,
		        strerror(errno));
		return -1;
	}
	/* without it, ssh:// submissions are refused (build.c), nothing else */
	if (sshpin_install(cfg->workdir, ag->ssh_helper, sizeof(ag->ssh_helper))) {
		fprintf(stderr,
		        "locklab-agent: cannot link %s/bin/locklab-ssh (%s): ssh:// git URLs will "
		        "be refused\n",
		        cfg->workdir, strerror(errno));
		ag->ssh_helper[0] = 0;
	}
	if (api_init(&ag->api, cfg->server, cfg->token)) {
		fprintf(stderr, "locklab-agent: out of memory\n");
		return -1;
	}
	return 0;
}

void agent_release(struct agent *ag)
{
	api_release(&ag->api);
	free(ag->spool_dir);
	free(ag->mirrors_dir);
	free(ag->jobs_dir);
}

void job_activity(struct job *j, const char *log, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&j->activity_lock);
	va_start(ap, fmt);
	vsnprintf(j->activity, sizeof(j->activity), fmt, ap);
	va_end(ap);
	snprintf(j->activity_log, sizeof(j->activity_log), "%s", log ? log : "");
	clock_gettime(CLOCK_MONOTONIC, &j->activity_since);
	pthread_mutex_unlock(&j->activity_lock);
	atomic_store(&j->activity_new, 1);
}

/* Lines of a kernel build's make log that compiled an object ("  CC      fs/pipe.o"). */
static long compiled_objects(const char *log)
{
	FILE *f = fopen(log, "r");
	char line[512];
	long n = 0;
	bool start = true;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		n += start && !strncmp(line, "  CC ", 5);
		start = strchr(line, '\n') != NULL; /* a long line's rest is not a line */
	}
	fclose(f);
	return n;
}

/* The heartbeat's body: {"activity": "what, for how long"}, or NULL before any. */
static char *activity_body(struct job *j)
{
	char what[sizeof(j->activity)], log[sizeof(j->activity_log)], text[256];
	struct timespec since, now;

	pthread_mutex_lock(&j->activity_lock);
	memcpy(what, j->activity, sizeof(what));
	memcpy(log, j->activity_log, sizeof(log));
	since = j->activity_since;
	pthread_mutex_unlock(&j->activity_lock);
	if (!what[0])
		return NULL;
	clock_gettime(CLOCK_MONOTONIC, &now);
	long s = (long)(now.tv_sec - since.tv_sec), objs = log[0] ? compiled_objects(log) : -1;
	int w = snprintf(text, sizeof(text), "%s", what);
	if (objs >= 0)
		w += snprintf(text + w, sizeof(text) - (size_t)w, ": %ld objects compiled", objs);
	snprintf(text + w, sizeof(text) - (size_t)w, ", %ld min %02ld s", s / 60, s % 60);
	json_t *o = json_pack("{s:s}", "activity", text);
	char *body = o ? json_dumps(o, JSON_COMPACT) : NULL;
	json_decref(o);
	return body;
}

/* Whether the heartbeat is due, i tenths of a second after the last one. */
static bool heartbeat_due(struct job *j, int i, int period)
{
	struct timespec now, since;
	bool building;

	if (i >= period * 10)
		return true;
	pthread_mutex_lock(&j->activity_lock);
	since = j->activity_since;
	building = j->activity_log[0] != 0;
	pthread_mutex_unlock(&j->activity_lock);
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (atomic_load(&j->activity_new))
		return now.tv_sec - since.tv_sec >= 2;
	return building && i >= 100;
}

static void *heartbeat_thread(void *arg)
{
	struct job *j = arg;
	struct api a;
	char path[128], err[512];
	int period = j->lease_s > 3 ? j->lease_s / 3 : 1;

	if (api_init(&a, j->ag->cfg.server, j->ag->cfg.token))
		return NULL;
	snprintf(path, sizeof(path), "/api/v1/jobs/%lld/heartbeat", j->id);
	while (!atomic_load(&j->done)) {
		/*
		 * every period; 2 s after the job starts something new; and every
		 * 10 s while a kernel builds, for its objects compiled
		 */
		for (int i = 0; !atomic_load(&j->done) && !heartbeat_due(j, i, period); i++) {
			struct timespec d = {0, 100 * 1000000};
			nanosleep(&d, NULL);
		}
		if (atomic_load(&j->done))
			break;
		atomic_store(&j->activity_new, 0);
		json_t *reply = NULL;
		char *body = activity_body(j);
		long st = api_post(&a, path, body, NULL, &reply, err, sizeof(err));
		free(body);
		json_decref(reply);
		if (st == 403 || st == 404 || st == 409) {
			/* a result posted meanwhile may have ended the job: its
			 * reply is read under post_lock, so wait for it first */
			pthread_mutex_lock(&j->post_lock);
			bool finished = atomic_load(&j->done);
			pthread_mutex_unlock(&j->post_lock);
			if (finished)
				break;
			agent_log("warn", j->id, "lease lost: %s", err);
			atomic_store(&j->lost, 1);
			spawn_request_stop();
			break;
		}
		if (st < 0 || st >= 500)
			agent_log("warn", j->id, "heartbeat failed: %s", err);
	}
	api_release(&a);
	return NULL;
}

/*
 * What a job and its results need free, at the least, before a claim; after
 * a failed step, less than this means the step may have filled the disk
 * (what it had written is gone again by then: git removes a half-made tree).
 */
#define SPACE_PROBE (64 * 1024 * 1024)

/*
 * A job is handed back for a full disk until its claim number (every
 * agent's claims of it count, sql/017) reaches this; then it fails, since a
 * patch whose build fills the disk would otherwise come back for ever.
 */
#define MAX_SPACE_CLAIMS 3

/*
 * Whether the spool and the jobs folder take a file now; when not, why in
 * why (the folder and errno's text): a full disk or a read-only spool is
 * the machine's trouble, not the patch's.
 */
static bool space_missing(const struct agent *ag, char *why, size_t len)
{
	const char *dirs[2] = {ag->spool_dir, ag->jobs_dir};

	for (int i = 0; i < 2; i++)
		if (fs_probe_space(dirs[i], SPACE_PROBE)) {
			snprintf(why, len, "%s cannot be written: %s", dirs[i], strerror(errno));
			return true;
		}
	return false;
}

/*
 * A step failed: when the cause may be a disk that is full or a folder that
 * cannot be written, hand the job back (another agent, or this one once
 * there is room, runs it) instead of failing a patch for it, up to its
 * MAX_SPACE_CLAIMS-th claim; else post the failure.
 */
static void job_failed(struct job *j)
{
	char why[1200];

	/* not the step's own words: a build filling its sandbox's /tmp says
	 * "No space left on device" too, and that is the patch's doing */
	if (space_missing(j->ag, why, sizeof(why))) {
		if (j->claim < MAX_SPACE_CLAIMS) {
			agent_log("error", j->id,
			          "%s: %s (the step failed with: %s); handing the job back", INFRA,
			          why, j->fail_reason);
			post_release(j);
			return;
		}
		/* a patch that fills the disk itself would be handed back for ever */
		char step[sizeof(j->fail_reason)];

		snprintf(step, sizeof(step), "%s", j->fail_reason);
		snprintf(j->fail_reason, sizeof(j->fail_reason),
		         "the disk was full at claim %d of this job (%.1100s); the step failed "
		         "with: %.6000s",
		         j->claim, why, step);
	}
	agent_log("warn", j->id, "job failed: %s", j->fail_reason);
	post_fail(j);
}

static int run_job(struct agent *ag, json_t *desc)
{
	struct job *j = calloc(1, sizeof(*j));
	json_int_t id = 0, lease = 60, more = 0, next = 0, claim = 0;
	int rc = 1;

	if (!j)
		return -1;
	j->ag = ag;
	pthread_mutex_init(&j->post_lock, NULL);
	pthread_mutex_init(&j->activity_lock, NULL);
	if (json_unpack(desc, "{s:I, s:s, s?I, s?I, s?I, s?I}", "id", &id, "suite", &j->suite,
	                "lease_seconds", &lease, "more_rounds", &more, "next_round", &next, "claim",
	                &claim)) {
		agent_log("error", 0, "the server sent a job without id or suite");
		free(j);
		return -1;
	}
	j->id = id;
	j->lease_s = (int)lease;
	j->more_rounds = (int)more;
	j->next_round = (int)next;
	j->claim = (int)claim;
	snprintf(j->dir, sizeof(j->dir), "%s/%lld", ag->jobs_dir, j->id);
	if (fs_mkdirs(j->dir)) {
		snprintf(j->fail_reason, sizeof(j->fail_reason), "cannot create %s: %s", j->dir,
		         strerror(errno));
		job_failed(j);
		free(j);
		return 1;
	}
	if (!atomic_load(&ag->stop))
		spawn_clear_stop(); /* a lease lost in the last job does not stop this one */
	agent_log("info", j->id, "claimed: suite %s, %d rounds to go from round %d", j->suite,
	          j->more_rounds, j->next_round);
	if (job_users_suite(j)) {
		/* before it starts: how long it may take, base and patched a round */
		int h = j->more_rounds * 2 * job_run_timeout(j);
		agent_log("info", j->id,
		          "the users suite: a boot per band of AIM7 users a side, its own "
		          "workloads, each run up to %d min (--users-run-timeout); %d round%s of "
		          "base and patched to go, at most %d h %02d min",
		          (job_run_timeout(j) + 59) / 60, j->more_rounds,
		          j->more_rounds == 1 ? "" : "s", h / 3600, h % 3600 / 60);
	}
	if (!sandbox_available())
		agent_log("warn", j->id,
		          "this job's code runs WITHOUT a sandbox (--allow-unsandboxed)");
	if (pthread_create(&j->hb, NULL, heartbeat_thread, j) == 0)
		j->hb_started = true;

	if (job_prepare(j, desc)) {
		if (!atomic_load(&j->lost))
			job_failed(j);
		goto out;
	}
	/*
	 * The machine's own noise, when due, before the job's rounds (noise.c);
	 * a lost lease or a stop there is seen by the loop and the end below.
	 */
	noise_measure(j);
	/* a kernel job is judged for correctness first: a new lease runs it again */
	if (j->nkdebug == 2 && j->next_round == 0 && j->more_rounds > 0 && !atomic_load(&j->lost) &&
	    !atomic_load(&ag->stop) && run_kernel_debug(j)) {
		if (!atomic_load(&j->lost) && !atomic_load(&ag->stop))
			job_failed(j);
		goto out;
	}
	while (j->more_rounds > 0 && !atomic_load(&j->lost) && !atomic_load(&ag->stop)) {
		int round = j->next_round;
		if (run_round(j, round)) {
			if (!atomic_load(&j->lost) && !atomic_load(&ag->stop))
				job_failed(j);
			goto out;
		}
		if (j->next_round == round && j->more_rounds > 0) {
			/* the server still misses this round: it refused nothing, so this
			 * is a protocol mismatch; stop rather than loop */
			snprintf(j->fail_reason, sizeof(j->fail_reason),
			         "server did not count round %d", round);
			post_fail(j);
			goto out;
		}
	}
	if (!atomic_load(&j->lost)) {
		if (atomic_load(&ag->stop) && j->more_rounds > 0)
			post_release(j);
		else
			agent_log("info", j->id, "job done");
	}
out:
	if (atomic_load(&j->lost))
		agent_log("warn", j->id, "job lost: %s",
		          j->fail_reason[0] ? j->fail_reason : "the server took the lease back");
	atomic_store(&j->done, 1);
	if (j->hb_started)
		pthread_join(j->hb, NULL);
	remove_worktrees(j);
	pthread_mutex_destroy(&j->post_lock);
	pthread_mutex_destroy(&j->activity_lock);
	free(j);
	return rc;
}

/* A new claim key in ag->claim_key unless one is still in flight; 0 or -1. */
static int claim_key_draw(struct agent *ag)
{
	unsigned char r[16];

	if (ag->claim_key[0])
		return 0;
	if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
		return -1;
	memcpy(ag->claim_key, "claim-", 6);
	for (size_t i = 0; i < sizeof(r); i++)
		snprintf(ag->claim_key + 6 + 2 * i, 3, "%02x", r[i]);
	return 0;
}

int agent_step(struct agent *ag)
{
	char err[1024];
	json_t *reply = NULL;

	if (spool_flush(ag->spool_dir, &ag->api) > 0)
		return -1; /* the server is not taking results: do not start more work */
	if (space_missing(ag, err, sizeof(err))) {
		agent_log("error", 0, "not claiming: %s; claiming again once there is room", err);
		return -1;
	}
	if (claim_key_draw(ag)) {
		agent_log("warn", 0, "cannot draw a claim key: %s", strerror(errno));
		return -1;
	}
	long st =
	    api_post(&ag->api, "/api/v1/jobs/claim", NULL, ag->claim_key, &reply, err, sizeof(err));
	if (st < 0 || st >= 500) {
		agent_log("warn", 0, "cannot claim (sent again with key %s): %s", ag->claim_key,
		          err);
		json_decref(reply);
		return -1;
	}
	ag->claim_key[0] = 0; /* answered: the next claim is a new one */
	if (st != 200) {
		agent_log("error", 0, "claim refused: %s", err);
		json_decref(reply);
		return -2;
	}
	json_t *job = json_object_get(reply, "job");
	if (!json_is_object(job)) {
		json_decref(reply);
		return 0;
	}
	int rc = run_job(ag, job);
	json_decref(reply);
	return rc;
}
