-- How many users favorited each quote (issue 45), kept by a trigger on user_favorites so the console can sort the
-- whole table by it. A table of its own, not a column of quotes: a favorite must not rewrite the quote's row (its
-- GIN indexes, its update triggers, the public caches' version). No row means nobody favorited the quote.
CREATE TABLE quote_favorite_counts (
    quote_id  uuid PRIMARY KEY REFERENCES quotes (id) ON DELETE CASCADE,
    favorites integer NOT NULL CHECK (favorites >= 0)
);
CREATE INDEX quote_favorite_counts_most_idx ON quote_favorite_counts (favorites DESC, quote_id);

CREATE FUNCTION quote_favorite_counts_keep() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('DELETE', 'UPDATE') THEN
        UPDATE quote_favorite_counts SET favorites = favorites - 1 WHERE quote_id = OLD.quote_id;
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        INSERT INTO quote_favorite_counts AS c (quote_id, favorites) VALUES (NEW.quote_id, 1)
        ON CONFLICT (quote_id) DO UPDATE SET favorites = c.favorites + 1;
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER quote_favorite_counts_keep AFTER INSERT OR DELETE OR UPDATE OF quote_id ON user_favorites
    FOR EACH ROW EXECUTE FUNCTION quote_favorite_counts_keep();

CREATE FUNCTION quote_favorite_counts_clear() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM quote_favorite_counts;
    RETURN NULL;
END $$;
CREATE TRIGGER quote_favorite_counts_truncate AFTER TRUNCATE ON user_favorites
    FOR EACH STATEMENT EXECUTE FUNCTION quote_favorite_counts_clear();

INSERT INTO quote_favorite_counts (quote_id, favorites)
SELECT quote_id, count(*) FROM user_favorites GROUP BY quote_id;
