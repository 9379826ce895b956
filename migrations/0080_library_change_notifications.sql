-- Live changes (GET /v1/sync/events): every change recorded in a user's feed, and every end of one of the user's
-- sessions, notifies channel `library_changes` with the user's id. PostgreSQL delivers notifications at commit
-- (none for a rolled-back transaction) and sends identical ones of one transaction once, so a batch of many
-- changes is one notification. Each instance listens on one dedicated connection and tells the user's open
-- streams to look again: the new feed position, and whether their session is still live.

-- Every row of the feed (sync_record writes them all) notifies its user.
CREATE FUNCTION sync_change_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('library_changes', NEW.user_id::text);
    RETURN NULL;
END $$;
CREATE TRIGGER sync_changes_notify AFTER INSERT ON sync_changes
    FOR EACH ROW EXECUTE FUNCTION sync_change_notify();

-- A session revoked (logout, password change, the console) or deleted (with its account): its streams end.
CREATE FUNCTION sessions_ended_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('library_changes', OLD.user_id::text);
    RETURN NULL;
END $$;
CREATE TRIGGER sessions_revoked_notify AFTER UPDATE OF revoked_at ON sessions
    FOR EACH ROW WHEN (OLD.revoked_at IS NULL AND NEW.revoked_at IS NOT NULL)
    EXECUTE FUNCTION sessions_ended_notify();
CREATE TRIGGER sessions_deleted_notify AFTER DELETE ON sessions
    FOR EACH ROW EXECUTE FUNCTION sessions_ended_notify();
