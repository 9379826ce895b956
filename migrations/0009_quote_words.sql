-- Search for one-word queries through an index of the words of each quote's text and author.
--
-- The search ranks a match by the query as a whole word (tier 0), as the start of a word (1), anywhere (2). For a
-- one-word query (a run of word characters, as most searches are) all three are questions about the quote's
-- words, and an index of words answers them without reading texts:
-- * quote_words holds each quote's distinct words ordered (word, newest first): the quotes holding a word, or
--   any word of a contiguous range (the longer words starting with the query, in C collation), newest first.
-- * quote_vocabulary holds each distinct word once, with a trigram index: the few thousand words that contain
--   the query are found there instead of among the texts (a word is ~7 characters, a text ~100: posting lists
--   of that index are short, and the texts are not rechecked).
-- A word is a maximal run of word characters (\w: letters, digits, _) of lower(text): the same words the
-- ranking's \m...\M delimits, in the lower-case ILIKE compares; for a one-word query, a quote contains the query
-- exactly when one of its words does.
CREATE TABLE quote_words (
    field      "char" NOT NULL CHECK (field IN ('t', 'a')),  -- 't': the quote's text; 'a': its author
    word       text COLLATE "C" NOT NULL,
    created_at timestamptz NOT NULL,
    quote_id   uuid NOT NULL,
    category   text NOT NULL,
    -- (word, newest first) is a backward scan of this key; the category rides along for category searches.
    PRIMARY KEY (field, word, created_at, quote_id) INCLUDE (category)
);

-- Every word ever indexed. A word whose last quote is deleted stays: it then finds no entries in quote_words,
-- and keeping it spares deletes a count per word (a hot row for "the") and a lock.
CREATE TABLE quote_vocabulary (
    field "char" NOT NULL,
    word  text COLLATE "C" NOT NULL,
    -- Word first: with the field first, the planner preferred this key's range over the trigram index.
    PRIMARY KEY (word, field)
);
CREATE INDEX quote_vocabulary_word_trgm_idx ON quote_vocabulary USING gin (word gin_trgm_ops);

-- The distinct words of a text, as the tables hold them.
CREATE FUNCTION quote_words_of(quote_text text) RETURNS SETOF text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT DISTINCT m[1] FROM regexp_matches(lower(quote_text), '(\w+)', 'g') AS m $$;

