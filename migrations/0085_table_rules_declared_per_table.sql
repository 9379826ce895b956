-- Two trigger functions branched on the table's name; each table now declares its own rule where its trigger is
-- created, and a new table needs no edit of a shared function.

-- Realtime (0082, 0084): whose row a change is. The first argument of realtime_change_notify names the row's column
-- that holds its owner ('' for the tables anyone may read); the others are the primary key columns (all that an
-- oversize payload keeps). collection_quotes has no owner column: its own function finds the owner through the
-- entry's collection.
CREATE OR REPLACE FUNCTION realtime_change_notify() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    new_row jsonb := CASE WHEN TG_OP <> 'DELETE' THEN to_jsonb(NEW) END;
    old_row jsonb := CASE WHEN TG_OP <> 'INSERT' THEN to_jsonb(OLD) END;
    owner uuid;
BEGIN
    IF TG_ARGV[0] <> '' THEN
        owner := (coalesce(new_row, old_row)->>TG_ARGV[0])::uuid;
    END IF;
    PERFORM realtime_notify(TG_TABLE_NAME, TG_OP, owner, new_row, old_row, TG_ARGV[1:TG_NARGS - 1]);
    RETURN NULL;
END $$;

-- The arguments are the primary key columns.
CREATE FUNCTION realtime_collection_entry_notify() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    new_row jsonb := CASE WHEN TG_OP <> 'DELETE' THEN to_jsonb(NEW) END;
    old_row jsonb := CASE WHEN TG_OP <> 'INSERT' THEN to_jsonb(OLD) END;
    owner uuid;
BEGIN
    SELECT c.user_id INTO owner FROM collections c
    WHERE c.id = (coalesce(new_row, old_row)->>'collection_id')::uuid;
    -- An entry whose collection is gone was announced by the collection's deletion (0084).
    IF owner IS NULL THEN
        RETURN NULL;
    END IF;
    PERFORM realtime_notify(TG_TABLE_NAME, TG_OP, owner, new_row, old_row, TG_ARGV);
    RETURN NULL;
END $$;

CREATE OR REPLACE TRIGGER user_favorites_realtime AFTER INSERT OR UPDATE OR DELETE ON user_favorites
    FOR EACH ROW EXECUTE FUNCTION realtime_change_notify('user_id', 'user_id', 'quote_id');
CREATE OR REPLACE TRIGGER collections_realtime AFTER INSERT OR UPDATE OR DELETE ON collections
    FOR EACH ROW EXECUTE FUNCTION realtime_change_notify('user_id', 'id');
CREATE OR REPLACE TRIGGER collection_quotes_realtime AFTER INSERT OR UPDATE OR DELETE ON collection_quotes
    FOR EACH ROW EXECUTE FUNCTION realtime_collection_entry_notify('collection_id', 'quote_id');
CREATE OR REPLACE TRIGGER profiles_realtime AFTER INSERT OR UPDATE OR DELETE ON profiles
    FOR EACH ROW EXECUTE FUNCTION realtime_change_notify('id', 'id');
CREATE OR REPLACE TRIGGER quotes_realtime AFTER INSERT OR UPDATE OR DELETE ON quotes
    FOR EACH ROW EXECUTE FUNCTION realtime_change_notify('', 'id');
CREATE OR REPLACE TRIGGER quote_of_day_realtime AFTER INSERT OR UPDATE OR DELETE ON quote_of_day
    FOR EACH ROW EXECUTE FUNCTION realtime_change_notify('', 'date');

-- A quote once shown is kept as shown (0020, 0037, 0069): the day's row and the quote each have their own test, and
-- share the refusal.
CREATE FUNCTION refuse_shown_quote(p_table text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'A quote that has been a quote of the day cannot be changed' USING ERRCODE = '55000',
        HINT = 'Add a new quote instead', TABLE = p_table;
END $$;

CREATE FUNCTION refuse_shown_day_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF OLD.date <= (now() AT TIME ZONE 'Etc/GMT-14')::date THEN
        PERFORM refuse_shown_quote(TG_TABLE_NAME);
    END IF;
    RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
END $$;

CREATE OR REPLACE FUNCTION refuse_shown_quote_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (
        SELECT 1 FROM quote_of_day d
        WHERE d.quote_id = OLD.id AND (d.pinned OR d.date <= (now() AT TIME ZONE 'Etc/GMT-14')::date))
    THEN
        PERFORM refuse_shown_quote(TG_TABLE_NAME);
    END IF;
    RETURN NEW;
END $$;

CREATE OR REPLACE TRIGGER quote_of_day_kept BEFORE UPDATE OR DELETE ON quote_of_day
    FOR EACH ROW EXECUTE FUNCTION refuse_shown_day_change();
