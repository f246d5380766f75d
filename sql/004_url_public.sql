-- 004_url_public.sql - a URL as anyone may see it.  Submitted URLs with credentials are
-- refused since this version (server/url.h); rows stored before may hold
-- some, so public views show every stored URL through url_public(), which
-- drops the userinfo ("https://user:secret@host/x" -> "https://host/x").
-- Agents still get the stored URL of the job they claimed.
CREATE FUNCTION url_public(u text) RETURNS text
	LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
	AS $$ SELECT regexp_replace(u, '^([A-Za-z][A-Za-z0-9+.-]*://)[^/?#]*@', '\1') $$;
