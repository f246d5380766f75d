-- 028: the patch mails of a series that were not tested, kept with its
-- submission and shown beside its patches: a part past the numbering
-- ("3/2" in a series of 2) and the earlier copy of a part sent again while
-- the series was open (the later copy is the tested patch, with the same
-- seq in patches).  The mail as sent is kept, as patches.raw is.
CREATE TABLE set_aside (
	id             bigserial PRIMARY KEY,
	submission_id  bigint NOT NULL REFERENCES submissions (id) ON DELETE CASCADE,
	seq            int NOT NULL,
	total          int NOT NULL,
	why            text NOT NULL CHECK (why IN ('past-numbering', 'replaced')),
	message_id     text,
	author         text NOT NULL DEFAULT '',
	subject        text NOT NULL DEFAULT '',
	date           text,
	diff           text NOT NULL DEFAULT '',
	raw            bytea
);
CREATE INDEX set_aside_submission ON set_aside (submission_id);
