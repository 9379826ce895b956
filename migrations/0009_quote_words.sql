-- Whole-word search through an index of the words of each quote's text.
--
-- The search's first rank tier is "the query as a whole word". Found by testing a regular expression on each
-- row of the newest-first walk (0007), a tier whose word is in 2% of the quotes costs ~1,000 rows tested for a
-- page of 20, and a tier with no rows at all (a query that is only ever part of longer words) costs the whole
-- table. With every quote's distinct words in a B-tree ordered (word, newest first), the tier for a one-word
-- query is a range of that index: the walk reads the page's rows and stops, whatever the tier's density, and an
-- empty tier costs one probe.
--
-- A word is a maximal run of word characters (\w: letters, digits, _) of lower(text): the same words that the
-- ranking's \m...\M (or (^|\W)...($|\W)) delimits, in the same lower-case that ILIKE compares.
CREATE TABLE quote_words (
    word       text COLLATE "C" NOT NULL,
    created_at timestamptz NOT NULL,
    quote_id   uuid NOT NULL,
    category   text NOT NULL,
    -- (word, newest first) is a backward scan of this key; the category rides along for category searches.
    PRIMARY KEY (word, created_at, quote_id) INCLUDE (category)
);

-- The distinct words of a text, as the table holds them.
CREATE FUNCTION quote_words_of(quote_text text) RETURNS SETOF text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT DISTINCT m[1] FROM regexp_matches(lower(quote_text), '(\w+)', 'g') AS m $$;

-- Kept by statement triggers over transition tables: an import of 100,000 quotes is one INSERT ... SELECT
-- here, not 100,000. A row whose text, time and category are unchanged keeps its words.
CREATE FUNCTION quote_words_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO quote_words (word, created_at, quote_id, category)
    SELECT w, n.created_at, n.id, n.category FROM inserted n, quote_words_of(n.text) AS w;
    RETURN NULL;
END $$;

CREATE FUNCTION quote_words_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM quote_words qw USING removed o, quote_words_of(o.text) AS w
    WHERE qw.word = w AND qw.created_at = o.created_at AND qw.quote_id = o.id;
    RETURN NULL;
END $$;

CREATE FUNCTION quote_words_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM quote_words qw USING removed o, quote_words_of(o.text) AS w
    WHERE qw.word = w AND qw.created_at = o.created_at AND qw.quote_id = o.id
      AND NOT EXISTS (SELECT 1 FROM inserted n WHERE n.id = o.id AND n.text = o.text
                      AND n.created_at = o.created_at AND n.category = o.category);
    INSERT INTO quote_words (word, created_at, quote_id, category)
    SELECT w, n.created_at, n.id, n.category FROM inserted n, quote_words_of(n.text) AS w
    WHERE NOT EXISTS (SELECT 1 FROM removed o WHERE o.id = n.id AND o.text = n.text
                      AND o.created_at = n.created_at AND o.category = n.category);
    RETURN NULL;
END $$;

CREATE FUNCTION quote_words_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    TRUNCATE quote_words;
    RETURN NULL;
END $$;

CREATE TRIGGER quote_words_on_insert AFTER INSERT ON quotes
    REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION quote_words_insert();
CREATE TRIGGER quote_words_on_update AFTER UPDATE ON quotes
    REFERENCING OLD TABLE AS removed NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION quote_words_update();
CREATE TRIGGER quote_words_on_delete AFTER DELETE ON quotes
    REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION quote_words_delete();
CREATE TRIGGER quote_words_on_truncate AFTER TRUNCATE ON quotes
    FOR EACH STATEMENT EXECUTE FUNCTION quote_words_truncate();

INSERT INTO quote_words (word, created_at, quote_id, category)
SELECT w, q.created_at, q.id, q.category FROM quotes q, quote_words_of(q.text) AS w;

