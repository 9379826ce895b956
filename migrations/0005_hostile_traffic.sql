-- Throttles for the operations that cost a password hash: sign-ups and password-reset confirmations are counted
-- per client address, like failed logins (issue 16).
ALTER TABLE auth_events DROP CONSTRAINT auth_events_kind_check;
ALTER TABLE auth_events ADD CONSTRAINT auth_events_kind_check
    CHECK (kind IN ('login_failed', 'reset_requested', 'signup', 'reset_confirm_failed'));

-- Two parallel refreshes of one refresh token within REFRESH_TOKEN_REUSE_INTERVAL both get new tokens of the
-- session, so a session may briefly hold two unrotated refresh tokens (each still single-use).
DROP INDEX refresh_tokens_one_live_per_session;
