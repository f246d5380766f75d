-- 009: how each verdict row was measured:
-- runs that gave the metric, those measured as duets (base and patched at
-- once, each on its own half of the CPUs), those with a disturbance record,
-- the samples taken again for disturbance and the limit that decided it.
-- Reports print them in the legend; rows stored before this read as 0.
ALTER TABLE verdicts
	ADD COLUMN measured_runs int NOT NULL DEFAULT 0,
	ADD COLUMN duet_runs int NOT NULL DEFAULT 0,
	ADD COLUMN disturb_runs int NOT NULL DEFAULT 0,
	ADD COLUMN repeated int NOT NULL DEFAULT 0,
	ADD COLUMN disturb_limit_pct float8 NOT NULL DEFAULT 0;
