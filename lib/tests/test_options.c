/*
 * test_options.c - the option engine: default, variable, flag in that
 * order; an empty variable unset; every type's bad values refused with the
 * source named; commands; --help wrapped to 80 columns with each variable
 * and default; operands among the options, a flag given again, short
 * flags and which options were given (the client's table); a flag and
 * its --no- flag on one bool, the last given winning.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "options.h"

static const char *s_val;
static int i_val;
static long l_val;
static unsigned u_val;
static size_t z_val;
static double d_val;
static bool on_val, flag_val;

static struct opt opts[] = {
    {"name", "T_NAME", OPT_STR, &s_val, "dflt", 0, 0, "a name", "N"},
    {"count", "T_COUNT", OPT_INT, &i_val, "5", 1, 0,
     "a count, long enough help to be wrapped "
     "over two lines of the eighty columns",
     NULL},
    {"least", "T_LEAST", OPT_LONG, &l_val, "3", 3, 0, "at least three", NULL},
    {"ranged", "T_RANGED", OPT_UINT, &u_val, "10", 1, 100, "one to a hundred", NULL},
    {"size", "T_SIZE", OPT_SIZE, &z_val, "4096", 1, 1e10, "bytes", "BYTES"},
    {"ratio", "T_RATIO", OPT_DOUBLE, &d_val, "0.05", 0, 0.5, "a ratio", "X"},
    {"mode", "T_MODE", OPT_ON_OFF, &on_val, "off", 0, 0, "on or off", NULL},
    {"switch", "T_SWITCH", OPT_FLAG, &flag_val, NULL, 0, 0, "a switch", NULL},
};
#define N (sizeof(opts) / sizeof(opts[0]))
static bool given[N];
static const struct opt_cmd cmds[] = {{"help", "this text"}, {"version", "the version"}};
static const struct opt_table table = {"prog", opts, N, given, cmds, 2, "usage: prog\n\n",
                                       NULL,   NULL};

/* a table that takes operands (a command and its arguments), as the client's */
static struct opt_list suites;
static bool wait_val, help_val;
static int n_val, first;
static struct opt opts2[] = {
    {"wait", NULL, OPT_FLAG, &wait_val, NULL, 0, 0, "wait", NULL},
    {"suite", "T_SUITE", OPT_LIST, &suites, "dflt", 0, 0, "a suite (again for several)", "S"},
    {"n", NULL, OPT_INT, &n_val, "1", 1, 9, "one to nine", "N"},
    {"help", NULL, OPT_FLAG, &help_val, NULL, 0, 0, "this text", NULL},
    {"h", NULL, OPT_FLAG, &help_val, NULL, 0, 0, "the same", NULL},
};
#define N2 (sizeof(opts2) / sizeof(opts2[0]))
static bool given2[N2];
static const struct opt_cmd cmds2[] = {{"version", "the version"}};
static const struct opt_table table2 = {
    .prog = "cli",
    .opts = opts2,
    .n = N2,
    .given = given2,
    .cmds = cmds2,
    .ncmds = 1,
    .intro = "usage: cli COMMAND\n\n",
    .first_operand = &first,
};

/* parse argv (NULL-terminated) with t, stderr in err; argv stays for its operands */
static char err[4096];
static char *argv[16];
static int argc;
static int parse_with(const struct opt_table *t, const char *const *args)
{
	argc = 0;
	argv[argc++] = "prog";
	for (; *args; args++)
		argv[argc++] = (char *)*args;
	argv[argc] = NULL;
	fflush(stderr);
	FILE *f = tmpfile();
	int saved = dup(2);
	dup2(fileno(f), 2);
	int rc = opts_parse(t, argc, argv);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	rewind(f);
	size_t n = fread(err, 1, sizeof(err) - 1, f);
	err[n] = 0;
	fclose(f);
	return rc;
}

static int parse(const char *const *args)
{
	return parse_with(&table, args);
}

static int setup(void **state)
{
	(void)state;
	const char *vars[] = {"T_NAME",  "T_COUNT", "T_LEAST",  "T_RANGED", "T_SIZE",
	                      "T_RATIO", "T_MODE",  "T_SWITCH", "T_SUITE"};
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		unsetenv(vars[i]);
	return 0;
}

