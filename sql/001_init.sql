-- 001_init.sql - the whole locklab schema, first version.
-- Applied by locklab-server at start inside one transaction holding an
-- advisory lock (see server/db.c); recorded in schema_migrations.
-- Every user-supplied string is stored verbatim (text columns, no trimming).

CREATE TABLE trees (
	id          bigserial PRIMARY KEY,
	name        text NOT NULL UNIQUE,
	url         text NOT NULL,
	branch      text NOT NULL DEFAULT 'master',
	kind        text NOT NULL DEFAULT 'native' CHECK (kind IN ('native', 'kernel')),
	created     timestamptz NOT NULL DEFAULT now()
);

-- Agents and submitters: only the SHA-256 of a token is kept.
CREATE TABLE agents (
	id            bigserial PRIMARY KEY,
	name          text NOT NULL DEFAULT '',
	role          text NOT NULL DEFAULT 'agent' CHECK (role IN ('agent', 'submitter')),
	machine_class text NOT NULL DEFAULT 'default',
	token_hash    text NOT NULL UNIQUE,
	created       timestamptz NOT NULL DEFAULT now(),
	last_seen     timestamptz
);

CREATE TABLE submissions (
	id               bigserial PRIMARY KEY,
	state            text NOT NULL DEFAULT 'queued'
	                 CHECK (state IN ('queued', 'running', 'done', 'failed')),
	source           text NOT NULL CHECK (source IN ('url', 'mbox', 'git')),
	url              text,
	git_url          text,
	git_ref          text,
	git_base         text,
	tree_id          bigint REFERENCES trees (id),
	suites           text[] NOT NULL,
	notify           text,
	subject          text NOT NULL DEFAULT '',
	-- Message-ID the reply threads to: the cover letter, else the first patch
	reply_to_msgid   text,
	version          int NOT NULL DEFAULT 1,
	verdict          text CHECK (verdict IN ('regression', 'improvement', 'no-change',
	                                         'inconclusive', 'lockup')),
	reason           text,
	created          timestamptz NOT NULL DEFAULT now(),
	updated          timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX submissions_state ON submissions (state, id);

-- One row per mail of the series; seq 0 is the cover letter.
CREATE TABLE patches (
	id             bigserial PRIMARY KEY,
	submission_id  bigint NOT NULL REFERENCES submissions (id) ON DELETE CASCADE,
	seq            int NOT NULL,
	total          int NOT NULL,
	is_cover       boolean NOT NULL DEFAULT false,
	message_id     text,
	in_reply_to    text,
	author         text NOT NULL DEFAULT '',
	subject        text NOT NULL DEFAULT '',
	date           text,
	body           text NOT NULL DEFAULT '',
	diff           text NOT NULL DEFAULT '',
	UNIQUE (submission_id, seq)
);

-- One job per (submission, suite, machine class).  rounds_wanted grows when
-- an inconclusive comparison asks for more rounds (docs/api.md).
CREATE TABLE jobs (
	id             bigserial PRIMARY KEY,
	submission_id  bigint NOT NULL REFERENCES submissions (id) ON DELETE CASCADE,
	suite          text NOT NULL,
	machine_class  text NOT NULL DEFAULT 'default',
	state          text NOT NULL DEFAULT 'queued'
	               CHECK (state IN ('queued', 'running', 'done', 'failed')),
	rounds_wanted  int NOT NULL,
	claimed_by     bigint REFERENCES agents (id),
	lease_expires  timestamptz,
	attempts       int NOT NULL DEFAULT 0,
	reason         text,
	verdict        text,
	created        timestamptz NOT NULL DEFAULT now(),
	queued_at      timestamptz NOT NULL DEFAULT now(),
	updated        timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX jobs_queue ON jobs (machine_class, id) WHERE state = 'queued';
CREATE INDEX jobs_lease ON jobs (lease_expires) WHERE state = 'running';
CREATE INDEX jobs_submission ON jobs (submission_id);

-- One lockbench-result/1 document per (job, variant, round), stored once.
CREATE TABLE results (
	id               bigserial PRIMARY KEY,
	job_id           bigint NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
	agent_id         bigint REFERENCES agents (id),
	idempotency_key  text NOT NULL UNIQUE,
	round            int NOT NULL,
	variant          text NOT NULL,
	document         jsonb NOT NULL,
	received         timestamptz NOT NULL DEFAULT now(),
	UNIQUE (job_id, variant, round)
);

-- The runs and samples of each document, for reading without parsing jsonb.
CREATE TABLE runs (
	result_id   bigint NOT NULL REFERENCES results (id) ON DELETE CASCADE,
	idx         int NOT NULL,
	workload    text NOT NULL,
	lock        text NOT NULL,
	params_key  text NOT NULL,
	locked_up   boolean NOT NULL DEFAULT false,
	PRIMARY KEY (result_id, idx)
);

CREATE TABLE samples (
	result_id      bigint NOT NULL REFERENCES results (id) ON DELETE CASCADE,
	run_idx        int NOT NULL,
	metric         text NOT NULL,
	unit           text NOT NULL,
	higher_better  boolean NOT NULL,
	value          double precision NOT NULL,
	samples        double precision[] NOT NULL,
	PRIMARY KEY (result_id, run_idx, metric)
);

-- The latest comparison of a job (replaced when more rounds arrive).
CREATE TABLE comparisons (
	id              bigserial PRIMARY KEY,
	job_id          bigint NOT NULL UNIQUE REFERENCES jobs (id) ON DELETE CASCADE,
	suite           text NOT NULL,
	machine         jsonb NOT NULL,
	base_rounds     int NOT NULL,
	patched_rounds  int NOT NULL,
	overall         text NOT NULL,
	final           boolean NOT NULL DEFAULT false,
	-- the compare_opts the verdicts were made with
	alpha           double precision NOT NULL,
	min_effect      double precision NOT NULL,
	equiv_margin    double precision NOT NULL,
	min_samples     int NOT NULL,
	created         timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE verdicts (
	comparison_id    bigint NOT NULL REFERENCES comparisons (id) ON DELETE CASCADE,
	idx              int NOT NULL,
	workload         text NOT NULL,
	lock             text NOT NULL,
	metric           text NOT NULL,
	unit             text NOT NULL,
	params_key       text NOT NULL,
	users            bigint NOT NULL,
	higher_better    boolean NOT NULL,
	base_n           int NOT NULL,
	base_mean        double precision NOT NULL,
	base_stddev      double precision NOT NULL,
	base_min         double precision NOT NULL,
	base_max         double precision NOT NULL,
	patched_n        int NOT NULL,
	patched_mean     double precision NOT NULL,
	patched_stddev   double precision NOT NULL,
	patched_min      double precision NOT NULL,
	patched_max      double precision NOT NULL,
	change           double precision NOT NULL,
	p                double precision NOT NULL,
	q                double precision NOT NULL,
	change_lo        double precision NOT NULL,
	change_hi        double precision NOT NULL,
	verdict          text NOT NULL,
	base_lockups     int NOT NULL,
	patched_lockups  int NOT NULL,
	base_runs        int NOT NULL,
	patched_runs     int NOT NULL,
	lockup_message   text,
	lockup_stacks    text,
	tested           boolean NOT NULL,  -- p and q come from a Welch test
	significant      boolean NOT NULL,  -- the "*" of the reports
	PRIMARY KEY (comparison_id, idx)
);

CREATE TABLE lockups (
	id          bigserial PRIMARY KEY,
	job_id      bigint NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
	result_id   bigint NOT NULL REFERENCES results (id) ON DELETE CASCADE,
	variant     text NOT NULL,
	round       int NOT NULL,
	workload    text NOT NULL,
	lock        text NOT NULL,
	params_key  text NOT NULL,
	kind        text NOT NULL,
	message     text NOT NULL,
	stacks      text
);
CREATE INDEX lockups_job ON lockups (job_id);

-- Rendered tables, kept when a submission is finished.
CREATE TABLE reports (
	submission_id  bigint NOT NULL REFERENCES submissions (id) ON DELETE CASCADE,
	format         text NOT NULL,
	body           text NOT NULL,
	created        timestamptz NOT NULL DEFAULT now(),
	PRIMARY KEY (submission_id, format)
);

-- Every reply mail, sent or not.
CREATE TABLE outbox (
	id             bigserial PRIMARY KEY,
	submission_id  bigint NOT NULL REFERENCES submissions (id) ON DELETE CASCADE,
	recipients     text,
	subject        text NOT NULL,
	in_reply_to    text,
	message        text NOT NULL,
	created        timestamptz NOT NULL DEFAULT now(),
	sent           timestamptz
);
