-- How many users favorited each quote (issue 45), kept by triggers so the console can sort the whole table by it.
-- A table of its own, not a column of quotes: a favorite must not rewrite the quote's row (its GIN indexes, its
-- update triggers, the public caches' version). One row per quote, with the quote's created_at and category copied,
-- so one index orders the list (ties newest first) and filters it by category on its own at any page.
CREATE TABLE quote_favorite_counts (
    quote_id   uuid PRIMARY KEY REFERENCES quotes (id) ON DELETE CASCADE,
    favorites  integer NOT NULL DEFAULT 0 CHECK (favorites >= 0),
    created_at timestamptz NOT NULL,
    category   text NOT NULL
);
INSERT INTO quote_favorite_counts (quote_id, favorites, created_at, category)
SELECT q.id, (SELECT count(*) FROM user_favorites f WHERE f.quote_id = q.id), q.created_at, q.category FROM quotes q;
CREATE INDEX quote_favorite_counts_order_idx ON quote_favorite_counts (favorites, created_at, quote_id)
    INCLUDE (category);

-- A statement's new quotes get their row at once (one insert per statement: an import's batches share no row).
CREATE FUNCTION quote_favorite_counts_add_quotes() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO quote_favorite_counts (quote_id, created_at, category)
    SELECT id, created_at, category FROM inserted;
    RETURN NULL;
END $$;
CREATE TRIGGER quote_favorite_counts_add_quotes AFTER INSERT ON quotes
    REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION quote_favorite_counts_add_quotes();

CREATE FUNCTION quote_favorite_counts_follow_quote() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE quote_favorite_counts SET created_at = NEW.created_at, category = NEW.category WHERE quote_id = NEW.id;
    RETURN NULL;
END $$;
CREATE TRIGGER quote_favorite_counts_follow_quote AFTER UPDATE OF created_at, category ON quotes
    FOR EACH ROW WHEN (OLD.created_at IS DISTINCT FROM NEW.created_at OR OLD.category IS DISTINCT FROM NEW.category)
    EXECUTE FUNCTION quote_favorite_counts_follow_quote();

CREATE FUNCTION quote_favorite_counts_keep() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('DELETE', 'UPDATE') THEN
        UPDATE quote_favorite_counts SET favorites = favorites - 1 WHERE quote_id = OLD.quote_id;
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        UPDATE quote_favorite_counts SET favorites = favorites + 1 WHERE quote_id = NEW.quote_id;
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER quote_favorite_counts_keep AFTER INSERT OR DELETE OR UPDATE OF quote_id ON user_favorites
    FOR EACH ROW EXECUTE FUNCTION quote_favorite_counts_keep();

CREATE FUNCTION quote_favorite_counts_clear() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE quote_favorite_counts SET favorites = 0 WHERE favorites <> 0;
    RETURN NULL;
END $$;
CREATE TRIGGER quote_favorite_counts_truncate AFTER TRUNCATE ON user_favorites
    FOR EACH STATEMENT EXECUTE FUNCTION quote_favorite_counts_clear();
