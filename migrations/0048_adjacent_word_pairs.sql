-- Several words with few matches, found through the pairs of adjacent words (a new GIN index over the texts)
-- instead of every quote holding the two rarest words. Why, and what it costs: bench/README.md ("Issue 31, fifth
-- pass").
--
-- A quote containing a query of several words holds, for each two pieces next to each other in the query (runs
-- of word characters, quote_words_array's words), two words next to each other among its own words, the first one
-- of the words the first piece allows and the second one of those the second allows (quote_search_pieces): only
-- non-word characters stand between the two pieces, in the query and so in the quote. Two words that are common
-- but rarely together ("ephemeral fjord": 37,000 quotes each at 1,000,000, 1,451 holding both, 115 matches) are
-- read through their pair's quotes, not the 1,451 candidates. ILIKE still decides every match: results, totals
-- and ranking are those of before.
--
-- * quote_word_pairs: a text's pairs of adjacent words, each as a number (a hash of the two words, folded into
--   2^16 values: many pairs share a number, which only adds candidates, and GIN keeps 65,536 lists instead of an
--   entry per pair ever written, most of them of one quote).
-- * quote_search_pair_keys: the numbers a query's rarest pairs of pieces allow; NULL when no pair is usable (one
--   piece, or a piece whose words the vocabulary cannot list).
-- * quote_search_by_words_text (0014) reads a query of several words through the pairs when it can, and
--   quote_search_ranked_text (0007) counts one through them instead of its trigram index. Authors are left as
--   they are: their two-word queries are within the goal (their candidates nearly all match), and a second index
--   would cost every import.

CREATE FUNCTION quote_word_pair_key(first text, second text) RETURNS int
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT hashtext(first || ' ' || second) & 65535 $$;

-- PL/pgSQL: a loop of simple expressions costs a fifth of a SQL function's query per text.
CREATE FUNCTION quote_word_pairs(t text) RETURNS int[]
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE STRICT
AS $$
DECLARE
    words text[] := quote_words_array(t);
    keys int[] := '{}';
BEGIN
    FOR i IN 2 .. coalesce(cardinality(words), 0) LOOP
        keys := keys || quote_word_pair_key(words[i - 1], words[i]);
    END LOOP;
    RETURN keys;
END $$;

SET LOCAL maintenance_work_mem = '256MB';
CREATE INDEX quotes_text_pairs_idx ON quotes USING gin (quote_word_pairs(text));

