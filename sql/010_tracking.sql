-- 010_tracking.sql - continuous tracking of branches, change points, alerts
-- and bisection (docs/api.md "Tracking, alerts, bisection").
--
-- A tracked tree (trees.track) is polled by the server's tracker
-- (server/track.c).  Every measurement the tracker asks for is an ordinary
-- git submission (an interleaved A/B of two commits through the job and
-- verdict machinery): track_runs says why it was asked for.  The numbers it
-- brought are kept per commit as track_points, the history the change-point
-- detector (lib/changepoint.c) reads.

ALTER TABLE trees ADD COLUMN track boolean NOT NULL DEFAULT false;
-- the commit history starts at ("since"), and the last head the tracker ran
ALTER TABLE trees ADD COLUMN track_since text;
ALTER TABLE trees ADD COLUMN track_head text;
-- set by POST /api/v1/trees/{id}/poke: look now, not at the next interval
ALTER TABLE trees ADD COLUMN track_poked timestamptz;
ALTER TABLE trees ADD COLUMN track_error text;
ALTER TABLE trees ADD COLUMN track_checked timestamptz;
-- the suites each tracked commit runs
ALTER TABLE trees ADD COLUMN track_suites text[] NOT NULL DEFAULT '{smoke}';

-- Commits of a tracked branch the tracker knows, in first-parent order.
CREATE TABLE track_commits (
	tree_id   bigint NOT NULL REFERENCES trees (id) ON DELETE CASCADE,
	branch    text NOT NULL,
	commit    text NOT NULL,
	seq       int NOT NULL,            -- position on the branch, oldest first
	subject   text NOT NULL DEFAULT '',
	author    text NOT NULL DEFAULT '',
	PRIMARY KEY (tree_id, branch, commit)
);
CREATE INDEX track_commits_seq ON track_commits (tree_id, branch, seq);

-- One A/B submission the tracker asked for: base is the older commit.
--   head     a new head against the previous tracked head (history)
--   confirm  the two commits around a proposed change point
--   bisect   a commit inside an alert's range against its known-good end
CREATE TABLE track_runs (
	id             bigserial PRIMARY KEY,
	tree_id        bigint NOT NULL REFERENCES trees (id) ON DELETE CASCADE,
	branch         text NOT NULL,
	purpose        text NOT NULL CHECK (purpose IN ('head', 'confirm', 'bisect')),
	base_commit    text NOT NULL,
	commit         text NOT NULL,
	submission_id  bigint NOT NULL UNIQUE REFERENCES submissions (id) ON DELETE CASCADE,
	-- set once the submission ended and its numbers were read
	processed      timestamptz,
	created        timestamptz NOT NULL DEFAULT now(),
	-- one measurement per pair of commits: a second ask reuses the first
	UNIQUE (tree_id, branch, base_commit, commit)
);
CREATE INDEX track_runs_open ON track_runs (id) WHERE processed IS NULL;

-- The history: one value per commit and row (machine class, workload, lock,
-- metric, parameter point), the mean over the rounds of the run that
-- measured it (the 'patched' side of a head run, or the base of the first).
CREATE TABLE track_points (
	tree_id        bigint NOT NULL REFERENCES trees (id) ON DELETE CASCADE,
	branch         text NOT NULL,
	commit         text NOT NULL,
	machine_class  text NOT NULL,
	workload       text NOT NULL,
	lock           text NOT NULL,
	metric         text NOT NULL,
	params_key     text NOT NULL,
	higher_better  boolean NOT NULL,
	value          double precision NOT NULL,
	run_id         bigint NOT NULL REFERENCES track_runs (id) ON DELETE CASCADE,
	created        timestamptz NOT NULL DEFAULT now(),
	PRIMARY KEY (tree_id, branch, commit, machine_class, workload, lock, metric, params_key)
);

