-- Two imports that set the upkeep aside (0057) at the same time: the first to finish deleted every marker, so the
-- other's later batches, inserted without the window's trigger, were never put in the window of newest words (its
-- own end found no marker), and one-word searches missed them. The end of the upkeep now fills the window again
-- whenever it moves counted words too: each batch inserted with the upkeep set aside counts its words (0057), so
-- counted words mean quotes the window has not seen, whichever import inserted them, killed or still running.
CREATE OR REPLACE FUNCTION quote_import_finish_upkeep() RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
    words_moved boolean;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM quote_import_deferred_upkeep) AND NOT EXISTS (SELECT 1 FROM quote_import_words) THEN
        RETURN false;
    END IF;
    LOCK TABLE quotes IN SHARE MODE;
    WITH moved AS (DELETE FROM quote_import_words RETURNING field, word, uses),
    net AS (SELECT field, word, sum(uses)::bigint AS n FROM moved GROUP BY field, word HAVING sum(uses) <> 0),
    merged AS (
        INSERT INTO quote_vocabulary AS v (field, word, uses)
        SELECT field, word, n FROM net ORDER BY word, field
        ON CONFLICT (word, field) DO UPDATE SET uses = v.uses + excluded.uses)
    SELECT EXISTS (SELECT 1 FROM moved) INTO words_moved;
    DELETE FROM quote_vocabulary WHERE uses <= 0;
    IF words_moved OR EXISTS (SELECT 1 FROM quote_import_deferred_upkeep) THEN
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
