-- Bulk writes: the vocabulary's insert trigger (0013, entries listed as 0045 does) counts a statement's words in one
-- INSERT: each quote's distinct words grouped by word (COLLATE "C", the vocabulary's key) and field, added in
-- quote_vocabulary_count's order (word in the database's collation, then field). 0013 built an array of
-- 'field:word' entries, unnested it, split each entry with substr, grouped it twice and scanned the whole
-- vocabulary for words whose count fell to 0, which an insert never makes. Same counts, same order of row locks
-- (concurrent writers sharing words still wait for each other instead of deadlocking). Figures: bench/README.md
-- ("Issue 31, import at 1,000,000: reading, the vocabulary, the index builds").
--
-- Replaced only while it still has 0013's body, so that a later definition made elsewhere is never overwritten.
-- Function definitions only: instant on a filled table.
DO $$
BEGIN
    IF (SELECT prosrc FROM pg_proc WHERE oid = 'quote_vocabulary_on_insert()'::regprocedure) = $body$
BEGIN
    PERFORM quote_vocabulary_count(
        (SELECT quote_vocabulary_entries(array_agg(n.text), array_agg(n.author)) FROM inserted n), '{}');
    RETURN NULL;
END $body$ THEN
        CREATE OR REPLACE FUNCTION quote_vocabulary_on_insert() RETURNS trigger LANGUAGE plpgsql AS $body$
        BEGIN
            INSERT INTO quote_vocabulary AS v (field, word, uses)
            SELECT e.field, e.word, count(*) FROM (
                SELECT DISTINCT n.id, 't'::"char" AS field, w COLLATE "C" AS word
                FROM inserted n, unnest(quote_words_array(n.text)) AS w
                UNION ALL
                SELECT DISTINCT n.id, 'a'::"char", w COLLATE "C"
                FROM inserted n, unnest(quote_words_array(n.author)) AS w
            ) AS e
            GROUP BY e.word, e.field ORDER BY e.word COLLATE "default", e.field
            ON CONFLICT (word, field) DO UPDATE SET uses = v.uses + excluded.uses;
            RETURN NULL;
        END $body$;
    END IF;
END $$;
