-- Supabase Realtime's postgres_changes (GET /realtime/v1/websocket): every row written to a table the app
-- subscribes to notifies channel `realtime_changes`, at commit, with the row itself and whose it is, so that each
-- instance decides in memory which of its subscribers may see it (the same rule as /rest/v1: a user's own
-- favorites, collections, collection entries and profile; anyone's quotes and quotes of the day).
--
-- The payload: {"table","type":"INSERT"|"UPDATE"|"DELETE","owner":<user id or null>,"at":<commit time>,
-- "record":<new row>,"old_record":<old row>}. NOTIFY takes at most 8000 bytes: a larger one carries only the
-- primary key (the trigger's arguments) of each row and "oversize": true, as Realtime itself sends a row too large
-- for its payload with its key and an error. A collection entry deleted along with its collection has no owner left
-- to find: it reaches no one (the collection's own DELETE does).
CREATE FUNCTION realtime_change_notify() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    new_row jsonb := CASE WHEN TG_OP <> 'DELETE' THEN to_jsonb(NEW) END;
    old_row jsonb := CASE WHEN TG_OP <> 'INSERT' THEN to_jsonb(OLD) END;
    subject jsonb := coalesce(new_row, old_row);
    owner uuid;
    stamp text := to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"');
    payload text;
BEGIN
    owner := CASE TG_TABLE_NAME
        WHEN 'user_favorites' THEN (subject->>'user_id')::uuid
        WHEN 'collections' THEN (subject->>'user_id')::uuid
        WHEN 'profiles' THEN (subject->>'id')::uuid
        WHEN 'collection_quotes' THEN
            (SELECT c.user_id FROM collections c WHERE c.id = (subject->>'collection_id')::uuid)
    END;
    payload := jsonb_build_object(
        'table', TG_TABLE_NAME, 'type', TG_OP, 'owner', owner, 'at', stamp,
        'record', new_row, 'old_record', old_row)::text;
    IF octet_length(payload) > 7900 THEN
        payload := jsonb_build_object(
            'table', TG_TABLE_NAME, 'type', TG_OP, 'owner', owner, 'at', stamp, 'oversize', true,
            'record', (SELECT jsonb_object_agg(k, new_row->k) FROM unnest(TG_ARGV) k WHERE new_row IS NOT NULL),
            'old_record', (SELECT jsonb_object_agg(k, old_row->k) FROM unnest(TG_ARGV) k WHERE old_row IS NOT NULL)
        )::text;
    END IF;
    PERFORM pg_notify('realtime_changes', payload);
    RETURN NULL;
END $$;

CREATE TRIGGER user_favorites_realtime AFTER INSERT OR UPDATE OR DELETE ON user_favorites
    FOR EACH ROW EXECUTE FUNCTION realtime_change_notify('user_id', 'quote_id');
CREATE TRIGGER collections_realtime AFTER INSERT OR UPDATE OR DELETE ON collections
    FOR EACH ROW EXECUTE FUNCTION realtime_change_notify('id');
CREATE TRIGGER collection_quotes_realtime AFTER INSERT OR UPDATE OR DELETE ON collection_quotes
    FOR EACH ROW EXECUTE FUNCTION realtime_change_notify('collection_id', 'quote_id');
CREATE TRIGGER profiles_realtime AFTER INSERT OR UPDATE OR DELETE ON profiles
    FOR EACH ROW EXECUTE FUNCTION realtime_change_notify('id');
CREATE TRIGGER quotes_realtime AFTER INSERT OR UPDATE OR DELETE ON quotes
    FOR EACH ROW EXECUTE FUNCTION realtime_change_notify('id');
CREATE TRIGGER quote_of_day_realtime AFTER INSERT OR UPDATE OR DELETE ON quote_of_day
    FOR EACH ROW EXECUTE FUNCTION realtime_change_notify('date');
