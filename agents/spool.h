/*
 * spool.h - documents the server has not taken yet, one file each in the
 * agent's spool folder; delivered later by spool_flush.
 */
#ifndef LOCKLAB_AGENT_SPOOL_H
#define LOCKLAB_AGENT_SPOOL_H

#include "api.h"

/* Keep doc for job under its idempotency key; 0 or -1 (logged). */
int spool_put(const char *spool_dir, long long job_id, const char *key, const char *doc);
/*
 * Post what is kept, through api; a document the server refuses (4xx) moves
 * to spool_dir/rejected.  Returns how many documents are still waiting.
 */
int spool_flush(const char *spool_dir, struct api *api);

#endif
