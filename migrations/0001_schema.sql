-- The schema for the whole QuoteVault contract. Table names follow the app's original Supabase schema
-- (quotes, profiles, user_favorites, collections, collection_quotes, quote_of_day) so that plain-SQL tools
-- and the Supabase-compatible surface see the same shapes. Rules that must hold under concurrency live here
-- as constraints, not in application code.

CREATE EXTENSION IF NOT EXISTS pg_trgm;

-- Accounts ------------------------------------------------------------------------------------------------

CREATE TABLE users (
    id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    -- Stored trimmed and lower-cased; the unique constraint decides concurrent sign-ups.
    email         text NOT NULL CONSTRAINT users_email_key UNIQUE
                  CONSTRAINT users_email_normalised CHECK (email = lower(btrim(email)) AND email <> ''),
    -- PHC string ($scrypt$ln=..,r=..,p=..$salt$hash); never the password.
    password_hash text NOT NULL CHECK (password_hash LIKE '$%'),
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now()
);

-- One row per user: what the app shows and syncs.
CREATE TABLE profiles (
    id           uuid PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    display_name text CHECK (char_length(display_name) <= 100),
    -- Only the five known preference keys, validated by the service; absent keys mean the default.
    preferences  jsonb NOT NULL DEFAULT '{}'::jsonb CHECK (jsonb_typeof(preferences) = 'object'),
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE avatars (
    user_id      uuid PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    content_type text NOT NULL CHECK (content_type IN ('image/png', 'image/jpeg')),
    bytes        bytea NOT NULL CHECK (octet_length(bytes) BETWEEN 1 AND 2097152),
    -- Hex SHA-256 of the bytes: the ETag, and the cache-busting `v` of avatar_url.
    etag         text NOT NULL,
    updated_at   timestamptz NOT NULL DEFAULT now()
);

-- A login: its refresh tokens rotate, and revoking it kills its access tokens at once.
CREATE TABLE sessions (
    id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id      uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at   timestamptz NOT NULL DEFAULT now(),
    refreshed_at timestamptz NOT NULL DEFAULT now(),
    expires_at   timestamptz NOT NULL,
    revoked_at   timestamptz
);
CREATE INDEX sessions_user_id_idx ON sessions (user_id);

-- Every refresh token ever issued (by SHA-256 hash): a rotated one presented again means theft.
CREATE TABLE refresh_tokens (
    token_hash text PRIMARY KEY,
    session_id uuid NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT now(),
    rotated_at timestamptz
);
CREATE INDEX refresh_tokens_session_id_idx ON refresh_tokens (session_id);
-- At most one live token per session.
CREATE UNIQUE INDEX refresh_tokens_one_live_per_session ON refresh_tokens (session_id) WHERE rotated_at IS NULL;

CREATE TABLE password_reset_tokens (
    token_hash text PRIMARY KEY,
    user_id    uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL,
    used_at    timestamptz
);
CREATE INDEX password_reset_tokens_user_id_idx ON password_reset_tokens (user_id);

-- Mail written in the same transaction as what caused it, delivered (and retried) afterwards.
CREATE TABLE mail_outbox (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    recipient       text NOT NULL,
    subject         text NOT NULL,
    body            text NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    attempts        integer NOT NULL DEFAULT 0,
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    last_error      text,
    sent_at         timestamptz
);
CREATE INDEX mail_outbox_pending_idx ON mail_outbox (next_attempt_at) WHERE sent_at IS NULL;

-- Throttling events, shared by every server instance. Old rows are pruned.
CREATE TABLE auth_events (
    id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    kind           text NOT NULL CHECK (kind IN ('login_failed', 'reset_requested')),
    email          text,
    client_address text,
    created_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX auth_events_email_idx ON auth_events (kind, email, created_at);
CREATE INDEX auth_events_address_idx ON auth_events (kind, client_address, created_at);

-- Quotes --------------------------------------------------------------------------------------------------

-- The app's original shape: quotes(id, text, author, category, created_at).
CREATE TABLE quotes (
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    text       text NOT NULL CHECK (btrim(text) <> ''),
    author     text NOT NULL CHECK (btrim(author) <> ''),
    category   text NOT NULL CHECK (category IN ('motivation', 'love', 'success', 'wisdom', 'humor')),
    created_at timestamptz NOT NULL DEFAULT now()
);
-- The same words by the same author are one quote, however they are cased.
CREATE UNIQUE INDEX quotes_text_author_key ON quotes (md5(lower(text)), lower(author));
-- Newest first, overall and per category, with `id` as the tie-breaker of the keyset cursor.
CREATE INDEX quotes_newest_idx ON quotes (created_at DESC, id DESC);
CREATE INDEX quotes_category_newest_idx ON quotes (category, created_at DESC, id DESC);

-- One quote per date, chosen once and kept forever; the primary key makes concurrent first choices agree.
CREATE TABLE quote_of_day (
    date       date PRIMARY KEY,
    quote_id   uuid NOT NULL REFERENCES quotes (id),
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX quote_of_day_quote_id_idx ON quote_of_day (quote_id);

-- Each user's library --------------------------------------------------------------------------------------

CREATE TABLE user_favorites (
    user_id    uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    quote_id   uuid NOT NULL REFERENCES quotes (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT user_favorites_pkey PRIMARY KEY (user_id, quote_id)
);
CREATE INDEX user_favorites_newest_idx ON user_favorites (user_id, created_at DESC, quote_id);
CREATE INDEX user_favorites_quote_id_idx ON user_favorites (quote_id);

CREATE TABLE collections (
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id    uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    -- Trimmed by the service (Unicode whitespace too); the check keeps the rule in the data as well.
    name       text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 100),
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX collections_user_newest_idx ON collections (user_id, created_at DESC, id DESC);

CREATE TABLE collection_quotes (
    collection_id uuid NOT NULL REFERENCES collections (id) ON DELETE CASCADE,
    quote_id      uuid NOT NULL REFERENCES quotes (id) ON DELETE CASCADE,
    added_at      timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT collection_quotes_pkey PRIMARY KEY (collection_id, quote_id)
);
CREATE INDEX collection_quotes_newest_idx ON collection_quotes (collection_id, added_at DESC, quote_id);
CREATE INDEX collection_quotes_quote_id_idx ON collection_quotes (quote_id);
