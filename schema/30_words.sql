-- Candidates from the word indexes of quotes (quotes_text_words_idx, quotes_author_words_idx: GIN on
-- quote_words_array and quote_time_buckets; quotes_text_pairs_idx: GIN on quote_word_pairs): only the quotes
-- holding the words a query's pieces allow are read, then tested with ILIKE and ranked.

-- A match of several words: the columns a page needs, carried in arrays while the tiers are computed.
CREATE TYPE search.quote_search_match AS (id uuid, text text, author text, category text, created_at timestamptz);

-- The matches of a text query of several words, unordered, at most `wanted`: through its rarest adjacent pairs when
-- usable, else its two rarest pieces' words.
CREATE FUNCTION search.quote_search_matches_text(
    any_a text[], any_b text[], contains text, only_category text, before timestamptz, wanted bigint)
RETURNS SETOF search.quote_search_match
LANGUAGE plpgsql STABLE
SET enable_seqscan = off SET enable_bitmapscan = on SET plan_cache_mode = force_generic_plan SET jit = off
SET max_parallel_workers_per_gather = 0
AS $$
DECLARE
    first_keys int[];
    second_keys int[];
BEGIN
    SELECT k.first, k.second INTO first_keys, second_keys FROM search.quote_search_pair_keys('t', contains) k;
    -- One of the two indexes selects, the other is given no words (a NULL array: GIN reads nothing).
    IF first_keys IS NOT NULL THEN any_a := NULL; any_b := NULL; END IF;
    RETURN QUERY
        SELECT t.id, t.text, t.author, t.category, t.created_at FROM quotes t
        WHERE (quote_word_pairs(t.text) && first_keys AND quote_word_pairs(t.text) && second_keys
               OR quote_words_array(t.text) && any_a AND quote_words_array(t.text) && any_b)
          AND search.quote_text_holds(t.text, contains)
          AND (only_category IS NULL OR t.category = only_category)
          AND (before IS NULL OR t.created_at < before)
        LIMIT wanted;
END
$$;

-- Matches holding a word of `any_a` and one of `any_b`, ranked, at most `wanted`, of tier `min_tier` or later.
-- `lowered`: the words are one tier's of a one-word query (see quote_search_tier).
CREATE FUNCTION search.quote_search_by_words_text(
    any_a text[], any_b text[], contains text, whole text, prefix text, lowered boolean, min_tier integer,
    only_category text, wanted bigint, before timestamptz DEFAULT NULL)
RETURNS TABLE (id uuid, created_at timestamptz, tier integer)
LANGUAGE plpgsql STABLE
SET enable_seqscan = off SET enable_bitmapscan = on SET plan_cache_mode = force_generic_plan SET jit = off
SET max_parallel_workers_per_gather = 0
AS $$
BEGIN
    IF NOT lowered THEN
        RETURN QUERY
        SELECT c.id, c.created_at, c.tier FROM (
            SELECT m.id, m.created_at, search.quote_search_tier(m.text, false, 0, whole, prefix) AS tier
            FROM search.quote_search_matches_text(any_a, any_b, contains, only_category, before, NULL) AS m
            OFFSET 0) AS c  -- each row's tier computed once
        WHERE c.tier >= min_tier
        ORDER BY c.tier, c.created_at DESC, c.id DESC
        LIMIT wanted;
        RETURN;
    END IF;
    RETURN QUERY
    SELECT c.id, c.created_at, c.tier FROM (
        SELECT t.id, t.created_at, search.quote_search_tier(t.text, true, min_tier, whole, prefix) AS tier
        FROM quotes t
        WHERE quote_words_array(t.text) && any_a AND quote_words_array(t.text) && any_b
          AND search.quote_text_holds(t.text, contains)
          AND (only_category IS NULL OR t.category = only_category)
          AND (before IS NULL OR t.created_at < before)
        OFFSET 0) AS c  -- each row's tier computed once
    WHERE c.tier >= min_tier
    ORDER BY c.tier, c.created_at DESC, c.id DESC
    LIMIT wanted;
END
$$;

-- The same for authors.
CREATE FUNCTION search.quote_search_by_words_author(
    any_a text[], any_b text[], contains text, whole text, prefix text, lowered boolean, min_tier integer,
    only_category text, wanted bigint, before timestamptz DEFAULT NULL)