static void test_defaults(void **state)
{
	setup(state);
	assert_int_equal(parse((const char *[]){NULL}), 0);
	assert_string_equal(s_val, "dflt");
	assert_int_equal(i_val, 5);
	assert_int_equal(l_val, 3);
	assert_int_equal(u_val, 10);
	assert_int_equal(z_val, 4096);
	assert_true(d_val == 0.05);
	assert_false(on_val);
	assert_false(flag_val);
	for (size_t i = 0; i < N; i++)
		assert_false(given[i]);
}

static void test_precedence(void **state)
{
	setup(state);
	setenv("T_COUNT", "7", 1);
	setenv("T_NAME", "", 1); /* empty: unset */
	setenv("T_SWITCH", "1", 1);
	assert_int_equal(parse((const char *[]){NULL}), 0);
	assert_int_equal(i_val, 7);
	assert_string_equal(s_val, "dflt");
	assert_true(flag_val);
	assert_true(given[1]);
	assert_false(given[0]);
	/* a flag wins over its variable */
	assert_int_equal(parse((const char *[]){"--count", "9", "--mode", "on", "--ratio", "0.5",
	                                        "--size", "10000000000", NULL}),
	                 0);
	assert_int_equal(i_val, 9);
	assert_true(on_val);
	assert_true(d_val == 0.5);
	assert_int_equal(z_val, 10000000000ull);
	setenv("T_SWITCH", "0", 1);
	assert_int_equal(parse((const char *[]){"--switch", NULL}), 0);
	assert_true(flag_val);
	setup(state);
}

static void refused(const char *const *args, const char *message)
{
	assert_int_equal(parse(args), -1);
	if (!strstr(err, message))
		fail_msg("'%s' not in '%s'", message, err);
}

static void test_bad(void **state)
{
	setup(state);
	refused((const char *[]){"--count", "0", NULL},
	        "prog: --count: '0' is not a positive whole number");
	refused((const char *[]){"--count", "5x", NULL}, "'5x' is not a positive whole number");
	refused((const char *[]){"--count", "99999999999", NULL}, "is not a positive whole number");
	refused((const char *[]){"--least", "2", NULL},
	        "--least: '2' is not a whole number of at least 3");
	refused((const char *[]){"--ranged", "101", NULL},
	        "--ranged: '101' is not a whole number from 1 to 100");
	refused((const char *[]){"--ratio", "0.6", NULL},
	        "--ratio: '0.6' is not a number from 0 to 0.5");
	refused((const char *[]){"--ratio", "nan", NULL}, "'nan' is not a number");
	refused((const char *[]){"--mode", "maybe", NULL}, "--mode: 'maybe' is not on or off");
	refused((const char *[]){"stray", NULL}, "prog: unexpected argument 'stray'");
	refused((const char *[]){"--no-such", NULL}, "see prog --help");
	setenv("T_RANGED", "-1", 1);
	refused((const char *[]){NULL},
	        "prog: $T_RANGED: '-1' is not a whole number from 1 to 100");
	setup(state);
	setenv("T_SWITCH", "yes", 1);
	refused((const char *[]){NULL}, "$T_SWITCH: 'yes' is not 1 or 0");
	setup(state);
}

static void test_commands(void **state)
{
	setup(state);
	assert_int_equal(parse((const char *[]){"--help", NULL}), 1);
	assert_int_equal(parse((const char *[]){"--count", "3", "--version", NULL}), 2);
}

static void test_usage(void **state)
{
	(void)state;
	char *text = NULL, line[256];
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	opts_usage(&table, f);
	fclose(f);
	assert_non_null(strstr(text, "  --name N                 a name\n"
	                             "                           [$T_NAME, dflt]\n"));
	assert_non_null(strstr(text, "  --count VALUE            a count,"));
	assert_non_null(strstr(text, "  --mode on|off "));
	assert_non_null(strstr(text, "[$T_SWITCH=1]"));
	assert_non_null(strstr(text, "  --help                   this text\n"));
	FILE *r = fmemopen(text, len, "r");
	while (fgets(line, sizeof(line), r))
		assert_true(strlen(line) <= 81); /* 80 columns and the newline */
	fclose(r);
	free(text);
}

