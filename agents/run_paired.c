/*
 * run_paired.c - base and patched run paired (run_internal.h): the pairing
 * a job uses (a duet, lockstep or ABBA), both sides of one round run
 * together, and their document merged into each side's.
 */
#include <errno.h>
#include <pthread.h>
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
#include "result.h"
#include "run_internal.h"
#include "sandbox.h"
#include "spawn.h"

/*
 * The workloads a duet (or ABBA) runs: single-thread points, which fit half
 * of 2 CPUs.  Lockstep runs hot too: its sides take turns of 1 ms on every
 * CPU (lockbench's --cpus pins only the single-thread points).
 */
#define DUET_WORKLOADS     "uncontended"
#define LOCKSTEP_WORKLOADS "uncontended,hot"

/*
 * Add the runs of the duet (lockstep, ABBA) document at path to doc (both
 * JSON text); their metrics are marked with the instrument that measured
 * them (a duet, lockstep; ABBA samples are timed one side at a time, as
 * the round's are): the agent's word, as "controls" is, whatever the
 * submitted binary wrote.  Returns doc with them (a new string), or NULL
 * when the document cannot be read.
 */
char *merge_duet(const char *doc, const char *path, const char *instrument)
{
	json_t *d = json_loads(doc, 0, NULL), *du = json_load_file(path, 0, NULL);
	json_t *runs = json_object_get(d, "runs"), *druns = json_object_get(du, "runs");
	char *out = NULL;
	size_t i;
	json_t *run;

	if (!json_is_array(runs) || !json_is_array(druns))
		goto out;
	json_array_foreach(druns, i, run)
	{
		json_t *inst = json_object(), *metrics = json_object_get(run, "metrics");
		const char *name;
		json_t *v;
		json_object_foreach(metrics, name, v)
		{
			json_object_set_new(inst, name, json_string(instrument));
		}
		json_object_set_new(run, "instrument", inst);
		json_array_append(runs, run);
	}
	out = json_dumps(d, JSON_COMPACT);
out:
	json_decref(d);
	json_decref(du);
	return out;
}

enum pairing job_pairing(const struct job *j)
{
	const struct agent_cfg *c = &j->ag->cfg;

	if (j->duet_off || j->kernel || j->nv != 2)
		return PAIR_NONE;
	if (c->duet && sysconf(_SC_NPROCESSORS_ONLN) >= 2)
		return PAIR_DUET;
	return c->lockstep ? PAIR_LOCKSTEP : c->abba ? PAIR_ABBA : PAIR_NONE;
}

/* The instrument a pairing's metrics are marked with: the agent's word. */
const char *pairing_instrument(enum pairing m)
{
	return m == PAIR_DUET       ? LB_INSTRUMENT_DUET
	       : m == PAIR_LOCKSTEP ? LB_INSTRUMENT_LOCKSTEP
	                            : LB_INSTRUMENT_TIMED;
}

/* The workloads the pairing runs paired (the rest run one side at a time). */
const char *paired_workloads(enum pairing m)
{
	return m == PAIR_LOCKSTEP ? LOCKSTEP_WORKLOADS : DUET_WORKLOADS;
}

/* One side of a duet: its command, what came of it. */
struct duet_side {
	struct job *j;
	const struct variant *v;
	const char *argv[32];
	char cpus[32], side[8], out[2100], log[2100], outdir[2048], bindir[1400], rs[24], at[32];
	char turndir[2100];
	struct sandbox_policy sb;
	struct spawn_result r;
	int src;
	char err[512];
};

static void *duet_side_run(void *arg)
{
	struct duet_side *s = arg;
	struct spawn_cmd c = {.argv = s->argv,
	                      .out_path = s->log,
	                      .wall_s = job_run_timeout(s->j),
	                      .lim = job_limits(s->j, job_run_timeout(s->j) * 4),
	                      .sandbox = &s->sb};
	s->src = spawn_run(&c, &s->r, s->err, sizeof(s->err));
	return NULL;
}

