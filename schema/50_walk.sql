-- A query with more than 1,000 matches: the tiers read in order, each newest first, stopping after the rows the
-- page needs. A tier with few candidates is read from the window of ordered words (quote_words_newest) and the
-- time-bucketed word index; one with many is walked along quotes' newest-first index with the tier's test (the
-- more matches, the shorter the walk). The walks' tests restate quote_search_tier one tier at a time: a tier
-- walked on its own needs a predicate of its own.

-- The first `wanted` rows in rank order, with their tiers.
CREATE FUNCTION search.quote_search_walk_text(
    contains text, whole text, prefix text, query text, only_category text, wanted bigint)
RETURNS TABLE (id uuid, text text, author text, category text, created_at timestamptz, tier integer)
LANGUAGE plpgsql STABLE
SET enable_seqscan = off SET enable_bitmapscan = off SET enable_hashjoin = off SET enable_mergejoin = off
SET plan_cache_mode = force_generic_plan SET jit = off SET max_parallel_workers_per_gather = 0
AS $$
DECLARE
    few bigint;  -- several words: candidates sorted below this many, else walked
    walk_from bigint;  -- a one-word tier of other words held by more quotes is walked with its test
    word_uses bigint;  -- one word: the quotes holding it
    earlier bigint;  -- one word: the quotes the tiers before may hold (at most)
    one_word text := search.quote_words_one_word(query);
    listed record;
    a_words text[];  -- several words: the two rarest pieces' words
    a_uses bigint;
    b_words text[];
    sorted_ids uuid[] := '{}';
    sorted_times timestamptz[] := '{}';
    sorted_tiers int[] := '{}';
    walked boolean[] := ARRAY[false, false, false];  -- per tier: walked newest-first
    since timestamptz := (SELECT w.since FROM quote_words_window w);
    filled bigint := 0;  -- rows known to be in the tiers before (at least)
    part record;
    quote_rows float8 := greatest((SELECT c.reltuples FROM pg_class c WHERE c.oid = 'quotes'::regclass), 0);
    exact_words text[];  -- several words: each piece as a word of its own, fewest quotes first
    window_ids uuid[];  -- one word: a later tier's newest quotes in the window of ordered words
    window_times timestamptz[];
    window_failed bigint;  -- of those, in an earlier tier
    window_before timestamptz;  -- the older quotes of the tier still to read: before this
    exact_uses bigint[];
