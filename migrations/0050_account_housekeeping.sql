-- Indexes for the account housekeeping pass (AccountHousekeeping.swift), so that finding what is due reads only
-- what is due: sessions by the moment they ended (expired or revoked), reset links by their expiry. auth_events
-- and mail_outbox are walked from their oldest id instead (ids grow with time), which needs no new index.
CREATE INDEX sessions_ended_idx ON sessions (least(expires_at, coalesce(revoked_at, 'infinity'::timestamptz)));
CREATE INDEX password_reset_tokens_expires_idx ON password_reset_tokens (expires_at);