-- A step in one history series.  good/bad: the range (good, bad] that holds
-- the first bad commit; bisection narrows it.  commit: the named commit once
-- bisected (NULL before, and when the range could not be split: reason).
CREATE TABLE alerts (
	id             bigserial PRIMARY KEY,
	tree_id        bigint NOT NULL REFERENCES trees (id) ON DELETE CASCADE,
	branch         text NOT NULL,
	machine_class  text NOT NULL,
	workload       text NOT NULL,
	lock           text NOT NULL,
	metric         text NOT NULL,
	params_key     text NOT NULL,
	state          text NOT NULL DEFAULT 'new'
	               CHECK (state IN ('new', 'confirmed', 'bisected', 'fixed', 'invalid', 'wontfix')),
	good           text NOT NULL,
	bad            text NOT NULL,
	commit         text,
	subject        text NOT NULL DEFAULT '',
	author         text NOT NULL DEFAULT '',
	change         double precision NOT NULL,   -- relative, of the confirming A/B
	before_mean    double precision,
	after_mean     double precision,
	unit           text NOT NULL DEFAULT '',
	-- the range bisection has narrowed it to: (bisect_good, bisect_bad]
	bisect_good    text NOT NULL,
	bisect_bad     text NOT NULL,
	reason         text,                        -- why bisection stopped short
	confirm_run    bigint REFERENCES track_runs (id),
	fixed_by       text,                        -- the commit whose step reversed it
	state_by       text NOT NULL DEFAULT 'tracker',
	state_at       timestamptz NOT NULL DEFAULT now(),
	created        timestamptz NOT NULL DEFAULT now(),
	-- one alert per step of a series
	UNIQUE (tree_id, branch, machine_class, workload, lock, metric, params_key, good, bad)
);
CREATE INDEX alerts_state ON alerts (state, id);

-- A step the change-point detector proposed, waiting for (or judged by)
-- the A/B run of its two commits.  Only a confirmed one opens an alert
-- (a regression) or closes one as fixed (an improvement after it).
CREATE TABLE track_candidates (
	id             bigserial PRIMARY KEY,
	tree_id        bigint NOT NULL REFERENCES trees (id) ON DELETE CASCADE,
	branch         text NOT NULL,
	machine_class  text NOT NULL,
	workload       text NOT NULL,
	lock           text NOT NULL,
	metric         text NOT NULL,
	params_key     text NOT NULL,
	good           text NOT NULL,
	bad            text NOT NULL,
	expect         text NOT NULL CHECK (expect IN ('regression', 'improvement')),
	change         double precision NOT NULL,   -- of the medians, from the history
	p              double precision NOT NULL,
	run_id         bigint NOT NULL REFERENCES track_runs (id) ON DELETE CASCADE,
	outcome        text,                        -- the A/B row's verdict, NULL while it runs
	created        timestamptz NOT NULL DEFAULT now(),
	UNIQUE (tree_id, branch, machine_class, workload, lock, metric, params_key, good, bad)
);

-- Every state an alert went through, with who and when.
CREATE TABLE alert_events (
	alert_id  bigint NOT NULL REFERENCES alerts (id) ON DELETE CASCADE,
	state     text NOT NULL,
	who       text NOT NULL,
	at        timestamptz NOT NULL DEFAULT now(),
	note      text
);
CREATE INDEX alert_events_alert ON alert_events (alert_id, at);

-- Bisection: one row per commit tested for an alert (counted once however
-- often its job was claimed).  verdict: the row's verdict against the good
-- end, 'skip' when the commit did not build, NULL while it runs.
CREATE TABLE bisect_steps (
	alert_id   bigint NOT NULL REFERENCES alerts (id) ON DELETE CASCADE,
	commit     text NOT NULL,
	good       text NOT NULL,
	run_id     bigint NOT NULL REFERENCES track_runs (id) ON DELETE CASCADE,
	verdict    text,
	change     double precision,
	created    timestamptz NOT NULL DEFAULT now(),
	PRIMARY KEY (alert_id, commit)
);