/*
 * argv of one side: the duet's workloads only, starting at the shared
 * instant: a duet pinned to cpus; lockstep pinned to cpus too, as side
 * `side` taking turns through turn (lockbench --lockstep); ABBA as side
 * `side` (each sample in its own slot, lockbench --abba-side).
 */
static int duet_side_init(struct job *j, struct duet_side *s, const struct variant *v, int round,
                          enum pairing mode, const char *cpus, int side, long long at_ns,
                          const char *turn)
{
	int k = 0;
	memset(s, 0, sizeof(*s));
	s->j = j;
	s->v = v;
	snprintf(s->outdir, sizeof(s->outdir), "%s/duet-%s-r%d", j->dir, v->name, round);
	fs_remove_tree(s->outdir);
	if (fs_mkdirs(s->outdir))
		return -1;
	snprintf(s->out, sizeof(s->out), "%s/result.json", s->outdir);
	snprintf(s->log, sizeof(s->log), "%s/duet-%s-r%d.log", j->dir, v->name, round);
	snprintf(s->bindir, sizeof(s->bindir), "%s", v->bin);
	*strrchr(s->bindir, '/') = 0;
	snprintf(s->cpus, sizeof(s->cpus), "%s", cpus);
	snprintf(s->side, sizeof(s->side), "%d", side);
	snprintf(s->rs, sizeof(s->rs), "%d", round);
	snprintf(s->at, sizeof(s->at), "%lld", at_ns);
	s->argv[k++] = v->bin;
	s->argv[k++] = "run";
	s->argv[k++] = "--suite";
	s->argv[k++] = j->suite;
	if (j->locks[0]) {
		s->argv[k++] = "--locks";
		s->argv[k++] = j->locks;
	}
	s->argv[k++] = "--workloads";
	s->argv[k++] = paired_workloads(mode);
	if (mode != PAIR_ABBA) {
		s->argv[k++] = "--cpus";
		s->argv[k++] = s->cpus;
	}
	if (mode == PAIR_ABBA) {
		s->argv[k++] = "--abba-side";
		s->argv[k++] = s->side;
	} else if (mode == PAIR_LOCKSTEP) {
		s->argv[k++] = "--lockstep";
		s->argv[k++] = turn;
		s->argv[k++] = "--lockstep-side";
		s->argv[k++] = s->side;
	}
	s->argv[k++] = "--start-at";
	s->argv[k++] = s->at;
	/* a repeated sample would put the two sides out of step: record only */
	s->argv[k++] = "--disturb-limit";
	s->argv[k++] = "0";
	s->argv[k++] = "--variant";
	s->argv[k++] = v->name;
	s->argv[k++] = "--round";
	s->argv[k++] = s->rs;
	s->argv[k++] = "--json";
	s->argv[k++] = s->out;
	s->argv[k] = NULL;
	job_policy(j, &s->sb);
	sandbox_add(s->sb.writable, s->outdir);
	sandbox_add(s->sb.readable, s->bindir);
	if (mode == PAIR_LOCKSTEP) {
		/* the one file both sides share: the turn */
		snprintf(s->turndir, sizeof(s->turndir), "%s", turn);
		*strrchr(s->turndir, '/') = 0;
		sandbox_add(s->sb.writable, s->turndir);
	}
	s->sb.chdir = s->outdir;
	return 0;
}

/*
 * Run the duet of a round: both variants' single-thread points at once, each
 * on its own half of the CPUs (which half alternates by round), started at
 * one CLOCK_REALTIME instant.  Lockstep instead: both pinned to the last
 * CPU, taking turns of 0.5 ms through a turn file in the job's folder.
 * ABBA: both start at that instant and take turns per sample, A B B A.  In
 * lockstep and ABBA, which variant is side 0 alternates by round.  Fills
 * paths[i] with variant i's document.  Returns 0, or -1 when the duet did
 * not give both documents (the round then runs one side at a time, and so
 * do the job's later rounds).
 */
