/*
 * cmd_compare.c - lockbench compare (base against patched: mailing-list
 * tables and the verdict), plan (the rounds a job plans from A/A rounds),
 * changepoint (E-Divisive over a series) and image (what code an
 * executable runs).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "changepoint.h"
#include "elfimage.h"
#include "report.h"
#include "roundplan.h"
#include "util.h"

#include "cli.h"

static const char *prog = "lockbench";

const char compare_options_text[] =
    "  --format F           aim7, perf, lkp, text or json [text]\n"
    "  --alpha A            false discovery rate [0.05]\n"
    "  --min-effect E       smallest change that counts, relative [0.02]\n"
    "  --confirm-from N     rounds before N find a change, rounds N and later\n"
    "                       must confirm it on their own [off]\n"
    "  --margin M           equivalence margin of every row, relative [per row:\n"
    "                       3% single-thread cost, 10% contended throughput]\n"
    "  --looks N            looks at the rounds planned (alpha / N each for\n"
    "                       no-change) [1]\n"
    "  --test T             what the paired tests take from each round: log\n"
    "                       (of the ratio patched / base) or raw (the\n"
    "                       difference); a row with a mean <= 0 takes raw [log]\n"
    "  --ignore-image       judge by statistics even when base and patched ran\n"
    "                       one image (by default such a comparison is an A/A:\n"
    "                       every row a control, verdict no-change)\n"
    "  --plan FILE          judge as the server judges a job with this plan\n"
    "                       (lockbench plan's output, or a job's \"plan\"): its\n"
    "                       looks, its first rounds, and rows it cannot resolve\n"
    "  --min-rounds N       the server's --min-rounds, the plan's step [5]\n"
    "  --max-rounds N       the job's limit (the plan's max_rounds with --plan):\n"
    "                       an inconclusive row whose spread cannot fit inside\n"
    "                       its margin by then is not resolvable [off]\n";

const char plan_options_text[] =
    "  --alpha A            [0.05]     --min-rounds N [5]   --max-rounds N [20]\n"
    "  --budget S           seconds a job's rounds may take [3600]\n"
    "  --round-seconds S    seconds one round of both sides takes [0: unknown,\n"
    "                       no budget]\n"
    "  --mde-latency X      target MDE of single-thread rows [0.03]\n"
    "  --mde-contended X    target MDE of contended rows [0.10]\n";

enum {
	OPT_FORMAT = 256,
	OPT_ALPHA,
	OPT_MIN_EFFECT,
	OPT_CONFIRM_FROM,
	OPT_MARGIN,
	OPT_LOOKS,
	OPT_TEST,
	OPT_IGNORE_IMAGE,
	OPT_PLAN,
	OPT_MIN_ROUNDS,
	OPT_MAX_ROUNDS,
	OPT_BUDGET,
	OPT_ROUND_SECONDS,
	OPT_MDE_LATENCY,
	OPT_MDE_CONTENDED,
	OPT_HELP,
};

static const struct option compare_options[] = {
    {"format", required_argument, NULL, OPT_FORMAT},
    {"alpha", required_argument, NULL, OPT_ALPHA},
    {"min-effect", required_argument, NULL, OPT_MIN_EFFECT},
    {"confirm-from", required_argument, NULL, OPT_CONFIRM_FROM},
    {"margin", required_argument, NULL, OPT_MARGIN},
    {"looks", required_argument, NULL, OPT_LOOKS},
    {"test", required_argument, NULL, OPT_TEST},
    {"ignore-image", no_argument, NULL, OPT_IGNORE_IMAGE},
    {"plan", required_argument, NULL, OPT_PLAN},
    {"min-rounds", required_argument, NULL, OPT_MIN_ROUNDS},
    {"max-rounds", required_argument, NULL, OPT_MAX_ROUNDS},
    {"help", no_argument, NULL, OPT_HELP},
    {NULL, 0, NULL, 0},
};

static const struct option plan_options[] = {
    {"alpha", required_argument, NULL, OPT_ALPHA},
    {"min-rounds", required_argument, NULL, OPT_MIN_ROUNDS},
    {"max-rounds", required_argument, NULL, OPT_MAX_ROUNDS},
    {"budget", required_argument, NULL, OPT_BUDGET},
    {"round-seconds", required_argument, NULL, OPT_ROUND_SECONDS},
    {"mde-latency", required_argument, NULL, OPT_MDE_LATENCY},
    {"mde-contended", required_argument, NULL, OPT_MDE_CONTENDED},
    {"help", no_argument, NULL, OPT_HELP},
    {NULL, 0, NULL, 0},
};

static int parse_fraction(const char *s, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (!*s || *end || errno || !(v > 0 && v < 1))
		return -1;
	*out = v;
	return 0;
}

static void free_side(struct lb_result *docs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		result_release(&docs[i]);
	free(docs);
}

/* "a.json,b.json": every round of one side; each must follow the schema. */
static int load_side(const char *arg, struct lb_result **out, size_t *n)
{
	char err[1024];
	int ntok;
	char **tok = lb_split_list(arg, "compare", &ntok, err, sizeof(err));
	struct lb_result *docs = NULL;
	int rc = -1;

	*n = 0;
	if (!tok) {
		fprintf(stderr, "%s: %s\n", prog, err);
		goto out;
	}
	docs = calloc((size_t)ntok, sizeof(*docs));
	if (!docs) {
		fprintf(stderr, "%s: out of memory\n", prog);
		goto out;
	}
	for (int i = 0; i < ntok; i++) {
		result_init(&docs[*n]);
		if (result_load_file(tok[i], &docs[*n], err, sizeof(err))) {
			fprintf(stderr, "%s: %s\n", prog, err);
			result_release(&docs[*n]);
			goto out;
		}
		(*n)++;
	}
	rc = 0;
out:
	lb_free_list(tok);
	if (rc) {
		free_side(docs, *n);
		docs = NULL;
		*n = 0;
	}
	*out = docs;
	return rc;
}

