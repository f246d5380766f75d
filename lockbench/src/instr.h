/*
 * instr.h - the exact instrument beside the timed one: instructions per
 * uncontended lock/unlock pair, counted under valgrind's callgrind.
 *
 * Time on a shared machine moves by several percent from one run to the
 * next; an instruction count does not: the same binary gives the same count,
 * so any change beyond a small tolerance is the code's.  The count is its own
 * metric (instructions_per_pair, unit "instructions"), never a substitute
 * for ns_per_pair: fewer instructions can still be slower.
 *
 * lockbench runs itself ("lockbench instr-count") under
 *   valgrind --tool=callgrind --collect-atstart=no
 * once for all the locks of a run; for each lock a second thread (as the
 * uncontended workload uses, so glibc has left its single-threaded path)
 * warms up, then counts INSTR_PAIRS pairs between callgrind client requests
 * and dumps the count under the lock's name.  The figure includes the
 * loop's own few instructions (an increment, a compare, two indirect calls).
 */
#ifndef LOCKBENCH_INSTR_H
#define LOCKBENCH_INSTR_H

#include <stddef.h>

#include "lock.h"

#define INSTR_PAIRS 20000

/*
 * Count instructions per pair for each of the n locks into per_pair[i].
 * Returns 0 when counted; 1 when the instrument is not here (no valgrind,
 * or lockbench built without valgrind's callgrind.h): why says so and
 * nothing is counted; -1 when valgrind ran and failed (why has the reason).
 * The program run is LOCKBENCH_VALGRIND when set, else "valgrind" on PATH.
 */
int instr_count_locks(const struct lock_ops *const *locks, size_t n, double *per_pair, char *why,
                      size_t whylen);

/* The child under valgrind: `lockbench instr-count LOCK...`.  An exit status. */
int instr_child_main(int argc, char **argv);

#endif