BEGIN
    IF one_word IS NOT NULL THEN
        whole := '\m' || one_word || '\M';
        prefix := '\m' || one_word;
        -- Tier 0, the word itself: its newest quotes from the window of ordered words; older ones
        -- (when the window holds too few) from the word index, span by span.
        SELECT coalesce(sum(v.uses), 0) INTO word_uses FROM quote_vocabulary v
        WHERE v.word = one_word AND v.field = 't';
        IF word_uses > 0 THEN
            SELECT coalesce(array_agg(e.quote_id ORDER BY e.created_at DESC, e.quote_id DESC), '{}'),
                   coalesce(array_agg(e.created_at ORDER BY e.created_at DESC, e.quote_id DESC), '{}')
            INTO sorted_ids, sorted_times
            FROM (SELECT qw.quote_id, qw.created_at FROM quote_words_newest qw
                  WHERE qw.field = 't' AND qw.word = one_word AND qw.created_at >= since
                    AND (only_category IS NULL OR qw.category = only_category)
                  ORDER BY qw.created_at DESC, qw.quote_id DESC LIMIT wanted) AS e;
            filled := cardinality(sorted_ids);
            IF filled < wanted AND since > '-infinity'
               AND (filled < word_uses OR only_category IS NOT NULL) THEN
                -- (rows in rank order: as returned)
                SELECT sorted_ids || coalesce(array_agg(o.id), '{}'),
                       sorted_times || coalesce(array_agg(o.created_at), '{}')
                INTO sorted_ids, sorted_times
                FROM search.quote_search_newest_text(ARRAY[one_word], ARRAY[one_word], contains, whole, prefix, true, 0,
                          only_category, wanted - filled, word_uses, since) AS o;
                filled := cardinality(sorted_ids);
            END IF;
            sorted_tiers := array_fill(0, ARRAY[filled::int]);
        END IF;
        walk_from := quote_search_limit('walk_share') * quote_rows / 1000;
        earlier := word_uses;
        FOR k IN 1 .. 2 LOOP
            EXIT WHEN filled >= wanted;
            -- (one tier at a time: a page filled by tier 1 never asks the trigram index)
            listed := search.quote_search_tier_words('t', one_word, k);
            IF listed.words IS NULL OR listed.uses >= walk_from THEN
                walked[k + 1] := true;
                -- Without a category, at least the quotes of its most used word not in the tiers
                -- before are in the tier (`uses` counts a quote once per word); with one, perhaps none.
                IF only_category IS NULL THEN filled := filled + greatest(listed.most - earlier, 0); END IF;
            ELSIF listed.uses > 0 THEN
                -- The tier's newest quotes from the window of ordered words, each tested (a quote also
                -- holding a word of an earlier tier is not of this one); when none failed, they are the
                -- tier's newest, and only older ones are read from the word index.
                SELECT coalesce(array_agg(e.id ORDER BY e.created_at DESC, e.id DESC), '{}'),
                       coalesce(array_agg(e.created_at ORDER BY e.created_at DESC, e.id DESC), '{}'),
                       count(*) FILTER (WHERE e.tier <> k)
                INTO window_ids, window_times, window_failed
                FROM (SELECT n.id, n.created_at, search.quote_search_tier(t.text, true, k, whole, prefix) AS tier
                      FROM (SELECT DISTINCT qw.quote_id AS id, qw.created_at FROM quote_words_newest qw
                            WHERE qw.field = 't' AND qw.word = ANY (listed.words)
                              AND qw.created_at >= since
                              AND (only_category IS NULL OR qw.category = only_category)
                            ORDER BY qw.created_at DESC, qw.quote_id DESC LIMIT wanted - filled) AS n
                      JOIN quotes t ON t.id = n.id) AS e;
                window_before := NULL;
                IF window_failed = 0 THEN
                    sorted_ids := sorted_ids || window_ids;
                    sorted_times := sorted_times || window_times;
                    sorted_tiers := sorted_tiers || array_fill(k, ARRAY[cardinality(window_ids)]);
                    filled := filled + cardinality(window_ids);
                    window_before := CASE WHEN since > '-infinity' THEN since END;
                END IF;
                FOR part IN SELECT * FROM search.quote_search_newest_text(listed.words, listed.words, contains, whole,
                                                prefix, true, k, only_category, wanted - filled, listed.uses,
                                                window_before)
                            WHERE filled < wanted AND (window_failed > 0 OR window_before IS NOT NULL) LOOP
                    EXIT WHEN part.tier <> k;
                    sorted_ids := sorted_ids || part.id;
                    sorted_times := sorted_times || part.created_at;
                    sorted_tiers := sorted_tiers || k;
                    filled := filled + 1;
                END LOOP;
            END IF;
            earlier := earlier + listed.uses;
        END LOOP;
    ELSE
        FOR listed IN SELECT * FROM search.quote_search_pieces('t', query) AS p ORDER BY p.uses LIMIT 2 LOOP
            IF a_words IS NULL THEN a_words := listed.words; a_uses := listed.uses;
            ELSE b_words := listed.words; END IF;
        END LOOP;
        few := greatest(wanted, sqrt(wanted * quote_search_limit('walk_row_cost_text') / 100.0
                                     * quote_rows)::bigint);
        -- Tier 0 (the query as whole words) holds every piece as a word of its own.
        SELECT array_agg(v.word ORDER BY v.uses), array_agg(v.uses ORDER BY v.uses)
        INTO exact_words, exact_uses
        FROM quote_vocabulary v WHERE v.word = ANY (quote_words_array(query)) AND v.field = 't';
        IF a_words IS NOT NULL AND a_uses < few THEN
            SELECT coalesce(array_agg(s.id), '{}'), coalesce(array_agg(s.created_at), '{}'),
                   coalesce(array_agg(s.tier), '{}')
            INTO sorted_ids, sorted_times, sorted_tiers
            FROM search.quote_search_by_words_text(a_words, coalesce(b_words, a_words), contains, whole, prefix,
                      false, 0, only_category, wanted) AS s;
        ELSIF a_words IS NULL THEN
            walked := ARRAY[true, true, true];
        ELSIF coalesce(cardinality(exact_words), 0)
                  < (SELECT count(DISTINCT p) FROM unnest(quote_words_array(query)) AS p) THEN
            -- a piece is no word of the vocabulary: tier 0 is empty
            walked := ARRAY[false, true, true];
        ELSIF exact_uses[1] > quote_rows * quote_search_limit('walk_row_cost_text') / 100 THEN
            -- its rarest word is in so many quotes that the walk reads fewer rows
            walked := ARRAY[true, true, true];
        ELSE
            -- Tier 0 newest first: the rarest word's newest quotes from the window of ordered words,
            -- each tested; older ones from the word index, span by span; then the later tiers.
            SELECT coalesce(array_agg(e.id ORDER BY e.created_at DESC, e.id DESC), '{}'),
                   coalesce(array_agg(e.created_at ORDER BY e.created_at DESC, e.id DESC), '{}')
            INTO sorted_ids, sorted_times
            FROM (SELECT qw.quote_id AS id, qw.created_at
                  FROM quote_words_newest qw JOIN quotes t ON t.id = qw.quote_id
                  WHERE qw.field = 't' AND qw.word = exact_words[1] AND qw.created_at >= since
                    AND (only_category IS NULL OR qw.category = only_category)
                    -- ILIKE first: it costs a fraction of the regular expression, and most fail it
                    AND t.text ILIKE contains AND t.text ~* whole
                  ORDER BY qw.created_at DESC, qw.quote_id DESC LIMIT wanted) AS e;
            filled := cardinality(sorted_ids);
            IF filled < wanted AND since > '-infinity' THEN
                -- (`uses`: the quotes holding both words, as if independent)
                FOR part IN SELECT * FROM search.quote_search_newest_text(exact_words[1:1],
                        exact_words[least(cardinality(exact_words), 2):2], contains, whole, prefix, false,
                        0, only_category, wanted - filled,
                        greatest(exact_uses[1] * coalesce(exact_uses[2], exact_uses[1])
                                 / greatest(quote_rows, 1), 1)::bigint, since) LOOP
                    EXIT WHEN part.tier <> 0;
                    sorted_ids := sorted_ids || part.id;
                    sorted_times := sorted_times || part.created_at;
                    filled := filled + 1;
                END LOOP;
            END IF;
            sorted_tiers := array_fill(0, ARRAY[filled::int]);
            walked := ARRAY[false, true, true];
        END IF;
    END IF;
    IF NOT (walked[1] OR walked[2] OR walked[3]) THEN
        -- Every row is in the sorted arrays: the statement below without its walks, which would
        -- otherwise be set up (not run) on every call. The same rows in the same order.
        RETURN QUERY SELECT q.id, q.text, q.author, q.category, q.created_at, w.tier FROM (
            SELECT e.id, e.created_at, e.tier
            FROM unnest(sorted_ids, sorted_times, sorted_tiers)
                WITH ORDINALITY AS e (id, created_at, tier, n)
            ORDER BY e.tier, e.n LIMIT wanted) AS w
        JOIN quotes q ON q.id = w.id
        ORDER BY w.tier, w.created_at DESC, w.id DESC;
        RETURN;
    END IF;
    -- Tier by tier, in rank order (the sorted rows of a tier, then its walk): the walks after the page
    -- is full are not started.
    RETURN QUERY SELECT q.id, q.text, q.author, q.category, q.created_at, w.tier FROM (
        (SELECT e.id, e.created_at, e.tier FROM unnest(sorted_ids, sorted_times, sorted_tiers)
            AS e (id, created_at, tier) WHERE e.tier = 0)
        UNION ALL
        (SELECT t.id, t.created_at, 0 FROM quotes t
         WHERE walked[1] AND (only_category IS NULL OR t.category = only_category)
           AND CASE WHEN one_word IS NOT NULL THEN t.text ~* whole AND lower(t.text) ~ whole
                    ELSE t.text ~* whole AND t.text ILIKE contains END
         ORDER BY t.created_at DESC, t.id DESC LIMIT wanted)
        UNION ALL
        (SELECT e.id, e.created_at, e.tier FROM unnest(sorted_ids, sorted_times, sorted_tiers)
            AS e (id, created_at, tier) WHERE e.tier = 1)
        UNION ALL
        (SELECT t.id, t.created_at, 1 FROM quotes t
         WHERE walked[2] AND (only_category IS NULL OR t.category = only_category)
           AND CASE WHEN one_word IS NOT NULL THEN t.text ~* prefix AND lower(t.text) ~ prefix
                                                     AND NOT (t.text ~* whole AND lower(t.text) ~ whole)
                    ELSE t.text ~* prefix AND t.text ILIKE contains AND t.text !~* whole END
         ORDER BY t.created_at DESC, t.id DESC LIMIT wanted)
        UNION ALL
        (SELECT e.id, e.created_at, e.tier FROM unnest(sorted_ids, sorted_times, sorted_tiers)
            AS e (id, created_at, tier) WHERE e.tier = 2)
        UNION ALL
        (SELECT t.id, t.created_at, 2 FROM quotes t
         WHERE walked[3] AND (only_category IS NULL OR t.category = only_category)
           AND t.text ILIKE contains
           AND CASE WHEN one_word IS NOT NULL THEN NOT (t.text ~* prefix AND lower(t.text) ~ prefix)
                    ELSE t.text !~* prefix END
         ORDER BY t.created_at DESC, t.id DESC LIMIT wanted)
        LIMIT wanted) AS w
    JOIN quotes q ON q.id = w.id
    ORDER BY w.tier, w.created_at DESC, w.id DESC;