/* the operands, in order, joined by spaces */
static const char *operands(void)
{
	static char buf[256];
	size_t len = 0;

	buf[0] = 0;
	for (int i = first; i < argc; i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s", i > first ? " " : "",
		                        argv[i]);
	return buf;
}

static void test_operands(void **state)
{
	setup(state);
	/* options before, among and after the command's arguments: the same */
	assert_int_equal(parse_with(&table2, (const char *[]){"--wait", "submit", "x.mbox", NULL}),
	                 0);
	assert_true(wait_val);
	assert_string_equal(operands(), "submit x.mbox");
	assert_int_equal(parse_with(&table2, (const char *[]){"submit", "--wait", "x.mbox", NULL}),
	                 0);
	assert_true(wait_val);
	assert_string_equal(operands(), "submit x.mbox");
	assert_int_equal(
	    parse_with(&table2, (const char *[]){"submit", "x.mbox", "-n", "3", "y", NULL}), 0);
	assert_int_equal(n_val, 3);
	assert_string_equal(operands(), "submit x.mbox y");
	/* "--" ends the options */
	assert_int_equal(parse_with(&table2, (const char *[]){"submit", "--", "--wait", NULL}), 0);
	assert_string_equal(operands(), "submit --wait");
	/* none at all */
	assert_int_equal(parse_with(&table2, (const char *[]){"--wait", NULL}), 0);
	assert_int_equal(first, argc);
	/* a bad value or unknown option among operands is still refused */
	assert_int_equal(parse_with(&table2, (const char *[]){"submit", "--bogus", NULL}), -1);
	assert_non_null(strstr(err, "see cli --help"));
	assert_int_equal(parse_with(&table2, (const char *[]){"status", "-n", "10", NULL}), -1);
	assert_non_null(strstr(err, "cli: -n: '10' is not a whole number from 1 to 9"));
	/* a command flag among operands */
	assert_int_equal(parse_with(&table2, (const char *[]){"status", "--version", NULL}), 1);
}

static void test_list(void **state)
{
	setup(state);
	assert_int_equal(parse_with(&table2, (const char *[]){"run", NULL}), 0);
	assert_int_equal(suites.n, 1);
	assert_string_equal(suites.v[0], "dflt");
	setenv("T_SUITE", "env", 1);
	assert_int_equal(parse_with(&table2, (const char *[]){"run", NULL}), 0);
	assert_int_equal(suites.n, 1);
	assert_string_equal(suites.v[0], "env");
	/* the flags replace the variable's value, then add theirs in order */
	assert_int_equal(parse_with(&table2, (const char *[]){"--suite", "a", "run", "--suite", "b",
	                                                      "--suite", "a", NULL}),
	                 0);
	assert_int_equal(suites.n, 3);
	assert_string_equal(suites.v[0], "a");
	assert_string_equal(suites.v[1], "b");
	assert_string_equal(suites.v[2], "a");
	assert_string_equal(operands(), "run");
	/* each parse starts over */
	assert_int_equal(parse_with(&table2, (const char *[]){"--suite", "c", NULL}), 0);
	assert_int_equal(suites.n, 1);
	assert_string_equal(suites.v[0], "c");
	opts_list_release(&suites);
	assert_int_equal(suites.n, 0);
	assert_null(suites.v);
	setup(state);
}

static void test_given(void **state)
{
	setup(state);
	assert_int_equal(parse_with(&table2, (const char *[]){"status", NULL}), 0);
	for (size_t i = 0; i < N2; i++)
		assert_false(given2[i]); /* a default is not given */
	assert_false(help_val);
	/* -h, a short flag, is a row of its own */
	assert_int_equal(parse_with(&table2, (const char *[]){"report", "-h", NULL}), 0);
	assert_true(help_val);
	assert_true(given2[4]);
	assert_false(given2[3]);
	assert_string_equal(operands(), "report");
	assert_int_equal(parse_with(&table2, (const char *[]){"--help", "-n", "2", NULL}), 0);
	assert_true(given2[3] && given2[2]);
	assert_false(given2[4] || given2[0] || given2[1]);
	setenv("T_SUITE", "x", 1);
	assert_int_equal(parse_with(&table2, (const char *[]){NULL}), 0);
	assert_true(given2[1]); /* a variable is */
	setup(state);
	/* a long name is no short flag */
	assert_int_equal(parse_with(&table2, (const char *[]){"-w", NULL}), -1);
	assert_non_null(strstr(err, "see cli --help"));
	opts_list_release(&suites);
}

