/*
 * cmd_compare.c - lockbench compare (base against patched: mailing-list
 * tables and the verdict), plan (the rounds a job plans from A/A rounds),
 * changepoint (E-Divisive over a series) and image (what code an
 * executable runs).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "changepoint.h"
#include "elfimage.h"
#include "options.h"
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

static const struct opt_cmd help_cmd[] = {{"help", NULL}};

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

/* A relative option (--alpha, --min-effect, --margin) into *out: 0, or EXIT_USAGE (said). */
static int fraction_option(const char *name, const char *text, double *out)
{
	char fmt[64];

	if (!text || !parse_fraction(text, out))
		return 0;
	snprintf(fmt, sizeof(fmt), "%s: '%%s' is not between 0 and 1", name);
	return usage_error(fmt, text);
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

/*
 * plan's options into ps and *round_s, and the index of BASE.json in
 * *first: -1 when they are good, else the exit status (0 after --help,
 * EXIT_USAGE when one is bad: said on stderr).
 */
static int parse_plan_args(int argc, char **argv, struct plan_settings *ps, double *round_s,
                           int *first)
{
	const char *alpha = NULL;
	double budget = ps->budget_s;
	struct opt opts[] = {
	    {"alpha", NULL, OPT_STR, &alpha, NULL, 0, 0, NULL, NULL},
	    {"min-rounds", NULL, OPT_INT, &ps->min_rounds, NULL, 1, 1000, NULL, NULL},
	    {"max-rounds", NULL, OPT_INT, &ps->max_rounds, NULL, 1, 1000, NULL, NULL},
	    {"budget", NULL, OPT_DOUBLE, &budget, NULL, 0, 604800, NULL, NULL},
	    {"round-seconds", NULL, OPT_DOUBLE, round_s, NULL, 0, 604800, NULL, NULL},
	    {"mde-latency", NULL, OPT_DOUBLE, &ps->mde_latency, NULL, 0, 1, NULL, NULL},
	    {"mde-contended", NULL, OPT_DOUBLE, &ps->mde_contended, NULL, 0, 1, NULL, NULL},
	};
	const struct opt_table t = {
	    .prog = "lockbench plan",
	    .opts = opts,
	    .n = sizeof(opts) / sizeof(opts[0]),
	    .cmds = help_cmd,
	    .ncmds = 1,
	    .first_operand = first,
	};
	int rc = lb_command_opts(&t, lb_command_find("plan"), argc, argv);

	if (rc >= 0)
		return rc;
	if (fraction_option("--alpha", alpha, &ps->alpha))
		return EXIT_USAGE;
	ps->budget_s = (int)budget;
	if (!(ps->mde_latency > 0 && ps->mde_contended > 0))
		return usage_error("--mde-latency and --mde-contended must be above 0%s", "");
	if (ps->max_rounds < ps->min_rounds)
		return usage_error("--max-rounds is below --min-rounds%s", "");
	if (argc - *first != 2)
		return usage_error("plan needs BASE.json and PATCHED.json (A/A rounds)%s", "");
	return -1;
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
	double round_s = 0;
	char err[1024];
	int rc, opd, first, cap;

	comparison_init(&cmp);
	rc = parse_plan_args(argc, argv, &ps, &round_s, &opd);
	if (rc >= 0)
		goto out;
	rc = 1;
	if (load_side(argv[opd], &base, &nbase) || load_side(argv[opd + 1], &patched, &npatched))
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
 * compare's options into ca and the index of BASE.json in *first: -1 when
 * they are good, else the exit status (0 after --help, EXIT_USAGE when one
 * is bad: said on stderr).
 */
static int parse_compare_args(int argc, char **argv, struct compare_args *ca, int *first)
{
	const char *format = NULL, *alpha = NULL, *min_effect = NULL, *margin = NULL, *test = NULL;
	struct opt opts[] = {
	    {"format", NULL, OPT_STR, &format, NULL, 0, 0, NULL, NULL},
	    {"alpha", NULL, OPT_STR, &alpha, NULL, 0, 0, NULL, NULL},
	    {"min-effect", NULL, OPT_STR, &min_effect, NULL, 0, 0, NULL, NULL},
	    {"confirm-from", NULL, OPT_INT, &ca->co.confirm_from, NULL, 1, 1000000, NULL, NULL},
	    {"margin", NULL, OPT_STR, &margin, NULL, 0, 0, NULL, NULL},
	    {"looks", NULL, OPT_INT, &ca->co.looks, NULL, 1, 1000, NULL, NULL},
	    {"test", NULL, OPT_STR, &test, NULL, 0, 0, NULL, NULL},
	    {"ignore-image", NULL, OPT_FLAG, &ca->co.ignore_image, NULL, 0, 0, NULL, NULL},
	    {"plan", NULL, OPT_STR, &ca->plan_path, NULL, 0, 0, NULL, NULL},
	    {"min-rounds", NULL, OPT_INT, &ca->min_rounds, NULL, 1, 1000, NULL, NULL},
	    {"max-rounds", NULL, OPT_INT, &ca->max_rounds, NULL, COMPARE_MIN_PAIRS, 100000, NULL,
	     NULL},
	};
	const struct opt_table t = {
	    .prog = "lockbench compare",
	    .opts = opts,
	    .n = sizeof(opts) / sizeof(opts[0]),
	    .cmds = help_cmd,
	    .ncmds = 1,
	    .first_operand = first,
	};
	int rc = lb_command_opts(&t, lb_command_find("compare"), argc, argv);

	if (rc >= 0)
		return rc;
	if (format && report_format_parse(format, &ca->fmt))
		return usage_error("unknown format '%s' (valid: aim7, perf, lkp, text, json)",
		                   format);
	if (fraction_option("--alpha", alpha, &ca->co.alpha) ||
	    fraction_option("--min-effect", min_effect, &ca->co.min_effect) ||
	    fraction_option("--margin", margin, &ca->co.equiv_margin))
		return EXIT_USAGE;
	if (test && !strcmp(test, "log"))
		ca->co.test = COMPARE_TEST_LOG;
	else if (test && !strcmp(test, "raw"))
		ca->co.test = COMPARE_TEST_RAW;
	else if (test)
		return usage_error("--test: '%s' is not log or raw", test);
	if (argc - *first != 2)
		return usage_error("compare needs BASE.json and PATCHED.json%s", "");
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
	int rc, min_rounds, max_rounds, first;

	comparison_init(&cmp);
	rc = parse_compare_args(argc, argv, &ca, &first);
	if (rc >= 0)
		goto out;
	rc = 1;
	co = ca.co;
	min_rounds = ca.min_rounds;
	max_rounds = ca.max_rounds;
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
	if (load_side(argv[first], &base, &nbase) ||
	    load_side(argv[first + 1], &patched, &npatched))
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