RETURNS TABLE (id uuid, created_at timestamptz, tier integer)
LANGUAGE plpgsql STABLE
SET enable_seqscan = off SET enable_bitmapscan = on SET plan_cache_mode = force_generic_plan SET jit = off
SET max_parallel_workers_per_gather = 0
AS $$
BEGIN
    RETURN QUERY
    SELECT c.id, c.created_at, c.tier FROM (
        SELECT t.id, t.created_at, search.quote_search_tier(t.author, lowered, min_tier, whole, prefix) AS tier
        FROM quotes t
        WHERE quote_words_array(t.author) && any_a AND quote_words_array(t.author) && any_b
          -- coalesce: a test the trigram index cannot take over (the word index selects)
          AND coalesce(t.author ILIKE contains, false)
          AND (only_category IS NULL OR t.category = only_category)
          AND (before IS NULL OR t.created_at < before)
        OFFSET 0) AS c  -- each row's tier computed once
    WHERE c.tier >= min_tier
    ORDER BY c.tier, c.created_at DESC, c.id DESC
    LIMIT wanted;
END
$$;

-- As quote_search_by_words_text for many candidates (`uses`): read newest first through the time buckets of the
-- word index, span by span (each sized to hold about the rows still wanted), until `wanted` rows of `min_tier`
-- are found or the oldest quote is passed.
CREATE FUNCTION search.quote_search_newest_text(
    any_a text[], any_b text[], contains text, whole text, prefix text, lowered boolean, min_tier integer,
    only_category text, wanted bigint, uses bigint, before timestamptz)
RETURNS TABLE (id uuid, created_at timestamptz, tier integer)
LANGUAGE plpgsql STABLE
SET enable_seqscan = off SET enable_bitmapscan = on SET plan_cache_mode = force_generic_plan SET jit = off
SET max_parallel_workers_per_gather = 0
AS $$
DECLARE
    newest_us bigint := quote_time_us((SELECT max(q.created_at) FROM quotes q));
    oldest_us bigint := quote_time_us((SELECT min(q.created_at) FROM quotes q));
    level int;
    per_bucket float8;  -- the words' quotes a bucket of the level holds, if spread evenly
    boost float8 := 1;  -- doubled after each read that did not fill the page
    n bigint;  -- buckets read at once
    newest_bucket bigint;
    buckets bigint[];
    upper_us bigint;  -- the span read: [lower_us, upper_us)
    lower_us bigint;
    found bigint := 0;  -- rows of min_tier read
    ids uuid[] := '{}';
    times timestamptz[] := '{}';
    tiers int[] := '{}';
BEGIN
    IF uses < quote_search_limit('sorted_reads') OR newest_us IS NULL THEN
        RETURN QUERY SELECT * FROM search.quote_search_by_words_text(any_a, any_b, contains, whole, prefix, lowered,
                                        min_tier, only_category, wanted, before);
        RETURN;
    END IF;
    upper_us := least(newest_us + 1, quote_time_us(before));
    WHILE found < wanted AND upper_us > oldest_us LOOP
        -- buckets of the longest level holding at most half the rows still wanted (or 36 minutes),
        -- as many as those rows need and a fifth more (the newest bucket is partly filled)
        level := 5;
        per_bucket := uses * 2.0 ^ 46 / greatest(newest_us - oldest_us, 1);
        WHILE level > 0 AND per_bucket > (wanted - found) * boost / 2 LOOP
            level := level - 1;
            per_bucket := per_bucket / 8;
        END LOOP;
        n := least(ceil((wanted - found) * 1.2 * boost / per_bucket + 0.5), 64);
        newest_bucket := (upper_us - 1) >> (31 + 3 * level);
        buckets := ARRAY(SELECT (level::bigint << 52) + newest_bucket - k
                         FROM generate_series(0, n - 1) AS k);
        lower_us := (newest_bucket - n + 1) << (31 + 3 * level);
        SELECT ids || coalesce(array_agg(c.id), '{}'), times || coalesce(array_agg(c.created_at), '{}'),
               tiers || coalesce(array_agg(c.tier), '{}'),
               found + count(*) FILTER (WHERE c.tier = min_tier)
        INTO ids, times, tiers, found
        FROM (SELECT t.id, t.created_at,
                     search.quote_search_tier(t.text, lowered, min_tier, whole, prefix) AS tier
              FROM quotes t
              WHERE quote_words_array(t.text) && any_a AND quote_words_array(t.text) && any_b
                AND quote_time_buckets(t.created_at) && buckets
                -- the span's own bounds (the newest bucket may end after upper_us); a function of the
                -- time, so that no other index is asked
                AND quote_time_us(t.created_at) >= lower_us AND quote_time_us(t.created_at) < upper_us
                AND coalesce(t.text ILIKE contains, false)
                AND (only_category IS NULL OR t.category = only_category)
              OFFSET 0) AS c
        WHERE c.tier >= min_tier;
        upper_us := lower_us;
        boost := boost * 2;
    END LOOP;
    RETURN QUERY SELECT e.id, e.created_at, e.tier
        FROM unnest(ids, times, tiers) AS e (id, created_at, tier)
        ORDER BY e.tier, e.created_at DESC, e.id DESC LIMIT wanted;
