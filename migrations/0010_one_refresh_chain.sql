-- One chain of refresh tokens per session (issue 24): a rotated token presented again within
-- REFRESH_TOKEN_REUSE_INTERVAL is answered with the session's live token instead of a new one, so a session
-- again holds at most one unrotated token, and the database enforces it.
--
-- Sessions that 0005's parallel refreshes left with several unrotated tokens keep their newest one (a client
-- holding another one signs in again).
DELETE FROM refresh_tokens t
WHERE t.rotated_at IS NULL AND EXISTS (
    SELECT 1 FROM refresh_tokens n
    WHERE n.session_id = t.session_id AND n.rotated_at IS NULL
      AND (n.created_at, n.token_hash) > (t.created_at, t.token_hash));
CREATE UNIQUE INDEX refresh_tokens_one_live_per_session ON refresh_tokens (session_id) WHERE rotated_at IS NULL;