/* True when docs hold a round before from and one at or after it. */
static bool has_rounds(const struct lb_result *docs, size_t n, int from)
{
	bool before = false, after = false;

	for (size_t i = 0; i < n; i++) {
		before |= docs[i].round < from;
		after |= docs[i].round >= from;
	}
	return before && after;
}

/*
 * lockbench changepoint [FILE]: the steps E-Divisive finds in a series of
 * numbers (one per commit, oldest first; whitespace separated) from FILE or
 * stdin, with the server's tracker defaults (changepoint.h).
 */
/*
 * lockbench image FILE...: the image each executable would record in its
 * result documents (elfimage.h), one line each; an operator's way to see
 * whether a patch changes the code a suite runs before any round is run.
 */
int cmd_image(int argc, char **argv)
{
	char image[ELFIMAGE_LEN], err[512];
	int rc = 0;

	if (argc < 2)
		return usage_error("image: name one or more executables%s", "");
	for (int i = 1; i < argc; i++) {
		if (elfimage_sha256(argv[i], image, err, sizeof(err))) {
			fprintf(stderr, "%s: %s\n", prog, err);
			rc = 1;
			continue;
		}
		printf("%s  %s\n", image, argv[i]);
	}
	return rc;
}

int cmd_changepoint(int argc, char **argv)
{
	FILE *in = stdin;
	double *x = NULL, v;
	size_t n = 0, cap = 0;
	struct changepoint_opts o;
	struct changepoint_step steps[64];
	int found, i, rc = 1;

	if (argc > 2)
		return usage_error("changepoint takes at most one file%s", "");
	if (argc == 2 && !(in = fopen(argv[1], "r"))) {
		fprintf(stderr, "%s: %s: %s\n", prog, argv[1], strerror(errno));
		return 1;
	}
	while (fscanf(in, "%lf", &v) == 1) {
		if (n == cap) {
			double *bigger = realloc(x, (cap = cap ? 2 * cap : 64) * sizeof(*x));

			if (!bigger)
				goto out;
			x = bigger;
		}
		x[n++] = v;
	}
	if (!feof(in)) {
		fprintf(stderr, "%s: changepoint: not a number after %zu values\n", prog, n);
		goto out;
	}
	changepoint_defaults(&o);
	found = changepoint_find(x, n, &o, steps, 64);
	if (found < 0)
		goto out;
	for (i = 0; i < found; i++)
		printf("step at %zu: %g -> %g (%+.1f%%), p %.3f\n", steps[i].at, steps[i].before,
		       steps[i].after, 100 * steps[i].change, steps[i].p);
	printf("%d step(s) in %zu values\n", found, n);
	rc = 0;
out:
	free(x);
	if (in != stdin)
		fclose(in);
	return rc;
}