-- The walk of 0007, with the first two tiers read from quote_words when the query is one word (`one_word`:
-- lower(query) when it is a run of word characters; else NULL, and the tiers are found by the regular
-- expressions as before).
-- * Tier 0 (the word itself) is a range of the index, newest first: it reads the rows it returns.
-- * Tier 1 (longer words that start with it) is one contiguous range of the index (C collation). When that range
--   holds fewer than 2,000 entries, its quotes are taken from it and sorted (at most 2,000 read); when it holds
--   more, its quotes are common enough for the newest-first walk to stop early. Either way the tier no longer
--   costs the whole table when it is empty or rare (e.g. "ove": no word starts with it, 14,000 quotes contain it).
-- Tiers 1 and 2 leave out tier 0's quotes by the same definition (a probe of quote_words' key), so every match
-- is in exactly one tier.
DROP FUNCTION quote_search_walk_text(text, text, text, text, bigint);
CREATE FUNCTION quote_search_walk_text(contains text, whole text, prefix text, query text, only_category text, wanted bigint)
RETURNS TABLE (id uuid, text text, author text, category text, created_at timestamptz, tier int)
LANGUAGE plpgsql STABLE
SET enable_seqscan = off SET enable_bitmapscan = off
SET plan_cache_mode = force_generic_plan SET jit = off SET max_parallel_workers_per_gather = 0
AS $$
DECLARE
    one_word text := CASE WHEN lower(query) ~ '^\w+$' THEN lower(query) END;
    -- Every longer word that starts with one_word sorts between these two (C collation).
    after_word text := one_word || chr(1114111);
    few_longer boolean := false;
BEGIN
    IF one_word IS NOT NULL THEN
        SELECT count(*) < 2000 INTO few_longer FROM (
            SELECT 1 FROM quote_words qw WHERE qw.word > one_word AND qw.word < after_word LIMIT 2000) AS longer;
    END IF;
    RETURN QUERY SELECT q.id, q.text, q.author, q.category, q.created_at, w.tier FROM (
        (SELECT qw.quote_id AS id, qw.created_at, 0 AS tier FROM quote_words qw
         WHERE one_word IS NOT NULL AND qw.word = one_word AND (only_category IS NULL OR qw.category = only_category)
         ORDER BY qw.created_at DESC, qw.quote_id DESC LIMIT wanted)
        UNION ALL
        (SELECT t.id, t.created_at, 0 FROM quotes t
         WHERE one_word IS NULL AND t.text ~* whole AND t.text ILIKE contains
           AND (only_category IS NULL OR t.category = only_category)
         ORDER BY t.created_at DESC, t.id DESC LIMIT wanted)
        UNION ALL
        (SELECT DISTINCT longer.quote_id, longer.created_at, 1 FROM quote_words longer
         WHERE few_longer AND longer.word > one_word AND longer.word < after_word
           AND (only_category IS NULL OR longer.category = only_category)
           AND NOT EXISTS (SELECT 1 FROM quote_words qw
                           WHERE qw.word = one_word AND qw.created_at = longer.created_at AND qw.quote_id = longer.quote_id)
         ORDER BY longer.created_at DESC, longer.quote_id DESC LIMIT wanted)
        UNION ALL
        (SELECT t.id, t.created_at, 1 FROM quotes t
         WHERE NOT few_longer AND t.text ~* prefix AND t.text ILIKE contains
           AND (only_category IS NULL OR t.category = only_category)
           AND CASE WHEN one_word IS NULL THEN t.text !~* whole
                    ELSE NOT EXISTS (SELECT 1 FROM quote_words qw
                                     WHERE qw.word = one_word AND qw.created_at = t.created_at AND qw.quote_id = t.id) END
         ORDER BY t.created_at DESC, t.id DESC LIMIT wanted)
        UNION ALL
        (SELECT t.id, t.created_at, 2 FROM quotes t
         WHERE t.text ILIKE contains AND t.text !~* prefix AND (only_category IS NULL OR t.category = only_category)
           AND (one_word IS NULL OR NOT EXISTS (SELECT 1 FROM quote_words qw
                                            WHERE qw.word = one_word AND qw.created_at = t.created_at AND qw.quote_id = t.id))
         ORDER BY t.created_at DESC, t.id DESC LIMIT wanted)
        LIMIT wanted) AS w
    JOIN quotes q ON q.id = w.id
    ORDER BY w.tier, w.created_at DESC, w.id DESC;
END $$;