int run_duet(struct job *j, const struct variant v[2], int round, char paths[2][2100])
{
	enum pairing mode = job_pairing(j);
	job_activity(j, NULL, "round %d: running %s and %s %s", round, v[0].name, v[1].name,
	             mode == PAIR_LOCKSTEP ? "in lockstep" : "side by side");
	struct duet_side s[2];
	char half[2][32], last[32], turn[2100], dir[2048];
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	struct timespec now;
	pthread_t t;
	int rc = -1;

	snprintf(half[0], sizeof(half[0]), cpus / 2 > 1 ? "0-%ld" : "0", cpus / 2 - 1);
	snprintf(half[1], sizeof(half[1]), cpus - cpus / 2 > 1 ? "%ld-%ld" : "%ld", cpus / 2,
	         cpus - 1);
	snprintf(last, sizeof(last), "%ld", cpus > 1 ? cpus - 1 : 0);
	/* a fresh turn file each round: side 0 takes the first turn */
	snprintf(dir, sizeof(dir), "%s/lockstep-r%d", j->dir, round);
	snprintf(turn, sizeof(turn), "%s/turn", dir);
	if (mode == PAIR_LOCKSTEP) {
		fs_remove_tree(dir);
		if (fs_mkdirs(dir)) {
			snprintf(j->fail_reason, sizeof(j->fail_reason), "%s: cannot create %s: %s",
			         INFRA, dir, strerror(errno));
			return -1;
		}
	}
	clock_gettime(CLOCK_REALTIME, &now);
	/* far enough ahead that both sandboxes are up before it */
	long long at = (long long)now.tv_sec * 1000000000ll + now.tv_nsec + 500000000ll;
	for (int i = 0; i < 2; i++)
		if (duet_side_init(j, &s[i], &v[i], round, mode,
		                   mode == PAIR_DUET ? half[(i + round) % 2] : last,
		                   (i + round) % 2, at, turn)) {
			snprintf(j->fail_reason, sizeof(j->fail_reason), "%s: cannot create %s: %s",
			         INFRA, s[i].outdir, strerror(errno));
			return -1;
		}
	if (mode == PAIR_ABBA)
		agent_log("info", j->id,
		          "round %d: ABBA of %s, a sample a side in turn: %s side %s, %s side %s",
		          round, DUET_WORKLOADS, v[0].name, s[0].side, v[1].name, s[1].side);
	else if (mode == PAIR_LOCKSTEP)
		agent_log("info", j->id,
		          "round %d: lockstep of %s on CPU %s (hot on every CPU), turns of 0.5 ms "
		          "(hot 1 ms, longer past 2 threads a CPU): %s side %s, %s side %s",
		          round, LOCKSTEP_WORKLOADS, last, v[0].name, s[0].side, v[1].name,
		          s[1].side);
	else
		agent_log("info", j->id, "round %d: duet of %s: %s on CPU %s, %s on CPU %s", round,
		          DUET_WORKLOADS, v[0].name, s[0].cpus, v[1].name, s[1].cpus);
	if (pthread_create(&t, NULL, duet_side_run, &s[1])) {
		agent_log("warn", j->id, "round %d: no thread for the duet", round);
		return -1;
	}
	duet_side_run(&s[0]);
	pthread_join(t, NULL);
	rc = 0;
	for (int i = 0; i < 2; i++) {
		/* 0: ran; 3: a lockup inside, still a result */
		bool ok =
		    !s[i].src && !s[i].r.timed_out && (s[i].r.status == 0 || s[i].r.status == 3);
		struct lb_result doc;
		char err[256];
		result_init(&doc);
		if (ok && result_load_file(s[i].out, &doc, err, sizeof(err)))
			ok = false;
		result_release(&doc);
		if (!ok) {
			agent_log(
			    "warn", j->id,
			    "round %d: the duet's (lockstep's, ABBA's) %s side gave no result (%s, "
			    "exit %d; see %s): "
			    "this job's rounds run one side at a time",
			    round, v[i].name, s[i].src ? s[i].err : "ran", s[i].r.status, s[i].log);
			rc = -1;
		}
		snprintf(paths[i], sizeof(paths[i]), "%s", s[i].out);
		spawn_result_release(&s[i].r);
	}
	if (rc)
		j->duet_off = true;
	return rc;
}
