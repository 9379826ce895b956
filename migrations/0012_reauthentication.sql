-- GoTrue's secure password change: a new password from a session older than a day needs the nonce mailed to the
-- account by GET /auth/v1/reauthenticate. One outstanding nonce per user, kept by hash, spent by the change.
CREATE TABLE reauthentication_nonces (
    user_id    uuid PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    nonce_hash text NOT NULL,
    sent_at    timestamptz NOT NULL DEFAULT now(),
    failures   integer NOT NULL DEFAULT 0
);
