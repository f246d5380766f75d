/*
 * verdict_sim.c - the verdict policy simulated: synthetic rounds with known
 * effects and this machine kind's noise shapes (docs/measured and the noise
 * notes: uncontended in lockstep as the agent pairs it and its bimodal floor
 * when the sides run apart, hot's regimes, steal spikes, long-hold's
 * worst-wait tails) go through the code the server runs at each
 * look - compare_results with the server's options, plan_mark_futile,
 * comparison_found_change (then as many rounds again to confirm),
 * comparison_wants_rounds, plan_next_look and comparison_overall - and the
 * verdicts are counted.
 *
 * Each job holds one deciding row (the row under test) beside a code-path
 * note (instructions_per_pair, exact), a descriptive row and a control row,
 * all unchanged unless the case says otherwise.  A Tested-by is what the
 * reply sends it on: the job's verdict no-change or improvement.
 *
 *   verdict-sim [-n JOBS] [-s SEED] [-c CASES]   CASES: names, comma-separated, or all
 *
 * Each rate is printed with its N and its Clopper-Pearson 95% interval.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "compare.h"
#include "result.h"
#include "roundplan.h"

/* The server's defaults (server/main.c): --min-rounds 5, --max-rounds 20. */
#define MIN_ROUNDS 5
#define MAX_ROUNDS 20
#define MAX_DOCS   (4 * MAX_ROUNDS)

/* A noise shape: one sample of a side, relative to the row's true figure. */
enum shape {
	/* uncontended, sides one after the other: 40% on a floor (2% band), the rest 1.06-1.48x */
	SHAPE_FLOOR,
	/*
	 * uncontended as the agent runs it by default: both sides in turns of
	 * 0.5 ms on one CPU (lockstep), so a disturbance lands on both.  A
	 * sample is shared level x its side's own noise, on the instrument's
	 * grid (the median over batches of 256 pairs of a clock that ticks in
	 * 10 ns: 0.039 ns, 0.32% of kmutex's 12.3 ns).  Measured on 100 A/A
	 * rounds of kmutex and pthread (quick suite, 3 samples of 80 ms): the
	 * shared level above the floor q50 3.5%, q90 10.7%, max 18%
	 * (half-normal, sd 5.5%); one sample's two sides differ by 0 grid
	 * steps in 70%, 1 in 28%, 2-3 in 1.5% (own noise 0.25 steps, and in
	 * 1% of samples 1-3 steps more); the per-round paired sd of the
	 * fastest sample 0.15% (docs/measured/2026-12-06-lockstep-noise.md).
	 */
	SHAPE_LOCKSTEP,
	SHAPE_REGIMES, /* hot at 2 threads: a slow regime (0.55x) in 15% of runs, 8% within */
	SHAPE_WIDE,    /* hot at 8 threads: lognormal, 16% a round paired */
	/*
	 * long-hold's worst waits (2 threads, pinned, 5 x 60 ms, load 12-14):
	 * lognormal 15% with one sample in ten at 45% (wait_worst_us), 25% with
	 * 15% at 70% (wait_p999_worst_us); their per-round paired sd is then
	 * 29% and 51%, against 26% and 48% measured over 39 A/A rounds
	 * (docs/measured/2026-12-05-worst-wait.md).  The machine's scheduling
	 * is their noise: no steal spikes on top.
	 */
	SHAPE_TAIL,
	SHAPE_TAIL999,
};

struct rowdef {
	const char *name; /* the case's short name */
	const char *workload, *metric, *unit;
	long long threads;
	bool higher_better;
	double value; /* the true base figure */
	enum shape shape;
	int samples;   /* a round's samples a side */
	double margin; /* compare_row_margin's, filled in */
	double sd;     /* per-round paired log ratio, A/A, estimated */
	double mde;    /* plan_mde at MAX_ROUNDS: the policy's, as plans promise */
};

/*
 * samples: the quick suite's repeat (lockbench/src/suite.c); tests/191
 * checks that the two agree.
 */
static struct rowdef rows[] = {
    {"unc", "uncontended", "ns_per_pair", "ns", 1, false, 12.3, SHAPE_LOCKSTEP, 3, 0, 0, 0},
    {"useq", "uncontended", "ns_per_pair", "ns", 1, false, 5.5, SHAPE_FLOOR, 3, 0, 0, 0},
    {"hot2", "hot", "ops_per_sec", "ops/s", 2, true, 20e6, SHAPE_REGIMES, 3, 0, 0, 0},
    {"hot8", "hot", "ops_per_sec", "ops/s", 8, true, 5e6, SHAPE_WIDE, 1, 0, 0, 0},
    {"worst2", "long-hold", "wait_worst_us", "us", 2, false, 46e3, SHAPE_TAIL, 1, 0, 0, 0},
    {"p999w2", "long-hold", "wait_p999_worst_us", "us", 2, false, 62e3, SHAPE_TAIL999, 1, 0, 0, 0},
};
#define NROWS (sizeof(rows) / sizeof(rows[0]))

