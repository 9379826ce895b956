-- Bulk import on both cores (issue 31). An import that sets the GIN indexes aside (0049) also sets aside, for its
-- own sessions only, the two insert triggers that make concurrent writers wait for each other: the vocabulary's
-- counts (a row lock per word until commit) and the window of newest words (0016). Its batches count their words
-- into quote_import_words instead (no shared row, so two batches go in side by side), and at its end the counts
-- join the vocabulary and the window is filled again from the table. Figures: bench/README.md ("Issue 31, import
-- on both cores").
--
-- Other sessions keep both triggers, so their writes stay counted. An import marks what it set aside in
-- quote_import_deferred_upkeep, committed before its first batch: one cut short (even killed) leaves the marker
-- and its counted words, and the end of any later import finishes the work (as with 0049's indexes).
CREATE TABLE quote_import_deferred_upkeep (
    import_key text PRIMARY KEY
);

-- The vocabulary entries of committed batches not yet in quote_vocabulary, counted per batch (uses < 0: rows of a
-- batch that were not inserted, counted back).
CREATE TABLE quote_import_words (
    field "char" NOT NULL CHECK (field IN ('t', 'a')),
    word  text COLLATE "C" NOT NULL,
    uses  bigint NOT NULL
);

-- True in a session (transaction) of an import that set the upkeep aside: `SET LOCAL quote_import.bulk = on`.
CREATE FUNCTION quote_import_bulk() RETURNS boolean LANGUAGE sql STABLE PARALLEL SAFE
    AS $$ SELECT coalesce(current_setting('quote_import.bulk', true), '') = 'on' $$;

DROP TRIGGER quote_vocabulary_insert ON quotes;
CREATE TRIGGER quote_vocabulary_insert AFTER INSERT ON quotes
    REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT WHEN (NOT quote_import_bulk())
    EXECUTE FUNCTION quote_vocabulary_on_insert();
DROP TRIGGER quote_words_newest_insert ON quotes;
CREATE TRIGGER quote_words_newest_insert AFTER INSERT ON quotes
    REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT WHEN (NOT quote_import_bulk())
    EXECUTE FUNCTION quote_words_newest_on_insert();

-- Sets the GIN indexes (0049) and the upkeep aside for the import `import_key`; returns how many indexes.
CREATE FUNCTION quote_import_set_aside(import_key text) RETURNS bigint LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO quote_import_deferred_upkeep (import_key) VALUES (import_key) ON CONFLICT DO NOTHING;
    RETURN quote_import_defer_indexes();
END $$;

-- Counts the vocabulary entries of quotes (the trigger's own definition, quote_vocabulary_entries) into
-- quote_import_words, `sign` times.
CREATE FUNCTION quote_import_count_words(texts text[], authors text[], sign bigint) RETURNS void LANGUAGE sql AS $$
    INSERT INTO quote_import_words (field, word, uses)
    SELECT substr(e, 1, 1)::"char", substr(e, 3), sign * count(*)
    FROM unnest(quote_vocabulary_entries(texts, authors)) AS e GROUP BY e $$;

-- The end of the upkeep set aside: the counted words join the vocabulary (in one order, as
-- quote_vocabulary_count does), and with a marker left, the window of newest words is filled again as 0016 first
-- filled it. Writers wait meanwhile (SHARE lock), readers do not. Returns whether there was anything to do.
CREATE FUNCTION quote_import_finish_upkeep() RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM quote_import_deferred_upkeep) AND NOT EXISTS (SELECT 1 FROM quote_import_words) THEN
        RETURN false;
    END IF;
    LOCK TABLE quotes IN SHARE MODE;
    WITH moved AS (DELETE FROM quote_import_words RETURNING field, word, uses),
    net AS (SELECT field, word, sum(uses)::bigint AS n FROM moved GROUP BY field, word HAVING sum(uses) <> 0)
    INSERT INTO quote_vocabulary AS v (field, word, uses)
    SELECT field, word, n FROM net ORDER BY word, field
    ON CONFLICT (word, field) DO UPDATE SET uses = v.uses + excluded.uses;
    DELETE FROM quote_vocabulary WHERE uses <= 0;
    IF EXISTS (SELECT 1 FROM quote_import_deferred_upkeep) THEN
        DELETE FROM quote_words_newest;
        UPDATE quote_words_window
        SET since = coalesce((SELECT q.created_at FROM quotes q ORDER BY q.created_at DESC
                              OFFSET quote_search_limit('newest_window') - 1 LIMIT 1), '-infinity');
        INSERT INTO quote_words_newest (field, word, created_at, quote_id, category)
        SELECT e.field, e.word, q.created_at, q.id, q.category
        FROM quotes q, quote_words_entries(q.text, q.author) AS e
        WHERE q.created_at >= (SELECT w.since FROM quote_words_window w);
        DELETE FROM quote_import_deferred_upkeep;
    END IF;
    RETURN true;
END $$;
