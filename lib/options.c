/* options.c - see options.h. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"

#define HELP_MARGIN 27 /* where help text starts */
#define HELP_WIDTH  80

/* the largest value a whole-number option's variable holds */
static double type_max(enum opt_type type)
{
	switch (type) {
	case OPT_INT:
		return INT_MAX;
	case OPT_UINT:
		return UINT_MAX;
	case OPT_LONG:
		return (double)LONG_MAX;
	default:
		return (double)SIZE_MAX;
	}
}

static int bad_number(const struct opt_table *t, const struct opt *o, const char *text,
                      const char *what)
{
	double max = o->max ? o->max : type_max(o->type);

	if (o->type == OPT_DOUBLE)
		fprintf(stderr, "%s: %s: '%s' is not a number from %g to %g\n", t->prog, what, text,
		        o->min, o->max);
	else if (o->max && o->max < type_max(o->type))
		fprintf(stderr, "%s: %s: '%s' is not a whole number from %.0f to %.0f\n", t->prog,
		        what, text, o->min, max);
	else if (o->min == 1)
		fprintf(stderr, "%s: %s: '%s' is not a positive whole number\n", t->prog, what,
		        text);
	else
		fprintf(stderr, "%s: %s: '%s' is not a whole number of at least %.0f\n", t->prog,
		        what, text, o->min);
	return -1;
}

/* Adds text to an OPT_LIST's values; 0 or -1 with a message. */
static int list_add(const struct opt_table *t, struct opt_list *l, const char *text)
{
	const char **v = realloc(l->v, (l->n + 1) * sizeof(*v));

	if (!v) {
		fprintf(stderr, "%s: out of memory\n", t->prog);
		return -1;
	}
	l->v = v;
	l->v[l->n++] = text;
	return 0;
}

