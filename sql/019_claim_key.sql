-- 019: an idempotent claim.  The agent sends an Idempotency-Key with each
-- claim and sends the same key again when it got no answer (the server died,
-- the connection broke); the server remembers the key on the job it leased
-- (jobs.claim_key), and a claim repeating the key of a job still running under
-- that agent's lease gets the same job and the same lease back (extended), not
-- a second job while the first waits for its lease to run out (server/jobs.c).
-- The unique index keeps two concurrent claims with one key from both leasing.
ALTER TABLE jobs ADD COLUMN IF NOT EXISTS claim_key text;
CREATE UNIQUE INDEX IF NOT EXISTS jobs_claim_key ON jobs (claimed_by, claim_key)
	WHERE state = 'running' AND claim_key IS NOT NULL;