/*
 * The plan in FILE (lockbench plan's output, or a job's "plan" from the
 * server) as compact text in *text; 0, or -1 with a message.  A plan has
 * integer "rounds" of at least COMPARE_MIN_PAIRS, "max_rounds" not below
 * them, and a "rows" list.
 */
static int load_plan(const char *path, char **text)
{
	json_error_t jerr;
	json_t *plan = json_load_file(path, 0, &jerr), *rounds, *cap;
	int rc = -1;

	*text = NULL;
	if (!plan) {
		fprintf(stderr, "%s: --plan %s: %s (line %d)\n", prog, path, jerr.text, jerr.line);
		return -1;
	}
	rounds = json_object_get(plan, "rounds");
	cap = json_object_get(plan, "max_rounds");
	if (!json_is_integer(rounds) || json_integer_value(rounds) < COMPARE_MIN_PAIRS ||
	    !json_is_integer(cap) || json_integer_value(cap) < json_integer_value(rounds) ||
	    json_integer_value(cap) > 100000 || !json_is_array(json_object_get(plan, "rows"))) {
		fprintf(stderr,
		        "%s: --plan %s: not a plan (an object with integer \"rounds\" >= %d, "
		        "\"max_rounds\" >= rounds and a \"rows\" list)\n",
		        prog, path, COMPARE_MIN_PAIRS);
		goto out;
	}
	*text = json_dumps(plan, JSON_COMPACT);
	rc = *text ? 0 : -1;
out:
	json_decref(plan);
	return rc;
}

/* A count option: an integer in [min, max] into *out, or a usage error. */
static int parse_count(const char *arg, const char *name, long long min, long long max, int *out)
{
	char err[256];
	long long v;

	if (lb_parse_int(arg, min, max, &v, name, err, sizeof(err)))
		return usage_error("%s", err);
	*out = (int)v;
	return 0;
}

/* A positive number option (seconds, a relative MDE) into *out, or a usage error. */
static int parse_positive(const char *arg, const char *name, double max, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (!*arg || *end || errno || !(v >= 0 && v <= max)) {
		fprintf(stderr, "%s: %s: '%s' is not a number from 0 to %g\n", prog, name, arg,
		        max);
		return EXIT_USAGE;
	}
	*out = v;
	return 0;
}

/*
 * lockbench plan BASE PATCHED: the rounds a job plans on this machine, from
 * A/A rounds (the same lockbench both sides): their profile (the spread of
 * each headline row's per-round paired change, as the agent posts it) and
 * the plan the server would make of it with these settings, as JSON.
 */