-- The query a search's ILIKE pattern (`%query%`, with %, _ and \ escaped) stands for; NULL for another pattern.
CREATE FUNCTION quote_search_unescaped(contains text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT CASE WHEN contains ~ '^%([^%_\\]|\\.)*%$'
                      THEN regexp_replace(substr(contains, 2, char_length(contains) - 2), '\\(.)', '\1', 'g') END $$;

-- The pair numbers of the two pairs of pieces next to each other with the fewest quotes (the product of the two
-- pieces' `uses`), as `first` and `second` (the same when the query has one usable pair); NULL when none is usable.
-- Each pair is asked of quote_search_pieces as a query of its own: the two pieces, with a non-word character
-- before (after) when the whole query has something before the first (after the second), so that each piece allows
-- the words it allows in the whole query.
CREATE FUNCTION quote_search_pair_keys(searched "char", contains text, OUT first int[], OUT second int[])
LANGUAGE plpgsql STABLE
SET plan_cache_mode = force_generic_plan SET jit = off
AS $$
DECLARE
    query text := quote_search_unescaped(contains);
    pieces text[] := quote_words_array(query);
    n int := coalesce(cardinality(pieces), 0);
    word_limit bigint := quote_search_limit('words_per_piece');
    pair text;
    listed record;
    got int;
    a_words text[];
    a_uses float8;
    b_words text[];
    b_uses float8;
    keys int[];
    best float8;
    next_best float8;
BEGIN
    FOR i IN 1 .. n - 1 LOOP
        pair := CASE WHEN i > 1 OR lower(query) !~ '^\w' THEN ' ' ELSE '' END || pieces[i] || ' ' || pieces[i + 1]
                || CASE WHEN i + 1 < n OR lower(query) !~ '\w$' THEN ' ' ELSE '' END;
        got := 0;
        FOR listed IN SELECT * FROM quote_search_pieces(searched, pair) LOOP
            got := got + 1;
            IF got = 1 THEN a_words := listed.words; a_uses := listed.uses;
            ELSE b_words := listed.words; b_uses := listed.uses; END IF;
        END LOOP;
        -- (a piece the vocabulary cannot list is left out by quote_search_pieces: this pair is not usable)
        CONTINUE WHEN got < 2 OR cardinality(a_words) * cardinality(b_words) > word_limit;
        keys := ARRAY(SELECT DISTINCT quote_word_pair_key(x, y) FROM unnest(a_words) AS x, unnest(b_words) AS y);
        IF best IS NULL OR a_uses * b_uses < best THEN
            second := first; next_best := best;
            first := keys; best := a_uses * b_uses;
        ELSIF next_best IS NULL OR a_uses * b_uses < next_best THEN
            second := keys; next_best := a_uses * b_uses;
        END IF;
    END LOOP;
    second := coalesce(second, first);
END $$;

-- quote_search_by_words_text (0014): for several words (not `lowered`) with a usable pair, the candidates
-- are the quotes holding the two rarest pairs' numbers (intersected inside GIN); otherwise as in 0014.
DO $make$
DECLARE searched text;
BEGIN
    FOREACH searched IN ARRAY ARRAY['text'] LOOP
        EXECUTE format($f$
            CREATE OR REPLACE FUNCTION %1$I(any_a text[], any_b text[], contains text, whole text, prefix text,
                                            lowered boolean, min_tier int, only_category text, wanted bigint,
                                            before timestamptz DEFAULT NULL)
            RETURNS TABLE (id uuid, created_at timestamptz, tier int)
            LANGUAGE plpgsql STABLE
            SET enable_seqscan = off SET enable_bitmapscan = on SET plan_cache_mode = force_generic_plan SET jit = off
            SET max_parallel_workers_per_gather = 0
            AS $$
            DECLARE
                first_keys int[];
                second_keys int[];
            BEGIN
                IF NOT lowered THEN
                    SELECT k.first, k.second INTO first_keys, second_keys FROM quote_search_pair_keys(%3$L, contains) k;
                END IF;
                -- One of the two indexes selects, the other is given no words (a NULL array: GIN reads nothing).
                IF first_keys IS NOT NULL THEN any_a := NULL; any_b := NULL; END IF;
                RETURN QUERY
                SELECT c.id, c.created_at, c.tier FROM (
                    SELECT t.id, t.created_at, quote_search_tier(t.%2$I, lowered, min_tier, whole, prefix) AS tier
                    FROM quotes t
                    WHERE (quote_word_pairs(t.%2$I) && first_keys AND quote_word_pairs(t.%2$I) && second_keys
                           OR quote_words_array(t.%2$I) && any_a AND quote_words_array(t.%2$I) && any_b)
                      -- coalesce: a test the trigram index cannot take over (the word index selects)
                      AND coalesce(t.%2$I ILIKE contains, false)
                      AND (only_category IS NULL OR t.category = only_category)
                      AND (before IS NULL OR t.created_at < before)
                    OFFSET 0) AS c  -- each row's tier computed once
                WHERE c.tier >= min_tier
                ORDER BY c.tier, c.created_at DESC, c.id DESC
                LIMIT wanted;
            END $$
            $f$, 'quote_search_by_words_' || searched, searched, CASE searched WHEN 'text' THEN 't' ELSE 'a' END);
    END LOOP;
END $make$;

-- quote_search_ranked_text (0007): a query of several words with a usable pair counts and ranks its
-- matches from the quotes holding its two rarest pairs' numbers; any other from the trigram index, as in 0007.
DO $make$
DECLARE searched text;
BEGIN
    FOREACH searched IN ARRAY ARRAY['text'] LOOP
        EXECUTE format($f$
            CREATE OR REPLACE FUNCTION %1$I(
                contains text, whole text, prefix text, only_category text, page_size bigint, page_offset bigint)
            RETURNS TABLE (total bigint, version bigint, id uuid, text text, author text, category text,
                           created_at timestamptz)
            LANGUAGE plpgsql STABLE
            SET enable_seqscan = off SET plan_cache_mode = force_generic_plan SET jit = off
            SET max_parallel_workers_per_gather = 0
            AS $$
            DECLARE
                first_keys int[];
                second_keys int[];
            BEGIN
                SELECT k.first, k.second INTO first_keys, second_keys FROM quote_search_pair_keys(%3$L, contains) k;
                RETURN QUERY
                    WITH matches AS MATERIALIZED (
                        (SELECT q.id, q.text, q.author, q.category, q.created_at FROM quotes q
                         WHERE first_keys IS NOT NULL
                           AND quote_word_pairs(q.%2$I) && first_keys AND quote_word_pairs(q.%2$I) && second_keys
                           -- coalesce: a test the trigram index cannot take over (the pairs select)
                           AND coalesce(q.%2$I ILIKE contains, false)
                           AND (only_category IS NULL OR q.category = only_category)
                         LIMIT 1001)
                        UNION ALL
                        (SELECT q.id, q.text, q.author, q.category, q.created_at FROM quotes q
                         WHERE first_keys IS NULL
                           AND q.%2$I ILIKE contains AND (only_category IS NULL OR q.category = only_category)
                         LIMIT 1001)),
                    counted AS (SELECT count(*) AS n FROM matches)
                    SELECT counted.n, (SELECT v.version FROM quotes_version v), r.id, r.text, r.author, r.category,
                           r.created_at
                    FROM counted LEFT JOIN LATERAL (
                        SELECT m.id, m.text, m.author, m.category, m.created_at FROM matches m
                        WHERE counted.n <= 1000
                        ORDER BY CASE WHEN m.%2$I !~* prefix THEN 2 WHEN m.%2$I ~* whole THEN 0 ELSE 1 END,
                                 m.created_at DESC, m.id DESC
                        LIMIT page_size OFFSET page_offset) AS r ON true;
            END $$
            $f$, 'quote_search_ranked_' || searched, searched, CASE searched WHEN 'text' THEN 't' ELSE 'a' END);
    END LOOP;
END $make$;
