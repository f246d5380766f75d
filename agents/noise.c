/*
 * noise.c - the machine's own A/A spread per suite point, measured with the
 * job's base lockbench on both sides and posted to the server, which plans
 * the rounds of this machine class's jobs from it (job.h, server/plan.h).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "agent.h"
#include "compare.h"
#include "fsutil.h"
#include "job.h"
#include "log.h"
#include "result.h"
#include "roundplan.h"

/* where the time of the suite's last measurement is kept (its mtime) */
static void noise_stamp_path(const struct job *j, char *out, size_t len)
{
	snprintf(out, len, "%s/noise-%s.stamp", j->ag->cfg.workdir, j->suite);
}

/* True when the suite's noise was never measured here or longer ago than the interval. */
static bool noise_due(const struct job *j)
{
	char path[1200];
	struct stat st;

	if (j->ag->cfg.noise_interval_s <= 0 || j->kernel || j->nv < 1)
		return false;
	noise_stamp_path(j, path, sizeof(path));
	if (stat(path, &st) != 0)
		return true;
	return difftime(time(NULL), st.st_mtime) >= j->ag->cfg.noise_interval_s;
}

static void noise_stamp(const struct job *j)
{
	char path[1200];
	FILE *f;

	noise_stamp_path(j, path, sizeof(path));
	f = fopen(path, "w");
	if (f) {
		fprintf(f, "%lld\n", (long long)time(NULL));
		fclose(f);
	}
}

/*
 * The posted profile of a comparison of k paired A/A rounds: its points
 * (plan_profile_points) with the suite, k and the seconds a round took.
 */
static json_t *noise_profile(const struct job *j, const struct comparison *cmp, int k,
                             double round_s)
{
	return json_pack("{s:s, s:i, s:f, s:o}", "suite", j->suite, "rounds", k, "round_seconds",
	                 round_s, "points", plan_profile_points(cmp));
}

/* Load the documents and compare the two sides; 0 or -1 with a log line. */
static int noise_compare(struct job *j, char **docs[2], int k, struct comparison *cmp)
{
	struct lb_result *side[2] = {calloc((size_t)k, sizeof(struct lb_result)),
	                             calloc((size_t)k, sizeof(struct lb_result))};
	char err[512] = "out of memory";
	int loaded[2] = {0, 0}, rc = -1;

	for (int s = 0; s < 2 && side[0] && side[1]; s++)
		for (int i = 0; i < k; i++) {
			result_init(&side[s][i]);
			loaded[s]++;
			if (result_load_buffer(docs[s][i], strlen(docs[s][i]), &side[s][i], err,
			                       sizeof(err)) != 0)
				goto out;
		}
	/* one binary both sides: the tests' own A/A, not the one-image rule (compare.h) */
	struct compare_opts opts = COMPARE_OPTS_DEFAULT;
	opts.ignore_image = true;
	if (side[0] && side[1] &&
	    compare_results(side[0], (size_t)k, side[1], (size_t)k, &opts, cmp, err, sizeof(err)) ==
	        0)
		rc = 0;
out:
	if (rc)
		agent_log("warn", j->id, "noise: cannot compare the A/A rounds: %s", err);
	for (int s = 0; s < 2; s++) {
		for (int i = 0; i < loaded[s]; i++)
			result_release(&side[s][i]);
		free(side[s]);
	}
	return rc;
}

int noise_measure(struct job *j)
{
	int k = j->ag->cfg.noise_rounds, ran = 0, rc = 0;
	char *adocs[64] = {0}, *bdocs[64] = {0}, **docs[2] = {adocs, bdocs};
	char saved_dir[sizeof(j->dir)], err[512];
	struct variant sides[2];
	struct comparison cmp;
	struct timespec t0, t1;
	json_t *profile = NULL, *reply = NULL;
	char *body = NULL;
	long st;

	if (!noise_due(j))
		return 0;
	if (k > 64)
		k = 64;
	comparison_init(&cmp);
	/* the job's base lockbench on both sides: an A/A of this machine, in its own folder */
	snprintf(saved_dir, sizeof(saved_dir), "%s", j->dir);
	snprintf(j->dir, sizeof(j->dir), "%.1000s/noise", saved_dir);
	if (fs_mkdirs(j->dir)) {
		agent_log("warn", j->id, "noise: cannot create %s: %s", j->dir, strerror(errno));
		goto out;
	}
	sides[0] = j->v[0];
	sides[1] = j->v[0];
	snprintf(sides[0].name, sizeof(sides[0].name), "base");
	snprintf(sides[1].name, sizeof(sides[1].name), "patched");
	agent_log("info", j->id, "noise: measuring suite %s, %d A/A rounds of %s's lockbench",
	          j->suite, k, j->v[0].name);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (ran = 0; ran < k; ran++) {
		/* paired and in ABBA order, as the job's rounds run */
		char *two[2];
		int prc = run_pair(j, sides, ran, two);

		docs[0][ran] = two[0];
		docs[1][ran] = two[1];
		if (prc) {
			free(docs[0][ran]);
			free(docs[1][ran]);
			docs[0][ran] = docs[1][ran] = NULL;
			if (atomic_load(&j->lost) || atomic_load(&j->ag->stop))
				rc = -1;
			else
				agent_log("warn", j->id, "noise: round %d failed: %s", ran,
				          j->fail_reason);
			j->fail_reason[0] = 0;
			goto out;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (noise_compare(j, docs, k, &cmp))
		goto out;
	profile = noise_profile(
	    j, &cmp, k,
	    ((double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9) / k);
	body = profile ? json_dumps(profile, JSON_COMPACT) : NULL;
	if (!body)
		goto out;
	st = api_post(&j->ag->api, "/api/v1/noise", body, NULL, &reply, err, sizeof(err));
	if (st == 201) {
		agent_log("info", j->id,
		          "noise: posted %zu points of suite %s (%d rounds, %.1f s a round)",
		          json_array_size(json_object_get(profile, "points")), j->suite, k,
		          json_real_value(json_object_get(profile, "round_seconds")));
		noise_stamp(j);
	} else {
		agent_log("warn", j->id, "noise: the server did not take the profile: %s", err);
	}
out:
	snprintf(j->dir, sizeof(j->dir), "%s", saved_dir);
	for (int i = 0; i < 64; i++) {
		free(adocs[i]);
		free(bdocs[i]);
	}
	comparison_release(&cmp);
	json_decref(profile);
	json_decref(reply);
	free(body);
	return rc;
}
