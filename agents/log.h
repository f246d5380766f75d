/*
 * log.h - the agent's log: one line per event on stderr,
 * "TIME level=L [job=N] msg=\"...\"".
 */
#ifndef LOCKLAB_AGENT_LOG_H
#define LOCKLAB_AGENT_LOG_H

/* job <= 0: not about a job. */
void agent_log(const char *level, long long job, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