-- The query as one word of the index (its lower case, when that is word characters only), else NULL.
CREATE FUNCTION quote_words_one_word(query text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT CASE WHEN lower(query) ~ '^\w+$' THEN lower(query) END $$;

-- `%one_word%` for LIKE over the vocabulary (of LIKE's own characters only _ can be in a word).
CREATE FUNCTION quote_words_containing(one_word text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT '%' || replace(one_word, '_', '\_') || '%' $$;

-- A quote's entries: the words of its text and of its author.
CREATE FUNCTION quote_words_entries(quote_text text, quote_author text, OUT field "char", OUT word text) RETURNS SETOF record
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT 't'::"char", w FROM quote_words_of(quote_text) AS w
          UNION ALL SELECT 'a'::"char", w FROM quote_words_of(quote_author) AS w $$;

-- Kept by statement triggers over transition tables: an import of 100,000 quotes is one INSERT ... SELECT here,
-- not 100,000. New words go into the vocabulary in one order (sorted), so that concurrent imports sharing new
-- words cannot deadlock on them.
CREATE FUNCTION quote_words_add(quote_ids uuid[]) RETURNS void LANGUAGE sql AS $$
    WITH added AS (
        INSERT INTO quote_words (field, word, created_at, quote_id, category)
        SELECT e.field, e.word, q.created_at, q.id, q.category
        FROM quotes q, quote_words_entries(q.text, q.author) AS e
        WHERE q.id = ANY (quote_ids)
        RETURNING field, word)
    INSERT INTO quote_vocabulary (field, word)
    SELECT DISTINCT field, word FROM added ORDER BY field, word
    ON CONFLICT DO NOTHING
$$;

CREATE FUNCTION quote_words_on_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM quote_words_add(ARRAY(SELECT n.id FROM inserted n));
    RETURN NULL;
END $$;

CREATE FUNCTION quote_words_on_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM quote_words qw USING removed o, quote_words_entries(o.text, o.author) AS e
    WHERE qw.field = e.field AND qw.word = e.word AND qw.created_at = o.created_at AND qw.quote_id = o.id;
    RETURN NULL;
END $$;

-- A row whose text, author, time and category are unchanged keeps its entries.
CREATE FUNCTION quote_words_on_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM quote_words qw USING removed o, quote_words_entries(o.text, o.author) AS e
    WHERE qw.field = e.field AND qw.word = e.word AND qw.created_at = o.created_at AND qw.quote_id = o.id
      AND NOT EXISTS (SELECT 1 FROM inserted n WHERE n.id = o.id AND n.text = o.text AND n.author = o.author
                      AND n.created_at = o.created_at AND n.category = o.category);
    PERFORM quote_words_add(ARRAY(
        SELECT n.id FROM inserted n
        WHERE NOT EXISTS (SELECT 1 FROM removed o WHERE o.id = n.id AND o.text = n.text AND o.author = n.author
                          AND o.created_at = n.created_at AND o.category = n.category)));
    RETURN NULL;
END $$;

CREATE FUNCTION quote_words_on_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    TRUNCATE quote_words;
    RETURN NULL;
END $$;

CREATE TRIGGER quote_words_insert AFTER INSERT ON quotes
    REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION quote_words_on_insert();
CREATE TRIGGER quote_words_update AFTER UPDATE ON quotes
    REFERENCING OLD TABLE AS removed NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION quote_words_on_update();
CREATE TRIGGER quote_words_delete AFTER DELETE ON quotes
    REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION quote_words_on_delete();
CREATE TRIGGER quote_words_truncate AFTER TRUNCATE ON quotes
    FOR EACH STATEMENT EXECUTE FUNCTION quote_words_on_truncate();

SELECT quote_words_add(ARRAY(SELECT id FROM quotes));

-- A one-word search with at most 1,000 matches, from the index of words: the vocabulary's words containing the
-- query, then their entries (at most 5,000 read, once), grouped by quote; a quote's tier is that of its best word
-- (the word itself 0, a longer word starting with it 1, any other 2). `total` is the number of matches, exact;
-- NULL when this cannot tell cheaply (not one word, or more than 5,000 entries: the caller counts through the
-- trigram index instead). Every answer has one row at least: `total` and the quotes' `version` ride on each (id
-- NULL when the page is empty, or `total` is over 1,000 or NULL).
CREATE FUNCTION quote_search_words(searched "char", query text, only_category text, page_size bigint, page_offset bigint)
RETURNS TABLE (total bigint, version bigint, id uuid, text text, author text, category text, created_at timestamptz)
LANGUAGE plpgsql STABLE
SET enable_seqscan = off SET plan_cache_mode = force_generic_plan SET jit = off SET max_parallel_workers_per_gather = 0
AS $$
DECLARE
    one_word text := quote_words_one_word(query);
    containing text := quote_words_containing(one_word);
    entries bigint := 0;
    quote_ids uuid[];
    times timestamptz[];
    tiers int[];
BEGIN
    IF one_word IS NOT NULL THEN
        SELECT count(*), array_agg(e.quote_id), array_agg(e.created_at), array_agg(e.tier)
        INTO entries, quote_ids, times, tiers
        FROM (SELECT qw.quote_id, qw.created_at,
                     CASE WHEN qw.word = one_word THEN 0 WHEN starts_with(qw.word, one_word) THEN 1 ELSE 2 END AS tier
              FROM quote_vocabulary v JOIN quote_words qw ON qw.field = v.field AND qw.word = v.word
              WHERE v.word LIKE containing AND v.field = searched
                AND (only_category IS NULL OR qw.category = only_category)
              LIMIT 5001) AS e;
    END IF;
    IF one_word IS NULL OR entries > 5000 OR entries = 0 THEN
        RETURN QUERY SELECT CASE WHEN entries = 0 AND one_word IS NOT NULL THEN 0::bigint END, qv.version,
                            NULL::uuid, NULL::text, NULL::text, NULL::text, NULL::timestamptz
            FROM quotes_version qv;
        RETURN;
    END IF;
    RETURN QUERY
        WITH matches AS MATERIALIZED (
            SELECT e.quote_id, e.created_at, min(e.tier) AS tier
            FROM unnest(quote_ids, times, tiers) AS e (quote_id, created_at, tier)
            GROUP BY e.quote_id, e.created_at),
        counted AS (SELECT count(*) AS n FROM matches)
        SELECT counted.n, (SELECT qv.version FROM quotes_version qv), q.id, q.text, q.author, q.category, q.created_at
        FROM counted
        LEFT JOIN LATERAL (
            SELECT m.quote_id, m.tier, m.created_at FROM matches m
            WHERE counted.n <= 1000
            ORDER BY m.tier, m.created_at DESC, m.quote_id DESC
            LIMIT page_size OFFSET page_offset) AS r ON true
        LEFT JOIN quotes q ON q.id = r.quote_id
        ORDER BY r.tier, r.created_at DESC, r.quote_id DESC;
END $$;

-- The words of the vocabulary that contain a word without starting with it (the words of tier 2), at most 201
-- (more: the caller treats the tier as common). Its own function: the trigram index needs a bitmap scan, which
-- the walks turn off.
CREATE FUNCTION quote_vocabulary_inside(searched "char", one_word text) RETURNS text[]
LANGUAGE sql STABLE
SET enable_seqscan = off SET enable_bitmapscan = on SET plan_cache_mode = force_generic_plan SET jit = off
SET max_parallel_workers_per_gather = 0
AS $$
    SELECT array_agg(inside.word) FROM (SELECT v.word FROM quote_vocabulary v
    WHERE v.word LIKE quote_words_containing(one_word)
      AND v.field = searched AND NOT starts_with(v.word, one_word)
    LIMIT 201) AS inside
$$;

-- The walks of 0007 (over text and over authors), with every tier read from the index of words when the query is
-- one word (`one_word`: lower(query) when it is a run of word characters; else NULL, and the tiers are found by
-- the regular expressions as before).
-- * Tier 0 (the word itself) is a range of the index, newest first: it reads the rows it returns.
-- * Tier 1 (longer words that start with it) is one contiguous range of the index (C collation); tier 2 (words
--   that contain it elsewhere) the entries of the vocabulary's words containing it. When a tier's entries number
--   fewer than 2,000 or than the rows the page needs (and tier 2's words 200 at most), its quotes are taken from
--   them and sorted; when more, its quotes are common enough for the newest-first walk to stop early. Either way
--   a tier no longer costs the whole table when it is empty or rare (e.g. "ove": no word is or starts with it,
--   14,000 quotes contain it). Tiers 1 and 2 are only sized when the tiers before them cannot fill the page.
-- For a one-word query every tier is decided by the quote's words as the index holds them (the walked tiers by
-- \m over lower(text), whose words are those of quote_words_of; the case-insensitive expressions only for other
-- queries), so every match is in exactly one tier, whichever way each tier is read. One function per searched
-- column, made from one text.
DROP FUNCTION quote_search_walk_text(text, text, text, text, bigint);
DROP FUNCTION quote_search_walk_author(text, text, text, text, bigint);
DO $make$
DECLARE searched text;
BEGIN
    FOREACH searched IN ARRAY ARRAY['text', 'author'] LOOP
        EXECUTE format($f$
            CREATE FUNCTION %1$I(contains text, whole text, prefix text, query text, only_category text, wanted bigint)
            RETURNS TABLE (id uuid, text text, author text, category text, created_at timestamptz, tier int)
            LANGUAGE plpgsql STABLE
            SET enable_seqscan = off SET enable_bitmapscan = off
            SET plan_cache_mode = force_generic_plan SET jit = off SET max_parallel_workers_per_gather = 0
            AS $$
            DECLARE
                one_word text := quote_words_one_word(query);
                -- Every longer word that starts with one_word sorts between these two (C collation).
                after_word text := one_word || chr(1114111);
                -- A word of lower(text) starts with one_word: the index's own words, without reading them out
                -- (one_word is word characters only, none special to a regular expression).
                word_start text := '\m' || one_word;
                itself bigint := wanted;  -- tier 0's entries, counted up to `wanted`
                longer bigint := 0;       -- tier 1's entries, counted up to 2,000 or `wanted` if more
                few_longer boolean := false;
                inside_words text[];
                few_inside boolean := false;
            BEGIN
                IF one_word IS NOT NULL THEN
                    SELECT count(*) INTO itself FROM (
                        SELECT 1 FROM quote_words qw WHERE qw.field = %3$L AND qw.word = one_word
                          AND (only_category IS NULL OR qw.category = only_category) LIMIT wanted) AS e;
                END IF;
                IF itself < wanted THEN
                    SELECT count(*) INTO longer FROM (
                        SELECT 1 FROM quote_words qw
                        WHERE qw.field = %3$L AND qw.word > one_word AND qw.word < after_word
                          AND (only_category IS NULL OR qw.category = only_category)
                        LIMIT greatest(2000, wanted)) AS e;
                    few_longer := longer < greatest(2000, wanted);  -- the whole range was counted
                    -- Entries count a quote once at least, so with fewer the first two tiers cannot fill the page.
                    IF itself + longer < wanted THEN
                        inside_words := quote_vocabulary_inside(%3$L, one_word);
                        IF cardinality(inside_words) <= 200 THEN
                            SELECT count(*) < greatest(2000, wanted) INTO few_inside FROM (
                                SELECT 1 FROM quote_words qw
                                WHERE qw.field = %3$L AND qw.word = ANY (inside_words)
                                  AND (only_category IS NULL OR qw.category = only_category)
                                LIMIT greatest(2000, wanted)) AS e;
                        END IF;
                    END IF;
                END IF;
                RETURN QUERY SELECT q.id, q.text, q.author, q.category, q.created_at, w.tier FROM (
                    (SELECT qw.quote_id AS id, qw.created_at, 0 AS tier FROM quote_words qw
                     WHERE one_word IS NOT NULL AND qw.field = %3$L AND qw.word = one_word
                       AND (only_category IS NULL OR qw.category = only_category)
                     ORDER BY qw.created_at DESC, qw.quote_id DESC LIMIT wanted)
                    UNION ALL
                    (SELECT t.id, t.created_at, 0 FROM quotes t
                     WHERE one_word IS NULL AND t.%2$I ~* whole AND t.%2$I ILIKE contains
                       AND (only_category IS NULL OR t.category = only_category)
                     ORDER BY t.created_at DESC, t.id DESC LIMIT wanted)
                    UNION ALL
                    (SELECT DISTINCT longer.quote_id, longer.created_at, 1 FROM quote_words longer
                     WHERE few_longer AND longer.field = %3$L AND longer.word > one_word AND longer.word < after_word
                       AND (only_category IS NULL OR longer.category = only_category)
                       AND NOT EXISTS (SELECT 1 FROM quote_words qw
                                       WHERE qw.field = %3$L AND qw.word = one_word AND qw.created_at = longer.created_at
                                         AND qw.quote_id = longer.quote_id)
                     ORDER BY longer.created_at DESC, longer.quote_id DESC LIMIT wanted)
                    UNION ALL
                    (SELECT t.id, t.created_at, 1 FROM quotes t
                     WHERE one_word IS NULL AND t.%2$I ~* prefix AND t.%2$I ILIKE contains AND t.%2$I !~* whole
                       AND (only_category IS NULL OR t.category = only_category)
                     ORDER BY t.created_at DESC, t.id DESC LIMIT wanted)
                    UNION ALL
                    (SELECT t.id, t.created_at, 1 FROM quotes t
                     WHERE one_word IS NOT NULL AND NOT few_longer
                       AND (only_category IS NULL OR t.category = only_category)
                       AND lower(t.%2$I) ~ word_start
                       AND NOT EXISTS (SELECT 1 FROM quote_words qw
                                       WHERE qw.field = %3$L AND qw.word = one_word
                                         AND qw.created_at = t.created_at AND qw.quote_id = t.id)
                     ORDER BY t.created_at DESC, t.id DESC LIMIT wanted)
                    UNION ALL
                    (SELECT DISTINCT inside.quote_id, inside.created_at, 2 FROM quote_words inside
                     JOIN quotes t ON t.id = inside.quote_id
                     WHERE few_inside AND inside.field = %3$L AND inside.word = ANY (inside_words)
                       AND (only_category IS NULL OR inside.category = only_category)
                       AND lower(t.%2$I) !~ word_start
                     ORDER BY inside.created_at DESC, inside.quote_id DESC LIMIT wanted)
                    UNION ALL
                    (SELECT t.id, t.created_at, 2 FROM quotes t
                     WHERE NOT few_inside AND t.%2$I ILIKE contains AND (only_category IS NULL OR t.category = only_category)
                       AND CASE WHEN one_word IS NULL THEN t.%2$I !~* prefix
                                ELSE lower(t.%2$I) !~ word_start END
                     ORDER BY t.created_at DESC, t.id DESC LIMIT wanted)
                    LIMIT wanted) AS w
                JOIN quotes q ON q.id = w.id
                ORDER BY w.tier, w.created_at DESC, w.id DESC;
            END $$
            $f$, 'quote_search_walk_' || searched, searched, CASE searched WHEN 'text' THEN 't' ELSE 'a' END);
    END LOOP;
END $make$;