END
$$;

-- The same for authors.
CREATE FUNCTION search.quote_search_newest_author(
    any_a text[], any_b text[], contains text, whole text, prefix text, lowered boolean, min_tier integer,
    only_category text, wanted bigint, uses bigint, before timestamptz)
RETURNS TABLE (id uuid, created_at timestamptz, tier integer)
LANGUAGE plpgsql STABLE
SET enable_seqscan = off SET enable_bitmapscan = on SET plan_cache_mode = force_generic_plan SET jit = off
SET max_parallel_workers_per_gather = 0
AS $$
DECLARE
    newest_us bigint := quote_time_us((SELECT max(q.created_at) FROM quotes q));
    oldest_us bigint := quote_time_us((SELECT min(q.created_at) FROM quotes q));
    level int;
    per_bucket float8;  -- the words' quotes a bucket of the level holds, if spread evenly
    boost float8 := 1;  -- doubled after each read that did not fill the page
    n bigint;  -- buckets read at once
    newest_bucket bigint;
    buckets bigint[];
    upper_us bigint;  -- the span read: [lower_us, upper_us)
    lower_us bigint;
    found bigint := 0;  -- rows of min_tier read
    ids uuid[] := '{}';
    times timestamptz[] := '{}';
    tiers int[] := '{}';
BEGIN
    IF uses < quote_search_limit('sorted_reads') OR newest_us IS NULL THEN
        RETURN QUERY SELECT * FROM search.quote_search_by_words_author(any_a, any_b, contains, whole, prefix, lowered,
                                        min_tier, only_category, wanted, before);
        RETURN;
    END IF;
    upper_us := least(newest_us + 1, quote_time_us(before));
    WHILE found < wanted AND upper_us > oldest_us LOOP
        -- buckets of the longest level holding at most half the rows still wanted (or 36 minutes),
        -- as many as those rows need and a fifth more (the newest bucket is partly filled)
        level := 5;
        per_bucket := uses * 2.0 ^ 46 / greatest(newest_us - oldest_us, 1);
        WHILE level > 0 AND per_bucket > (wanted - found) * boost / 2 LOOP
            level := level - 1;
            per_bucket := per_bucket / 8;
        END LOOP;
        n := least(ceil((wanted - found) * 1.2 * boost / per_bucket + 0.5), 64);
        newest_bucket := (upper_us - 1) >> (31 + 3 * level);
        buckets := ARRAY(SELECT (level::bigint << 52) + newest_bucket - k
                         FROM generate_series(0, n - 1) AS k);
        lower_us := (newest_bucket - n + 1) << (31 + 3 * level);
        SELECT ids || coalesce(array_agg(c.id), '{}'), times || coalesce(array_agg(c.created_at), '{}'),
               tiers || coalesce(array_agg(c.tier), '{}'),
               found + count(*) FILTER (WHERE c.tier = min_tier)
        INTO ids, times, tiers, found
        FROM (SELECT t.id, t.created_at,
                     search.quote_search_tier(t.author, lowered, min_tier, whole, prefix) AS tier
              FROM quotes t
              WHERE quote_words_array(t.author) && any_a AND quote_words_array(t.author) && any_b
                AND quote_time_buckets(t.created_at) && buckets
                -- the span's own bounds (the newest bucket may end after upper_us); a function of the
                -- time, so that no other index is asked
                AND quote_time_us(t.created_at) >= lower_us AND quote_time_us(t.created_at) < upper_us
                AND coalesce(t.author ILIKE contains, false)
                AND (only_category IS NULL OR t.category = only_category)
              OFFSET 0) AS c
        WHERE c.tier >= min_tier;
        upper_us := lower_us;
        boost := boost * 2;
    END LOOP;
    RETURN QUERY SELECT e.id, e.created_at, e.tier
        FROM unnest(ids, times, tiers) AS e (id, created_at, tier)
        ORDER BY e.tier, e.created_at DESC, e.id DESC LIMIT wanted;
END
$$;
