-- 011_mail_trailers.sql - trailers given on the list: the
-- Reviewed-by:, Acked-by: and Tested-by: lines of replies to a series'
-- mails, as the intake reads them (server/intake.c).
--
-- One row per trailer line of one reply.  target is the Message-ID the
-- reply answers (its In-Reply-To): a submission's trailers are the rows
-- whose target is one of its patches' message_id (seq 0, the cover letter:
-- the whole series).  Kept whether locklab has that mail yet or not (a
-- series may come after its reviews, by mail or by URL); the intake drops
-- the rows whose mail never came after trailer_days (docs/mail.md).  The
-- same reply read again adds nothing.
CREATE TABLE mail_trailers (
	reply_id  text NOT NULL,
	target    text NOT NULL,
	kind      text NOT NULL CHECK (kind IN ('Reviewed-by', 'Acked-by', 'Tested-by')),
	who       text NOT NULL,
	sender    text NOT NULL DEFAULT '',
	source    text NOT NULL,
	received  timestamptz NOT NULL DEFAULT now(),
	PRIMARY KEY (reply_id, kind, who)
);
CREATE INDEX mail_trailers_target ON mail_trailers (target);
CREATE INDEX patches_message_id ON patches (message_id) WHERE message_id IS NOT NULL;
