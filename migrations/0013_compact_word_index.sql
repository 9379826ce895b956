-- The index of words, a tenth of its size: a GIN index over each quote's words replaces quote_words (one row per
-- word and quote, stored twice: heap and primary key). Why GIN and not integer ids in a B-tree, or posting rows:
-- see bench/README.md ("A compact index of words").
--
-- * A word is defined once, here: quote_words_array (a maximal run of \w in lower(text), as \m...\M delimits it
--   and ILIKE compares). Everything else (the GIN indexes, the vocabulary, the search) derives from it.
-- * quotes_text_words_idx / quotes_author_words_idx: GIN over quote_words_array(text) / (author) and the quote's
--   time buckets (quote_time_buckets). GIN stores each distinct word once and each word's quotes as a compressed
--   list of row positions (1-2 bytes a quote); a word and a bucket asked together are intersected inside GIN.
-- * quote_vocabulary: each word in use once, with the number of quotes using it (`uses`). A word no quote uses
--   any more is deleted. `uses` tells the search, before reading anything, how many quotes a word can answer.
-- * The search's thresholds are named in one place: quote_search_limit.

DROP TRIGGER quote_words_insert ON quotes;
DROP TRIGGER quote_words_update ON quotes;
DROP TRIGGER quote_words_delete ON quotes;
DROP TRIGGER quote_words_truncate ON quotes;
DROP FUNCTION quote_words_on_insert();
DROP FUNCTION quote_words_on_update();
DROP FUNCTION quote_words_on_delete();
DROP FUNCTION quote_words_on_truncate();
DROP FUNCTION quote_words_add(uuid[]);
DROP FUNCTION quote_search_words("char", text, text, bigint, bigint);
DROP FUNCTION quote_vocabulary_inside("char", text);
DROP FUNCTION quote_search_walk_text(text, text, text, text, text, bigint);
DROP FUNCTION quote_search_walk_author(text, text, text, text, text, bigint);
DROP TABLE quote_words;
DROP TABLE quote_vocabulary;
DROP FUNCTION quote_words_entries(text, text);
DROP FUNCTION quote_words_of(text);

