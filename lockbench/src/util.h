/*
 * util.h - the small helpers most lockbench files use, by subject:
 * clock.h, futexwait.h, args.h, cpus.h, paths.h.  A file that needs one
 * subject includes its header alone.
 */
#ifndef LOCKBENCH_UTIL_H
#define LOCKBENCH_UTIL_H

#include "args.h"
#include "clock.h"
#include "cpus.h"
#include "futexwait.h"
#include "paths.h"

#endif