/* A multiplicative disturbance of one sample, > 1 meaning slower. */
static double slower(gsl_rng *g, enum shape sh)
{
	double f;

	switch (sh) {
	case SHAPE_FLOOR:
		f = gsl_rng_uniform(g) < 0.4 ? 1 + 0.02 * gsl_rng_uniform(g)
		                             : 1.06 + 0.42 * gsl_rng_uniform(g);
		break;
	case SHAPE_REGIMES:
		f = (gsl_rng_uniform(g) < 0.15 ? 1 / 0.55 : 1) * exp(gsl_ran_gaussian(g, 0.08));
		break;
	case SHAPE_WIDE:
		f = exp(gsl_ran_gaussian(g, 0.16 / sqrt(2)));
		break;
	case SHAPE_TAIL:
		f = exp(gsl_ran_gaussian(g, gsl_rng_uniform(g) < 0.1 ? 0.45 : 0.15));
		break;
	default:
		f = exp(gsl_ran_gaussian(g, gsl_rng_uniform(g) < 0.15 ? 0.7 : 0.25));
		break;
	}
	/* hypervisor steal: 3% of timed samples 1.3-2x slower (a tail is made of such) */
	if (sh != SHAPE_TAIL && sh != SHAPE_TAIL999 && gsl_rng_uniform(g) < 0.03)
		f *= 1.3 + 0.7 * gsl_rng_uniform(g);
	return f;
}

/* One sample of row d with the side's true factor (1 unchanged). */
static double sample(gsl_rng *g, const struct rowdef *d, double factor)
{
	double f = slower(g, d->shape);

	return d->value * factor * (d->higher_better ? 1 / f : f);
}

/* The lockstep instrument's grid and a side's own noise on it, in steps. */
#define LOCKSTEP_GRID 0.0032
static double lockstep_own(gsl_rng *g)
{
	double e = gsl_ran_gaussian(g, 0.25);

	if (gsl_rng_uniform(g) < 0.01)
		e += (gsl_rng_uniform(g) < 0.5 ? -1 : 1) * (1 + 2 * gsl_rng_uniform(g));
	return e;
}

/*
 * One round of row d: n samples a side into b and p, the patched side with
 * its true factor.  Lockstep rows share each sample's level between the
 * sides; every other shape draws the sides independently.
 */
static void round_samples(gsl_rng *g, const struct rowdef *d, double factor, double *b, double *p)
{
	for (int k = 0; k < d->samples; k++) {
		if (d->shape == SHAPE_LOCKSTEP) {
			double step = d->value * LOCKSTEP_GRID;
			double level = d->value * exp(fabs(gsl_ran_gaussian(g, 0.055)));

			b[k] = step * round(level / step + lockstep_own(g));
			p[k] = step * round(level * factor / step + lockstep_own(g));
		} else {
			b[k] = sample(g, d, 1);
			p[k] = sample(g, d, factor);
		}
	}
}

struct job_case {
	char name[64];
	const struct rowdef *row;
	double factor;      /* the patched side's true factor on the row */
	double note_factor; /* on instructions_per_pair (exact, 30 a pair) */
	const char *what;
};

static void add_metric(struct lb_result *doc, const char *workload, const char *lock,
                       long long threads, const char *metric, const char *unit, bool hb,
                       const double *x, int n)
{
	struct lb_run *run = result_add_run(doc, workload, lock);
	double sum = 0;
	struct lb_metric *m;

	run_set_param_num(run, "threads", threads);
	for (int i = 0; i < n; i++)
		sum += x[i];
	m = run_add_metric(run, metric, unit, hb, sum / n);
	for (int i = 0; i < n; i++)
		metric_add_sample(m, x[i]);
}

/*
 * Round r of one side: the row under test (its samples xs, drawn for both
 * sides by round_samples), a note, a descriptive row, a control.
 */
