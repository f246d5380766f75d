-- 006_mail_in.sql - mail in: the messages as the list sent them,
-- what a reply needs to thread and reach people, and the intake's state.
--
-- patches.raw: the message as it was sent (headers and body, after mbox
-- unquoting), NULL for rows stored before 006.  The agent gives exactly
-- these bytes to `git am` (the job's "mails"), so git's mailinfo reads the
-- patch as the list sent it, not a copy rebuilt from the stored fields.
--
-- On submissions, from the cover letter (else the single or first patch),
-- for replies; NULL when the submission has no mail or the mail had none:
--   mail_references  its References header, "<a> <b> ..." (a reply's
--                    References is this followed by reply_to_msgid)
--   mail_cc          its Cc: as a decoded address list (the reviewers)
--   mail_list        the list's address: List-Post's mailto:, else the first To:
--   mail_series      the series' name across versions: author address and
--                    title of the cover (else patch 1), lower case
--   previous_id      the older version of the same series (by mail_series),
--                    the newest one stored before this one
ALTER TABLE patches ADD COLUMN raw bytea;
ALTER TABLE submissions
	ADD COLUMN mail_references text,
	ADD COLUMN mail_cc text,
	ADD COLUMN mail_list text,
	ADD COLUMN mail_series text,
	ADD COLUMN previous_id bigint REFERENCES submissions (id) ON DELETE SET NULL;
CREATE INDEX submissions_mail_series ON submissions (mail_series, version) WHERE mail_series IS NOT NULL;

-- 'mail': taken by the intake from a Maildir or an IMAP mailbox
ALTER TABLE submissions DROP CONSTRAINT submissions_source_check;
ALTER TABLE submissions ADD CONSTRAINT submissions_source_check
	CHECK (source IN ('url', 'mbox', 'git', 'mail'));

-- The intake (server/intake.c).  Every patch mail it took, by Message-ID:
-- the same mail delivered again is nothing new.  pending: waiting for the
-- rest of its series (every poll groups the pending mails by thread and
-- version again); submitted (submission_id); given-up (reason says which
-- parts were missing).
CREATE TABLE mail_messages (
	message_id     text PRIMARY KEY,
	source         text NOT NULL,
	raw            bytea NOT NULL,
	arrived        timestamptz NOT NULL DEFAULT now(),
	state          text NOT NULL DEFAULT 'pending'
	               CHECK (state IN ('pending', 'submitted', 'given-up')),
	reason         text,
	submission_id  bigint REFERENCES submissions (id) ON DELETE SET NULL
);
CREATE INDEX mail_messages_pending ON mail_messages (arrived) WHERE state = 'pending';

-- What an IMAP source has seen: the mailbox's UIDVALIDITY and the highest
-- UID taken; a new UIDVALIDITY starts again from UID 1 (Message-IDs keep
-- that from submitting twice).
CREATE TABLE mail_seen (
	source       text PRIMARY KEY,
	uidvalidity  bigint NOT NULL,
	uid          bigint NOT NULL
);
