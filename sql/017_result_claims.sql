-- 017: a round's base and patched come from one lease of the job.  Each claim
-- of a job counts (jobs.claims) and the agent puts that number in its
-- idempotency keys, so an agent restarted on the same machine, re-running a
-- round under a new lease, posts new documents instead of colliding with its
-- own earlier keys; results.claim records the lease a document came under,
-- and a half of a round from an earlier lease is discarded when the round is
-- posted again (server/jobs.c).
ALTER TABLE jobs ADD COLUMN IF NOT EXISTS claims int NOT NULL DEFAULT 0;
ALTER TABLE results ADD COLUMN IF NOT EXISTS claim int;