static void make_doc(gsl_rng *g, struct lb_result *doc, const struct job_case *jc, bool patched,
                     int r, const double *xs)
{
	const struct rowdef *d = jc->row;
	double x[8], ins = 30 * (patched ? jc->note_factor : 1);
	const struct rowdef *ctl = &rows[1];

	result_init(doc);
	doc->suite = strdup("quick");
	doc->variant = strdup(patched ? "patched" : "base");
	doc->round = r;
	doc->started = strdup("2026-12-04T00:00:00Z");
	doc->machine.hostname = strdup("sim");
	doc->machine.cpus = 2;
	doc->machine.model = strdup("simulated");
	doc->machine.kernel = strdup("6.1");
	add_metric(doc, d->workload, "kmutex", d->threads, d->metric, d->unit, d->higher_better, xs,
	           d->samples);
	add_metric(doc, "uncontended", "kmutex", 1, "instructions_per_pair", "instructions", false,
	           &ins, 1);
	for (int i = 0; i < 3; i++)
		x[i] = 900 * exp(gsl_ran_gaussian(g, 0.5)); /* wait_p99_us: wild, descriptive */
	add_metric(doc, "long-hold", "kmutex", 2, "wait_p99_us", "us", false, x, 3);
	for (int i = 0; i < ctl->samples; i++)
		x[i] = sample(g, ctl, 1) * 2.3;
	add_metric(doc, "uncontended", "pthread", 1, "ns_per_pair", "ns", false, x, ctl->samples);
	result_add_control(doc, "pthread");
}

struct outcome {
	enum verdict verdict;
	int rounds;
};

/*
 * One job as the server runs it (server/results.c, results_evaluate): a look
 * after MIN_ROUNDS; a change found buys as many rounds again and the
 * confirming comparison is the answer; otherwise a comparison that wants
 * rounds gets plan_next_look's, up to MAX_ROUNDS.
 */
static struct outcome run_job(gsl_rng *g, const struct job_case *jc)
{
	static struct lb_result base[MAX_DOCS], patched[MAX_DOCS];
	struct compare_opts o = COMPARE_OPTS_DEFAULT;
	struct comparison cmp;
	struct outcome out;
	int have = 0, wanted = MIN_ROUNDS, confirm_from = 0;
	char err[256];

	o.looks = (MAX_ROUNDS + MIN_ROUNDS - 1) / MIN_ROUNDS + 1; /* verdicts_looks */
	comparison_init(&cmp);
	for (;;) {
		bool confirm = false, more = false;

		for (; have < wanted; have++) {
			double xb[8], xp[8];

			/* ABBA: the order alternates; the figures do not depend on it here */
			round_samples(g, jc->row, jc->factor, xb, xp);
			make_doc(g, &base[have], jc, false, have, xb);
			make_doc(g, &patched[have], jc, true, have, xp);
		}
		o.confirm_from = confirm_from;
		if (compare_results(base, (size_t)have, patched, (size_t)have, &o, &cmp, err,
		                    sizeof(err)) != 0) {
			fprintf(stderr, "verdict-sim: %s\n", err);
			exit(2);
		}
		plan_mark_futile(&cmp, MAX_ROUNDS);
		if (confirm_from == 0) {
			confirm = comparison_found_change(&cmp);
			more = !confirm && comparison_wants_rounds(&cmp) && wanted < MAX_ROUNDS;
		}
		if (confirm) {
			confirm_from = wanted;
			wanted *= 2;
		} else if (more) {
			wanted = plan_next_look(0, wanted, MAX_ROUNDS, MIN_ROUNDS);
		} else {
			break;
		}
	}
	out.verdict = comparison_overall(&cmp);
	out.rounds = have;
	comparison_release(&cmp);
	for (int i = 0; i < have; i++) {
		result_release(&base[i]);
		result_release(&patched[i]);
	}
	return out;
}

/*
 * The p in (0, 1) where the binomial tail tail(p) crosses 0.025: tail
 * rises with p when rising, else falls.  Bisection, to 1e-12.
 */
