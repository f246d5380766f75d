-- 027: what a running job's agent is doing, as its last heartbeat said
-- ("building the base kernel (not cached): 812 objects compiled, 4 min"),
-- and when it said it; shown while the job runs.
ALTER TABLE jobs ADD COLUMN activity text, ADD COLUMN activity_at timestamptz;