void opts_list_release(struct opt_list *l)
{
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

/*
 * Set o from text (what: "--flag", "-f", "$VARIABLE" or "the default"); 0
 * or -1 with a message.  An OPT_LIST's value is added to its list.
 */
static int opt_set(const struct opt_table *t, const struct opt *o, const char *text,
                   const char *what)
{
	char *end;

	switch (o->type) {
	case OPT_STR:
		*(const char **)o->ptr = text;
		return 0;
	case OPT_LIST:
		return list_add(t, o->ptr, text);
	case OPT_FLAG:
	case OPT_FLAG_OFF:
		if (text && strcmp(text, "1") && strcmp(text, "0")) {
			fprintf(stderr, "%s: %s: '%s' is not 1 or 0\n", t->prog, what, text);
			return -1;
		}
		*(bool *)o->ptr = (!text || !strcmp(text, "1")) == (o->type == OPT_FLAG);
		return 0;
	case OPT_ON_OFF:
		if (strcmp(text, "on") && strcmp(text, "off")) {
			fprintf(stderr, "%s: %s: '%s' is not on or off\n", t->prog, what, text);
			return -1;
		}
		*(bool *)o->ptr = !strcmp(text, "on");
		return 0;
	case OPT_DOUBLE: {
		errno = 0;
		double d = strtod(text, &end);
		if (!*text || *end || errno || !isfinite(d) || d < o->min || d > o->max)
			return bad_number(t, o, text, what);
		*(double *)o->ptr = d;
		return 0;
	}
	default:
		break;
	}
	/* whole numbers: digits, an optional sign, nothing else */
	errno = 0;
	long long v = strtoll(text, &end, 10);
	double max = o->max ? o->max : type_max(o->type);
	if (!*text || *end || errno || (double)v < o->min || (double)v > max)
		return bad_number(t, o, text, what);
	switch (o->type) {
	case OPT_INT:
		*(int *)o->ptr = (int)v;
		break;
	case OPT_LONG:
		*(long *)o->ptr = (long)v;
		break;
	case OPT_UINT:
		*(unsigned *)o->ptr = (unsigned)v;
		break;
	default:
		*(size_t *)o->ptr = (size_t)v;
		break;
	}
	return 0;
}

/* A flag with no value (OPT_FLAG, OPT_FLAG_OFF). */
static bool is_flag(const struct opt *o)
{
	return o->type == OPT_FLAG || o->type == OPT_FLAG_OFF;
}

/* The row of getopt_long's answer c: n + K for cmds[K]; SIZE_MAX for none. */
static size_t row_of(const struct opt_table *t, int c)
{
	if (c >= 256 && c < 256 + (int)(t->n + t->ncmds))
		return (size_t)(c - 256);
	for (size_t i = 0; c != '?' && c != ':' && i < t->n; i++)
		if (t->opts[i].name[0] == c && !t->opts[i].name[1])
			return i;
	return SIZE_MAX;
}

/* The defaults, then the variables; 0 or -1 with a message. */
static int opts_preset(const struct opt_table *t)
{
	char what[128];

	for (size_t i = 0; i < t->n; i++) {
		const struct opt *o = &t->opts[i];
		const char *env = o->env ? getenv(o->env) : NULL;

		if (env && !*env)
			env = NULL;
		if (o->type == OPT_LIST)
			opts_list_release(o->ptr);
		if (o->def && opt_set(t, o, o->def, "the default"))
			return -1; /* a default of the table's own that does not parse */
		snprintf(what, sizeof(what), "$%s", o->env ? o->env : "");
		if (env && o->type == OPT_LIST)
			((struct opt_list *)o->ptr)->n = 0; /* the variable replaces the default */
		if (env && opt_set(t, o, env, what))
			return -1;
		if (t->given)
			t->given[i] = env != NULL;
	}
	return 0;
}

int opts_parse(const struct opt_table *t, int argc, char **argv)
{
	struct option *lopts = calloc(t->n + t->ncmds + 1, sizeof(*lopts));
	char *shorts = calloc(2 * t->n + 1, 1);             /* "h" for -h, "f:" for -f VALUE */
	bool *flagged = calloc(t->n + 1, sizeof(*flagged)); /* rows given by a flag */
	size_t nl = 0, ns = 0;
	char what[128];
	int c, rc = 0;

	if (!lopts || !shorts || !flagged) {
		fprintf(stderr, "%s: out of memory\n", t->prog);
		goto bad;
	}
	if (opts_preset(t))
		goto bad;
	for (size_t i = 0; i < t->n; i++) {
		const struct opt *o = &t->opts[i];
		int has_arg = is_flag(o) ? no_argument : required_argument;

		if (!o->name[1]) {
			shorts[ns++] = o->name[0];
			if (has_arg == required_argument)
				shorts[ns++] = ':';
		} else {
			lopts[nl++] = (struct option){o->name, has_arg, NULL, 256 + (int)i};
		}
	}
	for (size_t k = 0; k < t->ncmds; k++)
		lopts[nl++] =
		    (struct option){t->cmds[k].name, no_argument, NULL, 256 + (int)(t->n + k)};
	optind = 0; /* glibc: start over, whatever parsed before */
	while ((c = getopt_long(argc, argv, shorts, lopts, NULL)) != -1) {
		size_t i = row_of(t, c);

		if (i == SIZE_MAX) {
			fprintf(stderr, "%s: see %s --help\n", t->prog, t->prog);
			goto bad;
		}
		if (i >= t->n) {
			rc = (int)(i - t->n) + 1;
			goto out;
		}
		const struct opt *o = &t->opts[i];
		snprintf(what, sizeof(what), "%s%s", o->name[1] ? "--" : "-", o->name);
		if (o->type == OPT_LIST && !flagged[i])
			((struct opt_list *)o->ptr)->n = 0; /* the first flag replaces the rest */
		if (opt_set(t, o, is_flag(o) ? NULL : optarg, what))
			goto bad;
		flagged[i] = true;
		if (t->given)
			t->given[i] = true;
	}
	if (t->first_operand) {
		*t->first_operand = optind;
	} else if (optind < argc) {
		fprintf(stderr, "%s: unexpected argument '%s'\n", t->prog, argv[optind]);
		goto bad;
	}
	goto out;
bad:
	rc = -1;
out:
	free(flagged);
	free(shorts);
	free(lopts);
	return rc;
}

/* text from column col (already reached) at a HELP_MARGIN margin, in lines of HELP_WIDTH */
static void put_wrapped(FILE *f, int col, const char *text)
{
	if (col > HELP_MARGIN) {
		fprintf(f, "\n%*s", HELP_MARGIN, "");
		col = HELP_MARGIN;
	}
	fprintf(f, "%*s", HELP_MARGIN - col, "");
	col = HELP_MARGIN;
	while (*text) {
		size_t w = strcspn(text, " ");

		if (col > HELP_MARGIN && col + 1 + (int)w > HELP_WIDTH) {
			fprintf(f, "\n%*s", HELP_MARGIN, "");
			col = HELP_MARGIN;
		}
		if (col > HELP_MARGIN) {
			fputc(' ', f);
			col++;
		}
		fprintf(f, "%.*s", (int)w, text);
		col += (int)w;
		text += w;
		text += strspn(text, " ");
	}
	fputc('\n', f);
}

static const char *arg_name(const struct opt *o)
{
	if (is_flag(o))
		return NULL;
	if (o->arg)
		return o->arg;
	return o->type == OPT_ON_OFF ? "on|off" : "VALUE";
}

void opts_usage(const struct opt_table *t, FILE *f)
{
	fputs(t->intro, f);
	for (size_t i = 0; i < t->n; i++) {
		const struct opt *o = &t->opts[i];
		const char *arg = arg_name(o);
		int col = fprintf(f, "  %s%s%s%s ", o->name[1] ? "--" : "-", o->name,
		                  arg ? " " : "", arg ? arg : "");

		put_wrapped(f, col, o->help);
		if (o->env && is_flag(o))
			fprintf(f, "%*s[$%s=1]\n", HELP_MARGIN, "", o->env);
		else if (o->env && o->def)
			fprintf(f, "%*s[$%s, %s]\n", HELP_MARGIN, "", o->env,
			        *o->def ? o->def : "''");
		else if (o->env)
			fprintf(f, "%*s[$%s]\n", HELP_MARGIN, "", o->env);
	}
	for (size_t k = 0; k < t->ncmds; k++)
		put_wrapped(f, fprintf(f, "  --%s ", t->cmds[k].name), t->cmds[k].help);
	if (t->outro)
		fputs(t->outro, f);
}