static double cp_solve(int k, int n, bool upper)
{
	double lo = 0, hi = 1;

	for (int i = 0; i < 60; i++) {
		double mid = (lo + hi) / 2, t;

		/* upper: P(X <= k | p) falls with p; lower: P(X >= k | p) rises */
		t = upper ? gsl_cdf_binomial_P((unsigned)k, mid, (unsigned)n)
		          : gsl_cdf_binomial_Q((unsigned)k - 1, mid, (unsigned)n);
		if ((t > 0.025) == upper)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2;
}

/* Clopper-Pearson 95% interval of k in n (exact, two-sided). */
static void cp95(int k, int n, double *lo, double *hi)
{
	*lo = k == 0 ? 0 : cp_solve(k, n, false);
	*hi = k == n ? 1 : cp_solve(k, n, true);
}

static void print_rate(const char *what, int k, int n)
{
	double lo, hi;

	cp95(k, n, &lo, &hi);
	printf("    %-22s %6d / %-6d %7.3f%%  [%.3f%%, %.3f%%]\n", what, k, n, 100.0 * k / n,
	       100 * lo, 100 * hi);
}

/*
 * A round's figure of row d from its samples x as compare_results forms it:
 * the mean, for an uncontended time the smallest (lib/compare_verdict.c,
 * round_figure).
 */
static double round_figure(const struct rowdef *d, const double *x)
{
	bool floor = !strcmp(d->workload, "uncontended") && !d->higher_better;
	double sum = 0, min = INFINITY;

	for (int k = 0; k < d->samples; k++) {
		sum += x[k];
		min = fmin(min, x[k]);
	}
	return floor ? min : sum / d->samples;
}

/* The per-round paired log ratio's sd of row d under A/A, from many rounds. */
static double estimate_sd(gsl_rng *g, const struct rowdef *d)
{
	enum { N = 20000 };
	double sum = 0, sum2 = 0;

	for (int i = 0; i < N; i++) {
		double xb[8], xp[8], l;

		round_samples(g, d, 1, xb, xp);
		l = log(round_figure(d, xp) / round_figure(d, xb));
		sum += l;
		sum2 += l * l;
	}
	return sqrt((sum2 - sum * sum / N) / (N - 1));
}

static void run_case(gsl_rng *g, const struct job_case *jc, int n)
{
	int counts[VERDICT_SPLAT + 1] = {0}, tested = 0;
	long rounds = 0;

	for (int i = 0; i < n; i++) {
		struct outcome o = run_job(g, jc);

		counts[o.verdict]++;
		tested += o.verdict == VERDICT_NO_CHANGE || o.verdict == VERDICT_IMPROVEMENT;
		rounds += o.rounds;
	}
	printf("%s: %s\n", jc->name, jc->what);
	print_rate("regression", counts[VERDICT_REGRESSION], n);
	print_rate("improvement", counts[VERDICT_IMPROVEMENT], n);
	print_rate("no-change", counts[VERDICT_NO_CHANGE], n);
	print_rate("inconclusive", counts[VERDICT_INCONCLUSIVE], n);
	print_rate("Tested-by", tested, n);
	printf("    %-22s %.2f a side (min %d, max %d)\n", "rounds, mean", (double)rounds / n,
	       MIN_ROUNDS, 2 * MAX_ROUNDS);
	printf("RESULT case=%s n=%d regression=%d improvement=%d no-change=%d inconclusive=%d "
	       "tested-by=%d rounds=%.2f\n",
	       jc->name, n, counts[VERDICT_REGRESSION], counts[VERDICT_IMPROVEMENT],
	       counts[VERDICT_NO_CHANGE], counts[VERDICT_INCONCLUSIVE], tested, (double)rounds / n);
	fflush(stdout);
}

/* factor on the patched side that makes the row worse by rel (relative) */
static double worse(const struct rowdef *d, double rel)
{
	return d->higher_better ? 1 - rel : 1 + rel;
}

/* True when name is one of the comma-separated names of list. */
static bool listed(const char *list, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = list; *p; p += strcspn(p, ",") + (p[strcspn(p, ",")] == ',')) {
		if (strcspn(p, ",") == n && !strncmp(p, name, n))
			return true;
	}
	return false;
}

