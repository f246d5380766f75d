/*
 * report_internal.h - shared by the report's files only; the public
 * interface is report.h.
 *
 * report_grid.c holds the grid of cells and the formatting helpers every
 * layout uses, report_legend.c the legends, notes and lockup sentences,
 * report_aim7.c the AIM7 layout, report.c the other layouts and the entry
 * points.  Each function's full contract is the comment above its
 * definition.  Nothing here keeps a pointer past the call.
 */
#ifndef LOCKLAB_REPORT_INTERNAL_H
#define LOCKLAB_REPORT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "compare.h"

/* ---- report_grid.c ---- */

/* A table of strings: cells[row * ncols + col], built before widths are known. */
struct grid {
	size_t ncols;
	size_t nrows;
	char **cells;
};

void grid_init(struct grid *g, size_t ncols);
size_t grid_add_row(struct grid *g);
void grid_set(struct grid *g, size_t row, size_t col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
const char *grid_get(const struct grid *g, size_t row, size_t col);
size_t grid_width(const struct grid *g, size_t col, size_t min);
void grid_release(struct grid *g);
void rep_pad(FILE *out, size_t n);
void rep_put_left(FILE *out, const char *s, size_t w);
void rep_put_right(FILE *out, const char *s, size_t w);
void rep_put_repeat(FILE *out, char c, size_t n);
void rep_fmt_aim7_value(double v, const char *unit, char *buf, size_t len);
void rep_fmt_plain(double v, char *buf, size_t len);
void rep_fmt_perf(double v, char *buf, size_t len);
bool rep_lockup_only(const struct compare_row *r);
bool rep_same_point(const struct compare_row *a, const struct compare_row *b);
bool rep_same_table(const struct compare_row *a, const struct compare_row *b);
const char *rep_users_word(const struct compare_row *r);
void rep_title(FILE *out, const struct compare_row *r);
int rep_finish(FILE *out);
void rep_put_fail_runs(FILE *out, int base_fail, int base_runs, int patched_fail, int patched_runs);

/* ---- report_legend.c ---- */

void rep_fmt_margin(const struct compare_row *r, char *buf, size_t len);
const char *rep_row_instrument(const struct compare_row *r);
void rep_legend(FILE *out, const struct comparison *c);
bool rep_point_seen_before(const struct comparison *c, size_t i);
void rep_put_splats(FILE *out, const struct comparison *c);
void rep_put_sentences(FILE *out, const struct comparison *c);

/* ---- report_aim7.c ---- */

size_t rep_table_starts(const struct comparison *c, size_t *starts);
size_t rep_table_end(const struct comparison *c, size_t from);
int rep_render_aim7(const struct comparison *c, FILE *out);

#endif
