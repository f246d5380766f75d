/*
 * result_internal.h - what result_json.c (writing) and result_parse.c
 * (strict reading) of the lockbench-result/1 document share: the disturbance
 * fields by their JSON names and the validator's caps.  Not for other files.
 */
#ifndef LOCKLAB_RESULT_INTERNAL_H
#define LOCKLAB_RESULT_INTERNAL_H

#include <stddef.h>

#include "result.h"

/* The fields of struct lb_disturb, in the JSON's names. */
static const struct {
	const char *name;
	size_t off;
	double max;
} disturb_fields[] = {
    {"steal_pct", offsetof(struct lb_disturb, steal_pct), 100},
    {"delay_pct", offsetof(struct lb_disturb, delay_pct), 100},
    {"lost_pct", offsetof(struct lb_disturb, lost_pct), 100},
    {"nivcsw", offsetof(struct lb_disturb, nivcsw), 1e9},
    {"migrations", offsetof(struct lb_disturb, migrations), 1e9},
};
#define NDISTURB_FIELDS (sizeof(disturb_fields) / sizeof(disturb_fields[0]))
/* Caps of the validator: repetitions per metric, entries per metric. */
#define DISTURB_REPEATED_MAX 100000
#define DISTURB_ENTRIES_MAX  100000

static inline double *disturb_field(struct lb_disturb *d, size_t field)
{
	return (double *)((char *)d + disturb_fields[field].off);
}

#endif