int main(int argc, char **argv)
{
	long n = 10000;
	unsigned long seed = 1;
	const char *only = "all";
	struct job_case cases[64];
	size_t ncases = 0;
	gsl_rng *g;

	for (int i = 1; i < argc; i++) {
		char *end;

		if (!strcmp(argv[i], "-n") && i + 1 < argc) {
			errno = 0;
			n = strtol(argv[++i], &end, 10);
			if (errno || *end || n < 1) {
				fprintf(stderr, "verdict-sim: -n: expected a count >= 1\n");
				return 2;
			}
		} else if (!strcmp(argv[i], "-s") && i + 1 < argc) {
			seed = strtoul(argv[++i], NULL, 10);
		} else if (!strcmp(argv[i], "-c") && i + 1 < argc) {
			only = argv[++i];
		} else {
			fprintf(stderr,
			        "usage: verdict-sim [-n JOBS] [-s SEED] [-c CASE,...|all]\n");
			return 2;
		}
	}
	g = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(g, seed);
	printf("verdict-sim: %ld jobs a case, seed %lu; server policy: looks every %d rounds up "
	       "to %d, confirmation on as many again, alpha 0.05, %d looks\n",
	       n, seed, MIN_ROUNDS, MAX_ROUNDS, (MAX_ROUNDS + MIN_ROUNDS - 1) / MIN_ROUNDS + 1);
	for (size_t i = 0; i < NROWS; i++) {
		struct rowdef *d = &rows[i];

		d->margin = compare_row_margin(d->metric, d->threads, NULL);
		d->sd = estimate_sd(g, d);
		/*
		 * the plan's MDE at the limit (the policy's, as every plan
		 * promises it), but never below min_effect (2%): a smaller
		 * change is no finding whatever the test says
		 */
		d->mde = fmax(plan_mde(d->sd, MAX_ROUNDS, 0.05), 0.02);
		printf("row %-6s %s.kmutex.%s threads=%lld, %d sample%s a round%s: margin %.0f%%, "
		       "per-round paired sd %.2f%%, MDE at %d rounds (at least min_effect) %.2f%% "
		       "(one test's %.2f%%), resolution %.2f%%\n",
		       d->name, d->workload, d->metric, d->threads, d->samples,
		       d->samples == 1 ? "" : "s",
		       d->shape == SHAPE_LOCKSTEP ? ", lockstep"
		       : d->shape == SHAPE_FLOOR  ? ", sides apart"
		                                  : "",
		       d->margin * 100, d->sd * 100, MAX_ROUNDS, d->mde * 100,
		       plan_mde_test(d->sd, MAX_ROUNDS, 0.05) * 100,
		       plan_resolution(d->sd, MAX_ROUNDS,
		                       0.05 / ((MAX_ROUNDS + MIN_ROUNDS - 1) / MIN_ROUNDS + 1)) *
		           100);
	}
	for (size_t i = 0; i < NROWS; i++) {
		const struct rowdef *d = &rows[i];
		const struct {
			const char *tag, *what;
			double rel;
			bool mde;
		} kinds[] = {
		    {"aa", "A/A: nothing changed", 0, false},
		    {"margin", "worse by exactly its margin", 1, false},
		    {"margin1.5", "worse by 1.5x its margin", 1.5, false},
		    {"mde1", "worse by 1x its MDE", 1, true},
		    {"mde1.5", "worse by 1.5x its MDE", 1.5, true},
		    {"mde2", "worse by 2x its MDE", 2, true},
		};
		for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
			struct job_case *jc = &cases[ncases++];
			double rel = kinds[k].rel * (kinds[k].mde ? d->mde : d->margin);

			snprintf(jc->name, sizeof(jc->name), "%s-%s", d->name, kinds[k].tag);
			jc->row = d;
			jc->factor = worse(d, rel);
			jc->note_factor = 1;
			jc->what = kinds[k].what;
		}
	}
	/*
	 * a nop: +1 instruction a pair, no time; paired as the agent pairs by
	 * default (lockstep), and with --lockstep off (one side after the other)
	 */
	cases[ncases++] = (struct job_case){"nop", &rows[0], 1, 31.0 / 30, "+1 instruction a pair"};
	cases[ncases++] = (struct job_case){"nop-seq", &rows[1], 1, 31.0 / 30,
	                                    "+1 instruction a pair, sides one after the other"};
	/*
	 * a woken waiter that never asks for a handoff (kmutex-woken-steal):
	 * the geometric mean of its per-round ratio to kmutex over 39 rounds
	 */
	for (size_t i = 0; i < NROWS; i++) {
		if (rows[i].shape != SHAPE_TAIL && rows[i].shape != SHAPE_TAIL999)
			continue;
		cases[ncases] =
		    (struct job_case){"", &rows[i], rows[i].shape == SHAPE_TAIL ? 1.59 : 1.49, 1,
		                      "a woken waiter that never asks for a handoff"};
		snprintf(cases[ncases].name, sizeof(cases[ncases].name), "%s-starve", rows[i].name);
		ncases++;
	}
	for (size_t i = 0; i < ncases; i++) {
		if (strcmp(only, "all") && !listed(only, cases[i].name))
			continue;
		if (cases[i].factor != 1)
			printf("(%s: true change %+.2f%%)\n", cases[i].name,
			       (cases[i].factor - 1) * 100);
		run_case(g, &cases[i], (int)n);
	}
	gsl_rng_free(g);
	return 0;
}