END
$$;

-- The same for authors.
CREATE FUNCTION search.quote_search_walk_author(
    contains text, whole text, prefix text, query text, only_category text, wanted bigint)
RETURNS TABLE (id uuid, text text, author text, category text, created_at timestamptz, tier integer)
LANGUAGE plpgsql STABLE
SET enable_seqscan = off SET enable_bitmapscan = off SET enable_hashjoin = off SET enable_mergejoin = off
SET plan_cache_mode = force_generic_plan SET jit = off SET max_parallel_workers_per_gather = 0
AS $$
DECLARE
    few bigint;  -- several words: candidates sorted below this many, else walked
    walk_from bigint;  -- a one-word tier of other words held by more quotes is walked with its test
    word_uses bigint;  -- one word: the quotes holding it
    earlier bigint;  -- one word: the quotes the tiers before may hold (at most)
    one_word text := search.quote_words_one_word(query);
    listed record;
    a_words text[];  -- several words: the two rarest pieces' words
    a_uses bigint;
    b_words text[];
    sorted_ids uuid[] := '{}';
    sorted_times timestamptz[] := '{}';
    sorted_tiers int[] := '{}';
    walked boolean[] := ARRAY[false, false, false];  -- per tier: walked newest-first
    since timestamptz := (SELECT w.since FROM quote_words_window w);
    filled bigint := 0;  -- rows known to be in the tiers before (at least)
    part record;
    quote_rows float8 := greatest((SELECT c.reltuples FROM pg_class c WHERE c.oid = 'quotes'::regclass), 0);
    exact_words text[];  -- several words: each piece as a word of its own, fewest quotes first
    window_ids uuid[];  -- one word: a later tier's newest quotes in the window of ordered words
    window_times timestamptz[];
    window_failed bigint;  -- of those, in an earlier tier
    window_before timestamptz;  -- the older quotes of the tier still to read: before this
    exact_uses bigint[];
