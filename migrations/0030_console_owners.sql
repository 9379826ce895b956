-- The owners' console (/console): the people who run the service, not app users. Owners sign in with a one-time
-- link printed by `quote-server owner add`, optionally confirmed by a TOTP code; every action they take is audited.
CREATE TABLE console_owners (
    id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    email          text NOT NULL CHECK (char_length(email) BETWEEN 3 AND 254),
    created_at     timestamptz NOT NULL DEFAULT now(),
    -- RFC 6238 shared secret once the second factor is enrolled; the last time step accepted (a code is used once).
    totp_secret    bytea,
    totp_last_step bigint
);
CREATE UNIQUE INDEX console_owners_email_key ON console_owners (lower(email));

-- One-time sign-in links, kept by hash (SHA-256 of the token), short-lived, spent by the first sign-in.
CREATE TABLE console_sign_in_tokens (
    token_hash text PRIMARY KEY,
    owner_id   uuid NOT NULL REFERENCES console_owners (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL,
    used_at    timestamptz
);
CREATE INDEX console_sign_in_tokens_owner_idx ON console_sign_in_tokens (owner_id);

-- Cookie sessions, kept by hash; a session ends when idle too long or past its absolute expiry.
CREATE TABLE console_sessions (
    id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    owner_id     uuid NOT NULL REFERENCES console_owners (id) ON DELETE CASCADE,
    token_hash   text NOT NULL UNIQUE,
    created_at   timestamptz NOT NULL DEFAULT now(),
    last_seen_at timestamptz NOT NULL DEFAULT now(),
    expires_at   timestamptz NOT NULL,
    revoked_at   timestamptz
);
CREATE INDEX console_sessions_owner_idx ON console_sessions (owner_id);

-- Failed sign-in attempts, for the throttle (the same scheme as auth_events, kept apart from the app's).
CREATE TABLE console_sign_in_failures (
    id             bigserial PRIMARY KEY,
    key            text NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX console_sign_in_failures_key_idx ON console_sign_in_failures (key, created_at);

-- Every owner action: who, when, what, on what, before and after. Written in the transaction of the change.
CREATE TABLE console_audit (
    id          bigserial PRIMARY KEY,
    owner_id    uuid REFERENCES console_owners (id) ON DELETE SET NULL,
    owner_email text NOT NULL,
    at          timestamptz NOT NULL DEFAULT now(),
    action      text NOT NULL,
    target      text NOT NULL DEFAULT '',
    before      jsonb,
    after       jsonb,
    search_text text GENERATED ALWAYS AS (
        lower(owner_email || ' ' || action || ' ' || target || ' ' || coalesce(before::text, '') || ' '
              || coalesce(after::text, ''))) STORED
);
CREATE INDEX console_audit_at_idx ON console_audit (at DESC, id DESC);
CREATE INDEX console_audit_owner_idx ON console_audit (lower(owner_email), at DESC);
CREATE INDEX console_audit_action_idx ON console_audit (action, at DESC);
CREATE INDEX console_audit_search_idx ON console_audit USING gin (search_text gin_trgm_ops);

-- An uploaded quotes file between its preview and its import: every row with its verdict, then the progress.
CREATE TABLE console_imports (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    owner_id    uuid REFERENCES console_owners (id) ON DELETE CASCADE,
    file_name   text NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    -- [{line, text, author, category, error}] in file order; error is null for a row that will be imported.
    rows        jsonb NOT NULL,
    total       integer NOT NULL,
    valid       integer NOT NULL,
    state       text NOT NULL DEFAULT 'preview' CHECK (state IN ('preview', 'importing', 'done', 'failed')),
    processed   integer NOT NULL DEFAULT 0,
    inserted    integer NOT NULL DEFAULT 0,
    duplicates  integer NOT NULL DEFAULT 0,
    updated_at  timestamptz NOT NULL DEFAULT now()
);
