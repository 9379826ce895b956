-- A quote of several words' candidates (and one word's, when few) are tested with ILIKE, the test that decides what
-- matches. For a multibyte encoding PostgreSQL's ILIKE lowercases the whole text first, character by character
-- through the C library (towlower), which made it most of what each candidate costs, and candidates grow with the
-- data (issue 31: `ephemeral fjord` grew more than the other terms from 100,000 to 1,000,000 quotes). Most matches
-- hold the query as typed, a byte comparison (LIKE) away: LIKE is tried first and ILIKE only where it fails. Any
-- text LIKE a pattern is ILIKE it too (lowercasing maps a character to one character and leaves `%`, `_` and `\`
-- alone), so what matches is unchanged. Figures: bench/README.md ("Session 39").
--
-- * quote_text_holds: the test, written once; a plain SQL expression, so PostgreSQL inlines it. Its coalesce keeps
--   the trigram index from taking it over where a word index selects (as the tests it replaces did).
-- * quote_search_matches_text and quote_search_by_words_text (0061): the same statements with it.
-- * quote_search_ranked_text (0048), the count of several words with more candidates than the words' lists read:
--   the same with it, and each match's tier from quote_search_tier (0061: the whole word tested first, so a
--   whole-word match costs one regular expression instead of two; the tier is the same).
-- * quote_search_ranked_author (0007): its tiers from quote_search_tier too (an author's name and its query
--   differ in case as a rule, so LIKE first would only add a test there).

CREATE FUNCTION quote_text_holds(value text, pattern text)
    RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT coalesce(value LIKE pattern OR value ILIKE pattern, false) $$;

CREATE OR REPLACE FUNCTION quote_search_matches_text(any_a text[], any_b text[], contains text, only_category text,
                                                     before timestamptz, wanted bigint)
RETURNS SETOF quote_search_match
LANGUAGE plpgsql STABLE
SET enable_seqscan = off SET enable_bitmapscan = on SET plan_cache_mode = force_generic_plan SET jit = off
SET max_parallel_workers_per_gather = 0
AS $$
DECLARE
    first_keys int[];
    second_keys int[];
BEGIN
    SELECT k.first, k.second INTO first_keys, second_keys FROM quote_search_pair_keys('t', contains) k;
    -- One of the two indexes selects, the other is given no words (a NULL array: GIN reads nothing).
    IF first_keys IS NOT NULL THEN any_a := NULL; any_b := NULL; END IF;
    RETURN QUERY
        SELECT t.id, t.text, t.author, t.category, t.created_at FROM quotes t
        WHERE (quote_word_pairs(t.text) && first_keys AND quote_word_pairs(t.text) && second_keys
               OR quote_words_array(t.text) && any_a AND quote_words_array(t.text) && any_b)
          AND quote_text_holds(t.text, contains)
          AND (only_category IS NULL OR t.category = only_category)
          AND (before IS NULL OR t.created_at < before)
        LIMIT wanted;
END $$;

CREATE OR REPLACE FUNCTION quote_search_by_words_text(any_a text[], any_b text[], contains text, whole text,
                                                      prefix text, lowered boolean, min_tier int, only_category text,
                                                      wanted bigint, before timestamptz DEFAULT NULL)
RETURNS TABLE (id uuid, created_at timestamptz, tier int)
LANGUAGE plpgsql STABLE
SET enable_seqscan = off SET enable_bitmapscan = on SET plan_cache_mode = force_generic_plan SET jit = off
SET max_parallel_workers_per_gather = 0
AS $$
BEGIN
    IF NOT lowered THEN
        RETURN QUERY
        SELECT c.id, c.created_at, c.tier FROM (
            SELECT m.id, m.created_at, quote_search_tier(m.text, false, 0, whole, prefix) AS tier
            FROM quote_search_matches_text(any_a, any_b, contains, only_category, before, NULL) AS m
            OFFSET 0) AS c  -- each row's tier computed once
        WHERE c.tier >= min_tier
        ORDER BY c.tier, c.created_at DESC, c.id DESC
        LIMIT wanted;
        RETURN;
    END IF;
    RETURN QUERY
    SELECT c.id, c.created_at, c.tier FROM (
        SELECT t.id, t.created_at, quote_search_tier(t.text, true, min_tier, whole, prefix) AS tier
        FROM quotes t
        WHERE quote_words_array(t.text) && any_a AND quote_words_array(t.text) && any_b
          AND quote_text_holds(t.text, contains)
          AND (only_category IS NULL OR t.category = only_category)
          AND (before IS NULL OR t.created_at < before)
        OFFSET 0) AS c  -- each row's tier computed once
    WHERE c.tier >= min_tier
    ORDER BY c.tier, c.created_at DESC, c.id DESC
    LIMIT wanted;
END $$;

CREATE OR REPLACE FUNCTION quote_search_ranked_text(contains text, whole text, prefix text, only_category text,
                                                    page_size bigint, page_offset bigint)
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
    SELECT k.first, k.second INTO first_keys, second_keys FROM quote_search_pair_keys('t', contains) k;
    RETURN QUERY
        WITH matches AS MATERIALIZED (
            (SELECT q.id, q.text, q.author, q.category, q.created_at FROM quotes q
             WHERE first_keys IS NOT NULL
               AND quote_word_pairs(q.text) && first_keys AND quote_word_pairs(q.text) && second_keys
               AND quote_text_holds(q.text, contains)
               AND (only_category IS NULL OR q.category = only_category)
             LIMIT 1001)
            UNION ALL
            (SELECT q.id, q.text, q.author, q.category, q.created_at FROM quotes q
             WHERE first_keys IS NULL
               AND q.text ILIKE contains AND (only_category IS NULL OR q.category = only_category)
             LIMIT 1001)),
        counted AS (SELECT count(*) AS n FROM matches)
        SELECT counted.n, (SELECT v.version FROM quotes_version v), r.id, r.text, r.author, r.category,
               r.created_at
        FROM counted LEFT JOIN LATERAL (
            SELECT m.id, m.text, m.author, m.category, m.created_at FROM matches m
            WHERE counted.n <= 1000
            ORDER BY quote_search_tier(m.text, false, 0, whole, prefix), m.created_at DESC, m.id DESC
            LIMIT page_size OFFSET page_offset) AS r ON true;
END $$;

CREATE OR REPLACE FUNCTION quote_search_ranked_author(contains text, whole text, prefix text, only_category text,
                                                      page_size bigint, page_offset bigint)
RETURNS TABLE (total bigint, version bigint, id uuid, text text, author text, category text,
               created_at timestamptz)
LANGUAGE plpgsql STABLE
SET enable_seqscan = off SET plan_cache_mode = force_generic_plan SET jit = off
SET max_parallel_workers_per_gather = 0
AS $$
BEGIN
    RETURN QUERY
        WITH matches AS MATERIALIZED (
            SELECT q.id, q.text, q.author, q.category, q.created_at FROM quotes q
            WHERE q.author ILIKE contains AND (only_category IS NULL OR q.category = only_category)
            LIMIT 1001),
        counted AS (SELECT count(*) AS n FROM matches)
        SELECT counted.n, (SELECT v.version FROM quotes_version v), r.id, r.text, r.author, r.category,
               r.created_at
        FROM counted LEFT JOIN LATERAL (
            SELECT m.id, m.text, m.author, m.category, m.created_at FROM matches m
            WHERE counted.n <= 1000
            ORDER BY quote_search_tier(m.author, false, 0, whole, prefix), m.created_at DESC, m.id DESC
            LIMIT page_size OFFSET page_offset) AS r ON true;
END $$;