BEGIN
    IF one_word IS NOT NULL THEN
        whole := '\m' || one_word || '\M';
        prefix := '\m' || one_word;
        -- Tier 0, the word itself: its newest quotes from the window of ordered words; older ones
        -- (when the window holds too few) from the word index, span by span.
        SELECT coalesce(sum(v.uses), 0) INTO word_uses FROM quote_vocabulary v
        WHERE v.word = one_word AND v.field = 'a';
        IF word_uses > 0 THEN
            SELECT coalesce(array_agg(e.quote_id ORDER BY e.created_at DESC, e.quote_id DESC), '{}'),
                   coalesce(array_agg(e.created_at ORDER BY e.created_at DESC, e.quote_id DESC), '{}')
            INTO sorted_ids, sorted_times
            FROM (SELECT qw.quote_id, qw.created_at FROM quote_words_newest qw
                  WHERE qw.field = 'a' AND qw.word = one_word AND qw.created_at >= since
                    AND (only_category IS NULL OR qw.category = only_category)
                  ORDER BY qw.created_at DESC, qw.quote_id DESC LIMIT wanted) AS e;
            filled := cardinality(sorted_ids);
            IF filled < wanted AND since > '-infinity'
               AND (filled < word_uses OR only_category IS NOT NULL) THEN
                -- (rows in rank order: as returned)
                SELECT sorted_ids || coalesce(array_agg(o.id), '{}'),
                       sorted_times || coalesce(array_agg(o.created_at), '{}')
                INTO sorted_ids, sorted_times
                FROM search.quote_search_newest_author(ARRAY[one_word], ARRAY[one_word], contains, whole, prefix, true,
                          0, only_category, wanted - filled, word_uses, since) AS o;
                filled := cardinality(sorted_ids);
            END IF;
            sorted_tiers := array_fill(0, ARRAY[filled::int]);
        END IF;
        walk_from := quote_search_limit('walk_share') * quote_rows / 1000;
        earlier := word_uses;
        FOR k IN 1 .. 2 LOOP
            EXIT WHEN filled >= wanted;
            -- (one tier at a time: a page filled by tier 1 never asks the trigram index)
            listed := search.quote_search_tier_words('a', one_word, k);
            IF listed.words IS NULL OR listed.uses >= walk_from THEN
                walked[k + 1] := true;
                -- Without a category, at least the quotes of its most used word not in the tiers
                -- before are in the tier (`uses` counts a quote once per word); with one, perhaps none.
                IF only_category IS NULL THEN filled := filled + greatest(listed.most - earlier, 0); END IF;
            ELSIF listed.uses > 0 THEN
                -- The tier's newest quotes from the window of ordered words, each tested (a quote also
                -- holding a word of an earlier tier is not of this one); when none failed, they are the
                -- tier's newest, and only older ones are read from the word index.
                SELECT coalesce(array_agg(e.id ORDER BY e.created_at DESC, e.id DESC), '{}'),
                       coalesce(array_agg(e.created_at ORDER BY e.created_at DESC, e.id DESC), '{}'),
                       count(*) FILTER (WHERE e.tier <> k)
                INTO window_ids, window_times, window_failed
                FROM (SELECT n.id, n.created_at, search.quote_search_tier(t.author, true, k, whole, prefix) AS tier
                      FROM (SELECT DISTINCT qw.quote_id AS id, qw.created_at FROM quote_words_newest qw
                            WHERE qw.field = 'a' AND qw.word = ANY (listed.words)
                              AND qw.created_at >= since
                              AND (only_category IS NULL OR qw.category = only_category)
                            ORDER BY qw.created_at DESC, qw.quote_id DESC LIMIT wanted - filled) AS n
                      JOIN quotes t ON t.id = n.id) AS e;
                window_before := NULL;
                IF window_failed = 0 THEN
                    sorted_ids := sorted_ids || window_ids;
                    sorted_times := sorted_times || window_times;
                    sorted_tiers := sorted_tiers || array_fill(k, ARRAY[cardinality(window_ids)]);
                    filled := filled + cardinality(window_ids);
                    window_before := CASE WHEN since > '-infinity' THEN since END;
                END IF;
                FOR part IN SELECT * FROM search.quote_search_newest_author(listed.words, listed.words, contains, whole,
                                                prefix, true, k, only_category, wanted - filled, listed.uses,
                                                window_before)
                            WHERE filled < wanted AND (window_failed > 0 OR window_before IS NOT NULL) LOOP
                    EXIT WHEN part.tier <> k;
                    sorted_ids := sorted_ids || part.id;
                    sorted_times := sorted_times || part.created_at;
                    sorted_tiers := sorted_tiers || k;
                    filled := filled + 1;
                END LOOP;
            END IF;
            earlier := earlier + listed.uses;
        END LOOP;
    ELSE
        FOR listed IN SELECT * FROM search.quote_search_pieces('a', query) AS p ORDER BY p.uses LIMIT 2 LOOP
            IF a_words IS NULL THEN a_words := listed.words; a_uses := listed.uses;
            ELSE b_words := listed.words; END IF;
        END LOOP;
        few := greatest(wanted, sqrt(wanted * quote_search_limit('walk_row_cost_author') / 100.0
                                     * quote_rows)::bigint);
        -- Tier 0 (the query as whole words) holds every piece as a word of its own.
        SELECT array_agg(v.word ORDER BY v.uses), array_agg(v.uses ORDER BY v.uses)
        INTO exact_words, exact_uses
        FROM quote_vocabulary v WHERE v.word = ANY (quote_words_array(query)) AND v.field = 'a';
        IF a_words IS NOT NULL AND a_uses < few THEN
            SELECT coalesce(array_agg(s.id), '{}'), coalesce(array_agg(s.created_at), '{}'),
                   coalesce(array_agg(s.tier), '{}')
            INTO sorted_ids, sorted_times, sorted_tiers
            FROM search.quote_search_by_words_author(a_words, coalesce(b_words, a_words), contains, whole, prefix,
                      false, 0, only_category, wanted) AS s;
        ELSIF a_words IS NULL THEN
            walked := ARRAY[true, true, true];
        ELSIF coalesce(cardinality(exact_words), 0)
                  < (SELECT count(DISTINCT p) FROM unnest(quote_words_array(query)) AS p) THEN
            -- a piece is no word of the vocabulary: tier 0 is empty
            walked := ARRAY[false, true, true];
        ELSIF exact_uses[1] > quote_rows * quote_search_limit('walk_row_cost_author') / 100 THEN
            -- its rarest word is in so many quotes that the walk reads fewer rows
            walked := ARRAY[true, true, true];
        ELSE
            -- Tier 0 newest first: the rarest word's newest quotes from the window of ordered words,
            -- each tested; older ones from the word index, span by span; then the later tiers.
            SELECT coalesce(array_agg(e.id ORDER BY e.created_at DESC, e.id DESC), '{}'),
                   coalesce(array_agg(e.created_at ORDER BY e.created_at DESC, e.id DESC), '{}')
            INTO sorted_ids, sorted_times
            FROM (SELECT qw.quote_id AS id, qw.created_at
                  FROM quote_words_newest qw JOIN quotes t ON t.id = qw.quote_id
                  WHERE qw.field = 'a' AND qw.word = exact_words[1] AND qw.created_at >= since
                    AND (only_category IS NULL OR qw.category = only_category)
                    -- ILIKE first: it costs a fraction of the regular expression, and most fail it
                    AND t.author ILIKE contains AND t.author ~* whole
                  ORDER BY qw.created_at DESC, qw.quote_id DESC LIMIT wanted) AS e;
            filled := cardinality(sorted_ids);
            IF filled < wanted AND since > '-infinity' THEN
                -- (`uses`: the quotes holding both words, as if independent)
                FOR part IN SELECT * FROM search.quote_search_newest_author(exact_words[1:1],
                        exact_words[least(cardinality(exact_words), 2):2], contains, whole, prefix, false,
                        0, only_category, wanted - filled,
                        greatest(exact_uses[1] * coalesce(exact_uses[2], exact_uses[1])
                                 / greatest(quote_rows, 1), 1)::bigint, since) LOOP
                    EXIT WHEN part.tier <> 0;
                    sorted_ids := sorted_ids || part.id;
                    sorted_times := sorted_times || part.created_at;
                    filled := filled + 1;
                END LOOP;
            END IF;
            sorted_tiers := array_fill(0, ARRAY[filled::int]);
            walked := ARRAY[false, true, true];
        END IF;
    END IF;
    IF NOT (walked[1] OR walked[2] OR walked[3]) THEN
        -- Every row is in the sorted arrays: the statement below without its walks, which would
        -- otherwise be set up (not run) on every call. The same rows in the same order.
        RETURN QUERY SELECT q.id, q.text, q.author, q.category, q.created_at, w.tier FROM (
            SELECT e.id, e.created_at, e.tier
            FROM unnest(sorted_ids, sorted_times, sorted_tiers)
                WITH ORDINALITY AS e (id, created_at, tier, n)
            ORDER BY e.tier, e.n LIMIT wanted) AS w
        JOIN quotes q ON q.id = w.id
        ORDER BY w.tier, w.created_at DESC, w.id DESC;
        RETURN;
    END IF;
    -- Tier by tier, in rank order (the sorted rows of a tier, then its walk): the walks after the page
    -- is full are not started.
    RETURN QUERY SELECT q.id, q.text, q.author, q.category, q.created_at, w.tier FROM (
        (SELECT e.id, e.created_at, e.tier FROM unnest(sorted_ids, sorted_times, sorted_tiers)
            AS e (id, created_at, tier) WHERE e.tier = 0)
        UNION ALL
        (SELECT t.id, t.created_at, 0 FROM quotes t
         WHERE walked[1] AND (only_category IS NULL OR t.category = only_category)
           AND CASE WHEN one_word IS NOT NULL
                    THEN t.author ILIKE contains AND t.author ~* whole AND lower(t.author) ~ whole
                    ELSE t.author ~* whole AND t.author ILIKE contains END
         ORDER BY t.created_at DESC, t.id DESC LIMIT wanted)
        UNION ALL
        (SELECT e.id, e.created_at, e.tier FROM unnest(sorted_ids, sorted_times, sorted_tiers)
            AS e (id, created_at, tier) WHERE e.tier = 1)
        UNION ALL
        (SELECT t.id, t.created_at, 1 FROM quotes t
         WHERE walked[2] AND (only_category IS NULL OR t.category = only_category)
           AND CASE WHEN one_word IS NOT NULL THEN t.author ~* prefix AND lower(t.author) ~ prefix
                                                     AND NOT (t.author ~* whole AND lower(t.author) ~ whole)
                    ELSE t.author ~* prefix AND t.author ILIKE contains AND t.author !~* whole END
         ORDER BY t.created_at DESC, t.id DESC LIMIT wanted)
        UNION ALL
        (SELECT e.id, e.created_at, e.tier FROM unnest(sorted_ids, sorted_times, sorted_tiers)
            AS e (id, created_at, tier) WHERE e.tier = 2)
        UNION ALL
        (SELECT t.id, t.created_at, 2 FROM quotes t
         WHERE walked[3] AND (only_category IS NULL OR t.category = only_category)
           AND t.author ILIKE contains
           AND CASE WHEN one_word IS NOT NULL THEN NOT (t.author ~* prefix AND lower(t.author) ~ prefix)
                    ELSE t.author !~* prefix END
         ORDER BY t.created_at DESC, t.id DESC LIMIT wanted)
        LIMIT wanted) AS w
    JOIN quotes q ON q.id = w.id
    ORDER BY w.tier, w.created_at DESC, w.id DESC;
END
$$;
