-- Bulk writes without a SQL function call per quote: the functions the word indexes and the vocabulary's trigger
-- evaluate for every quote written (0013) get bodies PostgreSQL inlines into the calling expression, with the same
-- results. A non-inlined SQL function call sets up an executor per call; inlined, a quote's words and time buckets
-- cost their built-in functions only. Figures: bench/README.md ("Issue 31, bulk writes").
--
-- * quote_words_array: the same body, no longer STRICT (a STRICT function whose body calls a non-strict function,
--   array_remove, is never inlined); a NULL still gives NULL (regexp_split_to_array is strict, array_remove of NULL
--   is NULL).
-- * quote_time_buckets: the six buckets as one array expression instead of a query over generate_series; NULL for
--   NULL as before.
-- * quote_vocabulary_entries: one query over all the statement's quotes (each quote's distinct words, numbered by
--   its position) instead of a call of quote_words_of per quote.
--
-- Each is replaced only while it still has 0013's body, so a later definition made elsewhere is never overwritten.
-- The word indexes need no rebuild: every value they hold is the same.
DO $$
BEGIN
    IF (SELECT prosrc FROM pg_proc WHERE oid = 'quote_words_array(text)'::regprocedure)
        = $body$ SELECT array_remove(regexp_split_to_array(lower(t), '\W+'), '') $body$ THEN
        CREATE OR REPLACE FUNCTION quote_words_array(t text) RETURNS text[]
            LANGUAGE sql IMMUTABLE PARALLEL SAFE CALLED ON NULL INPUT
            AS $body$ SELECT array_remove(regexp_split_to_array(lower(t), '\W+'), '') $body$;
    END IF;

    IF (SELECT prosrc FROM pg_proc WHERE oid = 'quote_time_buckets(timestamptz)'::regprocedure)
        = $body$ SELECT array_agg(quote_time_bucket(quote_time_us(t), l) ORDER BY l) $body$
          || $body$FROM generate_series(0, 5) AS l $body$ THEN
        CREATE OR REPLACE FUNCTION quote_time_buckets(t timestamptz) RETURNS bigint[]
            LANGUAGE sql IMMUTABLE PARALLEL SAFE CALLED ON NULL INPUT
            AS $body$ SELECT CASE WHEN t IS NOT NULL THEN ARRAY[
                quote_time_bucket(quote_time_us(t), 0), quote_time_bucket(quote_time_us(t), 1),
                quote_time_bucket(quote_time_us(t), 2), quote_time_bucket(quote_time_us(t), 3),
                quote_time_bucket(quote_time_us(t), 4), quote_time_bucket(quote_time_us(t), 5)] END $body$;
    END IF;

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