-- The one definition of a word: the maximal runs of word characters (\w: letters, digits, _) of
-- lower(t). Splitting on runs of \W gives exactly those runs (and empty strings at the ends, removed).
CREATE FUNCTION quote_words_array(t text) RETURNS text[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
    AS $$ SELECT array_remove(regexp_split_to_array(lower(t), '\W+'), '') $$;

CREATE FUNCTION quote_words_of(t text) RETURNS SETOF text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
    AS $$ SELECT DISTINCT w FROM unnest(quote_words_array(t)) AS w $$;

-- A time as microseconds since 1970 (immutable: the difference of two timestamptz does not depend on the zone).
CREATE FUNCTION quote_time_us(t timestamptz) RETURNS bigint
    LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
    AS $$ SELECT (extract(epoch FROM t - timestamptz '1970-01-01 00:00:00+00') * 1000000)::bigint $$;

-- The time buckets holding a quote created at `t`, one per level: level l (0-5) cuts time into spans of
-- 2^(31 + 3 l) microseconds (36 minutes, 5 hours, 1.6 days, 13 days, 3.4 months, 2.2 years), each nested in one of
-- the next level. Indexed beside the words, they let a search ask GIN for a word's quotes of one span only: the
-- newest span first, then older ones, stopping when the page is full. The level sits above the span's number.
-- Spans shorter than 36 minutes would cost a GIN entry per quote or so for little gain.
CREATE FUNCTION quote_time_bucket(us bigint, level int) RETURNS bigint
    LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
    AS $$ SELECT (level::bigint << 52) + (us >> (31 + 3 * level)) $$;

CREATE FUNCTION quote_time_buckets(t timestamptz) RETURNS bigint[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
    AS $$ SELECT array_agg(quote_time_bucket(quote_time_us(t), l) ORDER BY l) FROM generate_series(0, 5) AS l $$;

-- Every threshold of the search, by name (the contract's 1,000 exact matches included).
CREATE FUNCTION quote_search_limit(name text) RETURNS bigint
    LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
    AS $$ SELECT CASE name
        -- Up to this many matches `total` is exact.
        WHEN 'exact_total' THEN 1000
        -- At most this many quotes (by the vocabulary's counts) are read from the word indexes to rank a query in
        -- full; with more, the query is known or assumed to have many matches.
        WHEN 'ranked_reads' THEN 5000
        -- What a quote read by the newest-first walk costs, in percent of one read from a word index and
        -- sorted: over texts the walk reads the table and tests a regular expression; over authors it reads
        -- quotes_newest_author_idx alone. Decides which of the two reads a tier (quote_search_walk_*).
        WHEN 'walk_row_cost_text' THEN 200
        WHEN 'walk_row_cost_author' THEN 20
        -- A tier or a query piece spread over more words of the vocabulary than this is not read from the index.
        WHEN 'words_per_piece' THEN 200
        -- A tier or piece with fewer quotes than this is read whole from the word index and sorted; with more, it
        -- is read span by span of time, newest first (quote_time_buckets), until the page is full.
        WHEN 'sorted_reads' THEN 100
        -- A tier of longer words, or of words containing the query, held by at least this share of the quotes
        -- (per thousand) is walked newest-first with its test: a page needs fewer rows of the table than GIN
        -- would decode.
        WHEN 'walk_share' THEN 100
        -- The newest this many quotes (twice as many at most) have their words in order in quote_words_newest
        -- (migration 0016): a word's newest quotes are read from there.
        WHEN 'newest_window' THEN 30000
    END $$;

CREATE TABLE quote_vocabulary (
    field "char" NOT NULL CHECK (field IN ('t', 'a')),  -- 't': a quote's text; 'a': its author
    word  text COLLATE "C" NOT NULL,
    uses  bigint NOT NULL,                              -- quotes whose field holds the word
    -- Word first: with the field first, the planner preferred this key's range over the trigram index.
    PRIMARY KEY (word, field)
);

-- The words a statement added (+1 per quote) or removed (-1), applied in one order (sorted), so that concurrent
-- writers sharing words wait for each other instead of deadlocking; a word whose count reaches 0 is forgotten.
CREATE FUNCTION quote_vocabulary_count(added text[], removed text[]) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    WITH changes AS (
        SELECT substr(e, 1, 1)::"char" AS field, substr(e, 3) AS word, count(*) AS n FROM unnest(added) AS e
        GROUP BY e
        UNION ALL
        SELECT substr(e, 1, 1)::"char", substr(e, 3), -count(*) FROM unnest(removed) AS e GROUP BY e),
    net AS (SELECT field, word, sum(n)::bigint AS n FROM changes GROUP BY field, word HAVING sum(n) <> 0)
    INSERT INTO quote_vocabulary AS v (field, word, uses)
    SELECT field, word, n FROM net ORDER BY word, field
    ON CONFLICT (word, field) DO UPDATE SET uses = v.uses + excluded.uses;
    DELETE FROM quote_vocabulary WHERE uses <= 0;
END $$;

-- The vocabulary entries ('t:word', 'a:word') of a set of quotes' texts and authors.
CREATE FUNCTION quote_vocabulary_entries(texts text[], authors text[]) RETURNS text[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT coalesce(array_agg(e), '{}') FROM (
        SELECT 't:' || w AS e FROM unnest(texts) AS t, quote_words_of(t) AS w
        UNION ALL SELECT 'a:' || w FROM unnest(authors) AS a, quote_words_of(a) AS w) AS entries $$;

CREATE FUNCTION quote_vocabulary_on_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM quote_vocabulary_count(
        (SELECT quote_vocabulary_entries(array_agg(n.text), array_agg(n.author)) FROM inserted n), '{}');
    RETURN NULL;
END $$;

CREATE FUNCTION quote_vocabulary_on_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM quote_vocabulary_count(
        '{}', (SELECT quote_vocabulary_entries(array_agg(o.text), array_agg(o.author)) FROM removed o));
    RETURN NULL;
END $$;

-- Only rows whose text or author changed count.
CREATE FUNCTION quote_vocabulary_on_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM quote_vocabulary_count(
        (SELECT quote_vocabulary_entries(array_agg(n.text), array_agg(n.author)) FROM inserted n
         WHERE NOT EXISTS (SELECT 1 FROM removed o WHERE o.id = n.id AND o.text = n.text AND o.author = n.author)),
        (SELECT quote_vocabulary_entries(array_agg(o.text), array_agg(o.author)) FROM removed o
         WHERE NOT EXISTS (SELECT 1 FROM inserted n WHERE o.id = n.id AND o.text = n.text AND o.author = n.author)));
    RETURN NULL;
END $$;

CREATE FUNCTION quote_vocabulary_on_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    TRUNCATE quote_vocabulary;
    RETURN NULL;
END $$;

CREATE TRIGGER quote_vocabulary_insert AFTER INSERT ON quotes
    REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION quote_vocabulary_on_insert();
CREATE TRIGGER quote_vocabulary_update AFTER UPDATE ON quotes
    REFERENCING OLD TABLE AS removed NEW TABLE AS inserted
    FOR EACH STATEMENT EXECUTE FUNCTION quote_vocabulary_on_update();
CREATE TRIGGER quote_vocabulary_delete AFTER DELETE ON quotes
    REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION quote_vocabulary_on_delete();
CREATE TRIGGER quote_vocabulary_truncate AFTER TRUNCATE ON quotes
    FOR EACH STATEMENT EXECUTE FUNCTION quote_vocabulary_on_truncate();

INSERT INTO quote_vocabulary (field, word, uses)
SELECT 't', w, count(*) FROM quotes, quote_words_of(text) AS w GROUP BY w
UNION ALL SELECT 'a', w, count(*) FROM quotes, quote_words_of(author) AS w GROUP BY w;
CREATE INDEX quote_vocabulary_word_trgm_idx ON quote_vocabulary USING gin (word gin_trgm_ops);

-- GIN builds sort the words of every quote in memory: with more, fewer passes (this transaction only).
SET LOCAL maintenance_work_mem = '256MB';
CREATE INDEX quotes_text_words_idx ON quotes USING gin (quote_words_array(text), quote_time_buckets(created_at));
CREATE INDEX quotes_author_words_idx ON quotes USING gin (quote_words_array(author), quote_time_buckets(created_at));

-- Unused by every query (pg_stat_user_indexes after the bench): quotes_newest_author_idx holds the same key
-- (created_at DESC, id DESC) and serves the same walks and pages.
DROP INDEX quotes_newest_idx;