int cmd_plan(int argc, char **argv)
{
	struct plan_settings ps = {0.05, 5, 20, 3600, 0.03, 0.10};
	struct compare_opts co = COMPARE_OPTS_DEFAULT;
	struct lb_result *base = NULL, *patched = NULL;
	size_t nbase = 0, npatched = 0;
	struct comparison cmp;
	json_t *points = NULL, *plan = NULL;
	struct profile_point *pts = NULL;
	double round_s = 0, budget = 3600;
	char err[1024];
	int c, rc = 1, first, cap;

	comparison_init(&cmp);
	optind = 1;
	while ((c = getopt_long(argc, argv, "", plan_options, NULL)) != -1) {
		int bad = 0;

		switch (c) {
		case OPT_ALPHA:
			if (parse_fraction(optarg, &ps.alpha))
				bad = usage_error("--alpha: '%s' is not between 0 and 1", optarg);
			break;
		case OPT_MIN_ROUNDS:
			bad = parse_count(optarg, "--min-rounds", 1, 1000, &ps.min_rounds);
			break;
		case OPT_MAX_ROUNDS:
			bad = parse_count(optarg, "--max-rounds", 1, 1000, &ps.max_rounds);
			break;
		case OPT_BUDGET:
			bad = parse_positive(optarg, "--budget", 604800, &budget);
			break;
		case OPT_ROUND_SECONDS:
			bad = parse_positive(optarg, "--round-seconds", 604800, &round_s);
			break;
		case OPT_MDE_LATENCY:
			bad = parse_positive(optarg, "--mde-latency", 1, &ps.mde_latency);
			break;
		case OPT_MDE_CONTENDED:
			bad = parse_positive(optarg, "--mde-contended", 1, &ps.mde_contended);
			break;
		case OPT_HELP:
			lb_print_command_help(stdout, lb_command_find("plan"));
			rc = 0;
			goto out;
		default:
			bad = usage_error("bad option%s", "");
		}
		if (bad) {
			rc = bad;
			goto out;
		}
	}
	ps.budget_s = (int)budget;
	if (!(ps.mde_latency > 0 && ps.mde_contended > 0)) {
		rc = usage_error("--mde-latency and --mde-contended must be above 0%s", "");
		goto out;
	}
	if (ps.max_rounds < ps.min_rounds) {
		rc = usage_error("--max-rounds is below --min-rounds%s", "");
		goto out;
	}
	if (argc - optind != 2) {
		rc = usage_error("plan needs BASE.json and PATCHED.json (A/A rounds)%s", "");
		goto out;
	}
	if (load_side(argv[optind], &base, &nbase) ||
	    load_side(argv[optind + 1], &patched, &npatched))
		goto out;
	/* the agent's noise A/A: the tests' own spread even on one image */
	co.ignore_image = true;
	co.alpha = ps.alpha;
	if (compare_results(base, nbase, patched, npatched, &co, &cmp, err, sizeof(err))) {
		fprintf(stderr, "%s: %s\n", prog, err);
		goto out;
	}
	points = plan_profile_points(&cmp);
	if (!points || json_array_size(points) == 0) {
		fprintf(stderr,
		        "%s: plan: no row has %d paired rounds or more with an interval: "
		        "nothing to plan from\n",
		        prog, COMPARE_MIN_PAIRS);
		goto out;
	}
	pts = calloc(json_array_size(points), sizeof(*pts));
	if (!pts)
		goto out;
	for (size_t i = 0; i < json_array_size(points); i++) {
		json_t *o = json_array_get(points, i);

		pts[i] = (struct profile_point){
		    json_string_value(json_object_get(o, "workload")),
		    json_string_value(json_object_get(o, "lock")),
		    json_string_value(json_object_get(o, "params")),
		    json_string_value(json_object_get(o, "metric")),
		    (long long)json_integer_value(json_object_get(o, "users")),
		    json_real_value(json_object_get(o, "sd"))};
	}
	plan = plan_build(pts, json_array_size(points), round_s, "", &ps, &first, &cap);
	if (!plan || json_dumpf(plan, stdout, JSON_INDENT(2)) || fputc('\n', stdout) == EOF ||
	    fflush(stdout)) {
		fprintf(stderr, "%s: cannot write the plan: %s\n", prog, strerror(errno));
		goto out;
	}
	rc = 0;
out:
	free(pts);
	json_decref(points);
	json_decref(plan);
	comparison_release(&cmp);
	free_side(patched, npatched);
	free_side(base, nbase);
	return rc;
}

/* What `compare` was asked for: its options (defaults as the server's). */
struct compare_args {
	enum report_format fmt;
	struct compare_opts co;
	const char *plan_path;
	int min_rounds, max_rounds;
};

/*
 * compare's options into ca: -1 when they are good, else the exit status
 * (0 after --help, EXIT_USAGE when one is bad: said on stderr).
 */
static int parse_compare_args(int argc, char **argv, struct compare_args *ca)
{
	char err[1024];
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "", compare_options, NULL)) != -1) {
		switch (c) {
		case OPT_FORMAT:
			if (report_format_parse(optarg, &ca->fmt))
				return usage_error(
				    "unknown format '%s' (valid: aim7, perf, lkp, text, "
				    "json)",
				    optarg);
			break;
		case OPT_ALPHA:
			if (parse_fraction(optarg, &ca->co.alpha))
				return usage_error("--alpha: '%s' is not between 0 and 1", optarg);
			break;
		case OPT_MIN_EFFECT:
			if (parse_fraction(optarg, &ca->co.min_effect))
				return usage_error("--min-effect: '%s' is not between 0 and 1",
				                   optarg);
			break;
		case OPT_CONFIRM_FROM: {
			long long v;
			if (lb_parse_int(optarg, 1, 1000000, &v, "--confirm-from", err,
			                 sizeof(err)))
				return usage_error("%s", err);
			ca->co.confirm_from = (int)v;
			break;
		}
		case OPT_MARGIN:
			if (parse_fraction(optarg, &ca->co.equiv_margin))
				return usage_error("--margin: '%s' is not between 0 and 1", optarg);
			break;
		case OPT_LOOKS: {
			long long v;
			if (lb_parse_int(optarg, 1, 1000, &v, "--looks", err, sizeof(err)))
				return usage_error("%s", err);
			ca->co.looks = (int)v;
			break;
		}
		case OPT_TEST:
			if (!strcmp(optarg, "log")) {
				ca->co.test = COMPARE_TEST_LOG;
			} else if (!strcmp(optarg, "raw")) {
				ca->co.test = COMPARE_TEST_RAW;
			} else
				return usage_error("--test: '%s' is not log or raw", optarg);
			break;
		case OPT_IGNORE_IMAGE:
			ca->co.ignore_image = true;
			break;
		case OPT_PLAN:
			ca->plan_path = optarg;
			break;
		case OPT_MIN_ROUNDS:
			if (parse_count(optarg, "--min-rounds", 1, 1000, &ca->min_rounds))
				return EXIT_USAGE;
			break;
		case OPT_MAX_ROUNDS:
			if (parse_count(optarg, "--max-rounds", COMPARE_MIN_PAIRS, 100000,
			                &ca->max_rounds))
				return EXIT_USAGE;
			break;
		case OPT_HELP:
			lb_print_command_help(stdout, lb_command_find("compare"));
			return 0;
		default:
			return usage_error("bad option%s", "");
		}
	}
	return -1;
}

