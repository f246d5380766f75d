/*
 * args.h - option values: integers, lists (args.c), and a command's table
 * of options read with lib/options.h.
 */
#ifndef LOCKBENCH_ARGS_H
#define LOCKBENCH_ARGS_H

#include <stddef.h>

struct opt_table;

/* The largest thread count --threads (and --writers) accept. */
#define LB_THREADS_MAX 4096

/*
 * Split "a,b,c" into a new NULL-terminated array of new strings (free with
 * lb_free_list), the count in *n.  An empty list or an empty element ("a,,b",
 * a leading or trailing comma) is refused: NULL with a reason in err.
 */
char **lb_split_list(const char *s, const char *what, int *n, char *err, size_t errlen);
void lb_free_list(char **v);

/*
 * Parse "1,2,4,8" into a new array of ints from min to max (caller frees).
 * Returns the count, or -1 with a reason in err.
 */
int lb_parse_int_list(const char *s, long long min, long long max, int **out, const char *what,
                      char *err, size_t errlen);

/*
 * Parse a non-negative integer option value; returns 0 or -1 with a reason.
 * min/max bound the value.
 */
int lb_parse_int(const char *s, long long min, long long max, long long *out, const char *what,
                 char *err, size_t errlen);

/*
 * opts_parse (lib/options.h) of a command's argv (argv[0] its name), with
 * t->prog ("lockbench run") in argv[0] meanwhile: what it says of an
 * unknown option or a missing value starts with argv[0].  Returns what
 * opts_parse returns; argv[0] is the command's name again after it.
 */
int lb_opts_parse(const struct opt_table *t, int argc, char **argv);

#endif
