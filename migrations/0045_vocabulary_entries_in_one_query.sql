-- Bulk writes: the vocabulary's statement triggers (0013) list the words of every quote written or removed with one
-- query over all the statement's quotes (each quote's distinct words, told apart by its position) instead of a
-- call of quote_words_of, a SQL function that is never inlined, per quote. Same entries, a fraction of the time.
-- Figures: bench/README.md ("Issue 31, bulk writes").
--
-- Replaced only while it still has 0013's body, so that a later definition made elsewhere is never overwritten.
-- quote_words_array and quote_time_buckets are left as they are: inlined, they made imports faster still, but the
-- search's plans changed with their costs (bench/README.md).
DO $$
BEGIN
    IF (SELECT prosrc FROM pg_proc WHERE oid = 'quote_vocabulary_entries(text[], text[])'::regprocedure)
        = $body$ SELECT coalesce(array_agg(e), '{}') FROM (
        SELECT 't:' || w AS e FROM unnest(texts) AS t, quote_words_of(t) AS w
        UNION ALL SELECT 'a:' || w FROM unnest(authors) AS a, quote_words_of(a) AS w) AS entries $body$ THEN
        CREATE OR REPLACE FUNCTION quote_vocabulary_entries(texts text[], authors text[]) RETURNS text[]
            LANGUAGE sql IMMUTABLE PARALLEL SAFE
            AS $body$ SELECT coalesce(array_agg(entries.e), '{}') FROM (
                SELECT DISTINCT t.n, 't:' || w AS e
                FROM unnest(texts) WITH ORDINALITY AS t (quote, n), unnest(quote_words_array(t.quote)) AS w
                UNION ALL
                SELECT DISTINCT a.n, 'a:' || w
                FROM unnest(authors) WITH ORDINALITY AS a (quote, n), unnest(quote_words_array(a.quote)) AS w
            ) AS entries $body$;
    END IF;
END $$;