int cmd_compare(int argc, char **argv)
{
	struct compare_args ca = {.fmt = REPORT_TEXT, .co = COMPARE_OPTS_DEFAULT, .min_rounds = 5};
	struct compare_opts co;
	struct lb_result *base = NULL, *patched = NULL;
	size_t nbase = 0, npatched = 0;
	struct comparison cmp;
	char err[1024], *plan_text = NULL;
	int rc, min_rounds, max_rounds;

	comparison_init(&cmp);
	rc = parse_compare_args(argc, argv, &ca);
	if (rc >= 0)
		goto out;
	rc = 1;
	co = ca.co;
	min_rounds = ca.min_rounds;
	max_rounds = ca.max_rounds;
	if (argc - optind != 2) {
		rc = usage_error("compare needs BASE.json and PATCHED.json%s", "");
		goto out;
	}
	/* as the server judges (server/verdicts.c): a row needs the rounds a job asks for first */
	if ((size_t)min_rounds < co.min_samples)
		co.min_samples =
		    min_rounds > COMPARE_MIN_PAIRS ? (size_t)min_rounds : COMPARE_MIN_PAIRS;
	if (ca.plan_path) {
		/* and a planned job its plan's looks, first rounds and rows it cannot resolve */
		if (load_plan(ca.plan_path, &plan_text))
			goto out;
		plan_compare_opts(plan_text, min_rounds, &co);
	}
	if (load_side(argv[optind], &base, &nbase) ||
	    load_side(argv[optind + 1], &patched, &npatched))
		goto out;
	if (co.confirm_from && (!has_rounds(base, nbase, co.confirm_from) ||
	                        !has_rounds(patched, npatched, co.confirm_from))) {
		fprintf(stderr,
		        "%s: --confirm-from %d: each side needs rounds before %d and from %d on\n",
		        prog, co.confirm_from, co.confirm_from, co.confirm_from);
		goto out;
	}
	if (compare_results(base, nbase, patched, npatched, &co, &cmp, err, sizeof(err))) {
		fprintf(stderr, "%s: %s\n", prog, err);
		goto out;
	}
	plan_mark_rows(plan_text, &cmp);
	/* futility needs the job's limit: given, or the plan's */
	if (!max_rounds)
		max_rounds = plan_max_rounds(plan_text);
	if (max_rounds)
		plan_mark_futile(&cmp, max_rounds);
	/* a debug kernel's documents carry lockups and splats only, no figures */
	bool debug = cmp.suite && !strncmp(cmp.suite, "kernel-debug", 12);
	if (!cmp.nrows && !cmp.nsplats && !debug) {
		fprintf(stderr, "%s: the two documents have no point in common\n", prog);
		goto out;
	}
	if (report_render(&cmp, ca.fmt, stdout) || fflush(stdout)) {
		fprintf(stderr, "%s: cannot write the report: %s\n", prog, strerror(errno));
		goto out;
	}
	rc = 0;
out:
	free(plan_text);
	comparison_release(&cmp);
	free_side(patched, npatched);
	free_side(base, nbase);
	return rc;
}
