-- A collection entry deleted along with its collection reaches its owner on Realtime (postgres_changes on
-- collection_quotes).
--
-- 0082's trigger on collection_quotes finds the owner through the collection. When a collection is deleted, its
-- entries go by ON DELETE CASCADE, which runs as the collection's AFTER trigger: the collection row is already gone
-- and the owner cannot be found. So the collection speaks for its entries while it still can: a BEFORE DELETE
-- trigger on collections notifies the DELETE of each entry with the owner it still knows, and the entries' own
-- trigger says nothing when it finds no collection. Notifications leave at commit, so a delete rolled back tells
-- no one. The sync feed is unchanged (0008 leaves such entries out: the collection's deletion says it).

-- Builds 0082's payload and notifies it: {"table","type","owner","at","record","old_record"}, or, past NOTIFY's
-- 8000 bytes, only the rows' key columns (`keys`) and "oversize": true.
CREATE FUNCTION realtime_notify(p_table text, p_op text, p_owner uuid, p_new jsonb, p_old jsonb, p_keys text[])
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    stamp text := to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"');
    payload text;
BEGIN
    payload := jsonb_build_object(
        'table', p_table, 'type', p_op, 'owner', p_owner, 'at', stamp, 'record', p_new, 'old_record', p_old)::text;
    IF octet_length(payload) > 7900 THEN
        payload := jsonb_build_object(
            'table', p_table, 'type', p_op, 'owner', p_owner, 'at', stamp, 'oversize', true,
            'record', (SELECT jsonb_object_agg(k, p_new->k) FROM unnest(p_keys) k WHERE p_new IS NOT NULL),
            'old_record', (SELECT jsonb_object_agg(k, p_old->k) FROM unnest(p_keys) k WHERE p_old IS NOT NULL)
        )::text;
    END IF;
    PERFORM pg_notify('realtime_changes', payload);
END $$;

CREATE OR REPLACE FUNCTION realtime_change_notify() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    new_row jsonb := CASE WHEN TG_OP <> 'DELETE' THEN to_jsonb(NEW) END;
    old_row jsonb := CASE WHEN TG_OP <> 'INSERT' THEN to_jsonb(OLD) END;
    subject jsonb := coalesce(new_row, old_row);
    owner uuid;
BEGIN
    owner := CASE TG_TABLE_NAME
        WHEN 'user_favorites' THEN (subject->>'user_id')::uuid
        WHEN 'collections' THEN (subject->>'user_id')::uuid
        WHEN 'profiles' THEN (subject->>'id')::uuid
        WHEN 'collection_quotes' THEN
            (SELECT c.user_id FROM collections c WHERE c.id = (subject->>'collection_id')::uuid)
    END;
    -- An entry whose collection is gone was announced by the collection's deletion (below).
    IF TG_TABLE_NAME = 'collection_quotes' AND owner IS NULL THEN
        RETURN NULL;
    END IF;
    PERFORM realtime_notify(TG_TABLE_NAME, TG_OP, owner, new_row, old_row, TG_ARGV);
    RETURN NULL;
END $$;

CREATE FUNCTION realtime_collection_entries_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    entry jsonb;
BEGIN
    FOR entry IN SELECT to_jsonb(cq) FROM collection_quotes cq WHERE cq.collection_id = OLD.id LOOP
        PERFORM realtime_notify(
            'collection_quotes', 'DELETE', OLD.user_id, NULL, entry, ARRAY['collection_id', 'quote_id']);
    END LOOP;
    RETURN OLD;
END $$;

CREATE TRIGGER collections_entries_realtime BEFORE DELETE ON collections
    FOR EACH ROW EXECUTE FUNCTION realtime_collection_entries_deleted();