static void test_usage_short(void **state)
{
	(void)state;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	opts_usage(&table2, f);
	fclose(f);
	assert_non_null(strstr(text, "  -n N                     one to nine\n"));
	assert_non_null(strstr(text, "  -h                       the same\n"));
	assert_non_null(strstr(text, "  --suite S                a suite (again for several)\n"
	                             "                           [$T_SUITE, dflt]\n"));
	free(text);
}

/* --stacks and --no-stacks on one bool, as lockbench's --instructions and --no-instructions */
static bool stacks_val;
static struct opt opts3[] = {
    {"stacks", NULL, OPT_FLAG, &stacks_val, NULL, 0, 0, "take stacks", NULL},
    {"no-stacks", "T_NO_STACKS", OPT_FLAG_OFF, &stacks_val, NULL, 0, 0, "do not", NULL},
};
#define N3 (sizeof(opts3) / sizeof(opts3[0]))
static bool given3[N3];
static const struct opt_table table3 = {"prog", opts3, N3, given3, NULL, 0, "usage: prog\n\n",
                                        NULL,   NULL};

static void test_flag_off(void **state)
{
	char *text = NULL;
	size_t len = 0;

	setup(state);
	unsetenv("T_NO_STACKS");
	stacks_val = true; /* no default: the caller's value stays */
	assert_int_equal(parse_with(&table3, (const char *[]){NULL}), 0);
	assert_true(stacks_val);
	assert_false(given3[0] || given3[1]);
	assert_int_equal(parse_with(&table3, (const char *[]){"--no-stacks", NULL}), 0);
	assert_false(stacks_val);
	assert_true(given3[1]);
	/* the last one given wins, either way round */
	assert_int_equal(parse_with(&table3, (const char *[]){"--no-stacks", "--stacks", NULL}), 0);
	assert_true(stacks_val);
	assert_int_equal(parse_with(&table3, (const char *[]){"--stacks", "--no-stacks", NULL}), 0);
	assert_false(stacks_val);
	assert_true(given3[0] && given3[1]);
	/* its variable: 1 is the flag, 0 not; a flag wins over it */
	stacks_val = true;
	setenv("T_NO_STACKS", "1", 1);
	assert_int_equal(parse_with(&table3, (const char *[]){NULL}), 0);
	assert_false(stacks_val);
	assert_int_equal(parse_with(&table3, (const char *[]){"--stacks", NULL}), 0);
	assert_true(stacks_val);
	setenv("T_NO_STACKS", "0", 1);
	assert_int_equal(parse_with(&table3, (const char *[]){NULL}), 0);
	assert_true(stacks_val);
	setenv("T_NO_STACKS", "yes", 1);
	assert_int_equal(parse_with(&table3, (const char *[]){NULL}), -1);
	assert_non_null(strstr(err, "prog: $T_NO_STACKS: 'yes' is not 1 or 0"));
	unsetenv("T_NO_STACKS");
	/* it takes no value */
	assert_int_equal(parse_with(&table3, (const char *[]){"--no-stacks=1", NULL}), -1);
	assert_non_null(strstr(err, "see prog --help"));
	FILE *f = open_memstream(&text, &len);
	opts_usage(&table3, f);
	fclose(f);
	assert_non_null(strstr(text, "  --no-stacks              do not\n"
	                             "                           [$T_NO_STACKS=1]\n"));
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_defaults),    cmocka_unit_test(test_precedence),
	    cmocka_unit_test(test_bad),         cmocka_unit_test(test_commands),
	    cmocka_unit_test(test_usage),       cmocka_unit_test(test_operands),
	    cmocka_unit_test(test_list),        cmocka_unit_test(test_given),
	    cmocka_unit_test(test_usage_short), cmocka_unit_test(test_flag_off),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
