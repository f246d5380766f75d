-- 018: rounds planned from the machine's own noise.  Each agent
-- runs its suite A/A (the same lockbench both sides, a few paired rounds)
-- and posts, per suite point, the spread of the per-round paired relative
-- change (POST /api/v1/noise); the latest figure of a machine class is kept
-- per point.  At claim the server plans the job's rounds from it
-- (server/plan.c): jobs.plan says what it planned and which rows this
-- machine cannot resolve within their margin, jobs.max_rounds is the job's
-- own limit (NULL: --max-rounds).
CREATE TABLE IF NOT EXISTS noise_profiles (
	machine_class  text NOT NULL,
	suite          text NOT NULL,
	workload       text NOT NULL,
	lock           text NOT NULL,
	params_key     text NOT NULL,
	metric         text NOT NULL,
	users          bigint NOT NULL DEFAULT -1,
	sd             float8 NOT NULL CHECK (sd >= 0),
	rounds         int NOT NULL CHECK (rounds >= 2),
	round_seconds  float8 NOT NULL CHECK (round_seconds >= 0),
	agent_id       bigint REFERENCES agents (id) ON DELETE SET NULL,
	measured       timestamptz NOT NULL DEFAULT now(),
	PRIMARY KEY (machine_class, suite, workload, lock, params_key, metric)
);
ALTER TABLE jobs ADD COLUMN IF NOT EXISTS plan jsonb;
ALTER TABLE jobs ADD COLUMN IF NOT EXISTS max_rounds int;
