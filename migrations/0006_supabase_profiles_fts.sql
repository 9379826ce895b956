-- What the app's own Supabase client needs (issue 15).

-- profiles.avatar_url, as the app's schema has it: set to the avatar's /v1 path whenever an avatar is stored
-- (through /v1 or storage), writable by its owner through /rest/v1, shown by /v1/me.
ALTER TABLE profiles ADD COLUMN avatar_url text CONSTRAINT profiles_avatar_url_length CHECK (char_length(avatar_url) <= 2048);
UPDATE profiles p SET avatar_url = '/v1/avatars/' || p.id::text || '?v=' || a.etag FROM avatars a WHERE a.user_id = p.id;

-- The max-age a storage upload asked for (its cacheControl); NULL serves the default.
ALTER TABLE avatars ADD COLUMN cache_max_age integer CONSTRAINT avatars_cache_max_age_range CHECK (cache_max_age BETWEEN 0 AND 31536000);

-- Full-text filters of /rest/v1 (fts, plfts, phfts, wfts) on quotes.text and quotes.author, in the two configurations
-- they accept: expression indexes, so that a text search never scans the table.
CREATE INDEX quotes_text_fts_english_idx ON quotes USING gin (to_tsvector('english'::regconfig, text));
CREATE INDEX quotes_author_fts_english_idx ON quotes USING gin (to_tsvector('english'::regconfig, author));
CREATE INDEX quotes_text_fts_simple_idx ON quotes USING gin (to_tsvector('simple'::regconfig, text));
CREATE INDEX quotes_author_fts_simple_idx ON quotes USING gin (to_tsvector('simple'::regconfig, author));

-- PKCE flow states of password recovery through /auth/v1 (GoTrue's flow_state): the code challenge a client sent
-- with its recovery request, then the one-use authorization code its mail's link was exchanged for.
CREATE TABLE recovery_flows (
    reset_token_hash text PRIMARY KEY REFERENCES password_reset_tokens (token_hash) ON DELETE CASCADE,
    user_id          uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    code_challenge   text NOT NULL CHECK (char_length(code_challenge) BETWEEN 43 AND 128),
    -- SHA-256 (hex) of the authorization code, once the mail's link was followed.
    auth_code_hash   text UNIQUE,
    code_issued_at   timestamptz,
    used_at          timestamptz
);
CREATE INDEX recovery_flows_user_id_idx ON recovery_flows (user_id);
