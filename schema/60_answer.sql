-- The first call of every search (QuoteSearch.fromWords): from the vocabulary and the word indexes, the exact
-- total and the page, when that is cheap to know; a NULL total when it is not (QuoteSearch then asks
-- quote_search_ranked_*). `walked`: the page was the walk's, so at this version of the quotes the walk alone
-- answers the next page.

-- The total and the page (rows of NULLs when there is only a total).
CREATE FUNCTION search.quote_search_words_text(
    query text, contains text, whole text, prefix text, only_category text, page_size bigint, page_offset bigint)
RETURNS TABLE (
    total bigint, version bigint, id uuid, text text, author text, category text, created_at timestamptz,
    walked boolean)
LANGUAGE plpgsql STABLE
SET enable_seqscan = off SET plan_cache_mode = force_generic_plan SET jit = off SET max_parallel_workers_per_gather = 0
AS $$
DECLARE
    exact bigint := quote_search_limit('exact_total');
    one_word text := search.quote_words_one_word(query);
    tier_lists text[] := ARRAY[NULL, NULL, NULL];  -- one word: each tier's words, as text
    tiers record;  -- one word: quote_search_vocabulary_tiers
    candidates bigint := 0;
    counted bigint;
    listed record;
    a_words text[];  -- several words: the two rarest pieces' words and quotes
    a_uses bigint;
    b_words text[];
    b_uses bigint;
    -- several words: the matches newest first, and the tiers of the first `ranked` of them
    match_rows search.quote_search_match[];
    match_tiers int[] := '{}';
    ranked int := 0;
    chunk int;
BEGIN
    -- A word of three characters or more that no word of the vocabulary contains has no match: the
    -- answer from one probe of the trigram index, before the three tiers' statement.
    IF char_length(one_word) >= 3 AND NOT search.quote_search_vocabulary_holds('t', one_word) THEN
        RETURN QUERY SELECT 0::bigint, qv.version, NULL::uuid, NULL::text, NULL::text, NULL::text,
                            NULL::timestamptz, false FROM quotes_version qv;
        RETURN;
    END IF;
    IF one_word IS NOT NULL THEN
        whole := '\m' || one_word || '\M';
        prefix := '\m' || one_word;
        counted := -1;  -- to be read
        tiers := search.quote_search_vocabulary_tiers('t', one_word);
        FOR k IN 0 .. 2 LOOP
            -- `uses` counts every category
            IF tiers.most[k + 1] > exact AND only_category IS NULL THEN counted := exact + 1; EXIT; END IF;
            IF tiers.words[k + 1] IS NULL THEN counted := NULL; EXIT; END IF;
            tier_lists[k + 1] := tiers.words[k + 1];
            candidates := candidates + tiers.uses[k + 1];
        END LOOP;
    ELSE
        FOR listed IN SELECT * FROM search.quote_search_pieces('t', query) AS p ORDER BY p.uses LIMIT 2 LOOP
            IF a_words IS NULL THEN a_words := listed.words; a_uses := listed.uses;
            ELSE b_words := listed.words; b_uses := listed.uses; END IF;
        END LOOP;
        -- Two pieces: the quotes holding both, as if independent (a guess; reading them costs at most
        -- the rarer piece's quotes).
        candidates := CASE WHEN b_words IS NULL THEN a_uses
                           ELSE search.quote_search_both_pieces(a_uses, b_uses) END;
        counted := CASE WHEN a_words IS NULL THEN NULL ELSE -1 END;
    END IF;
    IF counted = -1 THEN
        counted := CASE WHEN candidates > quote_search_limit('ranked_reads') THEN NULL
                        WHEN candidates = 0 THEN 0 ELSE -1 END;
    END IF;
    IF counted = -1 AND one_word IS NOT NULL AND candidates >= quote_search_limit('sorted_reads') THEN
        -- One word, many candidates: its matches are the quotes holding a word of the tiers, counted
        -- from the word index alone; the page is the walk's (each tier newest first, only the rows it
        -- needs). With fewer candidates, all are read and sorted (below).
        SELECT count(*) INTO counted FROM (
            SELECT 1 FROM quotes t
            WHERE quote_words_array(t.text)
                  && (tier_lists[1]::text[] || tier_lists[2]::text[] || tier_lists[3]::text[])
              AND (only_category IS NULL OR t.category = only_category)
            LIMIT exact + 1) AS m;
        RETURN QUERY
            SELECT counted, (SELECT qv.version FROM quotes_version qv), w.id, w.text, w.author,
                   w.category, w.created_at, counted BETWEEN 1 AND exact
            FROM (SELECT) AS one LEFT JOIN LATERAL (
                SELECT r.* FROM search.quote_search_walk_text(contains, whole, prefix, query, only_category,
                                                       page_offset + page_size)
                    WITH ORDINALITY AS r (id, text, author, category, created_at, tier, n)
                WHERE counted BETWEEN 1 AND exact ORDER BY r.n OFFSET page_offset) AS w ON true
            ORDER BY w.n;
        RETURN;
    END IF;
    IF counted IS DISTINCT FROM -1 THEN
        RETURN QUERY SELECT counted, qv.version, NULL::uuid, NULL::text, NULL::text, NULL::text,
                            NULL::timestamptz, false FROM quotes_version qv;
        RETURN;
    END IF;
    IF one_word IS NULL THEN
        -- Several words: every match (ILIKE decides; at most exact + 1), newest first, counted. Their tiers (two
        -- regular expressions, a row's costly part) are then computed newest first, chunk by chunk, only until the
        -- page is decided: once page_offset + page_size matches of tier 0 are known, the page is among them (every
        -- match not ranked yet is older, and of tier 0 at best).
        SELECT coalesce(array_agg(m ORDER BY m.created_at DESC, m.id DESC), '{}') INTO match_rows
        FROM search.quote_search_matches_text(a_words, coalesce(b_words, a_words), contains, only_category, NULL,
                                              exact + 1) AS m;
        counted := cardinality(match_rows);
        chunk := least(page_offset + page_size, exact + 1);
        WHILE counted <= exact AND ranked < counted
              AND cardinality(array_positions(match_tiers, 0)) < page_offset + page_size LOOP
            SELECT match_tiers
                   || coalesce(array_agg(search.quote_search_tier(e.text, false, 0, whole, prefix) ORDER BY e.n), '{}')
            INTO match_tiers
            FROM unnest(match_rows[ranked + 1 : ranked + chunk]) WITH ORDINALITY AS e (id, text, author, category,
                                                                                   created_at, n);
            ranked := cardinality(match_tiers);
            chunk := least(chunk * 2, exact + 1);
        END LOOP;
        RETURN QUERY
            SELECT counted, (SELECT qv.version FROM quotes_version qv), r.id, r.text, r.author, r.category,
                   r.created_at, false
            FROM (SELECT) AS one LEFT JOIN LATERAL (
                SELECT e.* FROM unnest(match_rows[1:ranked], match_tiers)
                    WITH ORDINALITY AS e (id, text, author, category, created_at, tier, n)
                WHERE counted <= exact
                ORDER BY e.tier, e.n LIMIT page_size OFFSET page_offset) AS r ON true
            ORDER BY r.tier, r.n;
        RETURN;
    END IF;
    RETURN QUERY
        -- one word: tier by tier, each from its words
        WITH matches AS MATERIALIZED (
            SELECT m.* FROM generate_series(0, 2) AS k,
                LATERAL (SELECT tier_lists[k + 1]::text[] AS words) AS l,
                search.quote_search_by_words_text(l.words, l.words, contains, whole, prefix, true, k, only_category,
                                           exact + 1) AS m
            WHERE l.words <> '{}'),
        n AS (SELECT count(*) AS n FROM matches)
        SELECT n.n, (SELECT qv.version FROM quotes_version qv), q.id, q.text, q.author, q.category,
               q.created_at, false
        FROM n
        LEFT JOIN LATERAL (SELECT m.id, m.tier, m.created_at FROM matches m WHERE n.n <= exact
                           ORDER BY m.tier, m.created_at DESC, m.id DESC
                           LIMIT page_size OFFSET page_offset) AS r ON true
        LEFT JOIN quotes q ON q.id = r.id
        ORDER BY r.tier, r.created_at DESC, r.id DESC;
END
$$;

-- The same for authors; an author query of several common words is answered by quote_search_by_author_names.
CREATE FUNCTION search.quote_search_words_author(
    query text, contains text, whole text, prefix text, only_category text, page_size bigint, page_offset bigint)
RETURNS TABLE (
    total bigint, version bigint, id uuid, text text, author text, category text, created_at timestamptz,
    walked boolean)
LANGUAGE plpgsql STABLE
SET enable_seqscan = off SET plan_cache_mode = force_generic_plan SET jit = off SET max_parallel_workers_per_gather = 0
AS $$
DECLARE
    exact bigint := quote_search_limit('exact_total');
    one_word text := search.quote_words_one_word(query);
    tier_lists text[] := ARRAY[NULL, NULL, NULL];  -- one word: each tier's words, as text
    tiers record;  -- one word: quote_search_vocabulary_tiers
    candidates bigint := 0;
    counted bigint;
    listed record;
    a_words text[];  -- several words: the two rarest pieces' words and quotes
    a_uses bigint;
    b_words text[];
    b_uses bigint;
BEGIN
    -- A word of three characters or more that no word of the vocabulary contains has no match: the
    -- answer from one probe of the trigram index, before the three tiers' statement.
    IF char_length(one_word) >= 3 AND NOT search.quote_search_vocabulary_holds('a', one_word) THEN
        RETURN QUERY SELECT 0::bigint, qv.version, NULL::uuid, NULL::text, NULL::text, NULL::text,
                            NULL::timestamptz, false FROM quotes_version qv;
        RETURN;
    END IF;
    IF one_word IS NOT NULL THEN
        whole := '\m' || one_word || '\M';
        prefix := '\m' || one_word;
        counted := -1;  -- to be read
        tiers := search.quote_search_vocabulary_tiers('a', one_word);
        FOR k IN 0 .. 2 LOOP
            -- `uses` counts every category
            IF tiers.most[k + 1] > exact AND only_category IS NULL THEN counted := exact + 1; EXIT; END IF;
            IF tiers.words[k + 1] IS NULL THEN counted := NULL; EXIT; END IF;
            tier_lists[k + 1] := tiers.words[k + 1];
            candidates := candidates + tiers.uses[k + 1];
        END LOOP;
    ELSE
        FOR listed IN SELECT * FROM search.quote_search_pieces('a', query) AS p ORDER BY p.uses LIMIT 2 LOOP
            IF a_words IS NULL THEN a_words := listed.words; a_uses := listed.uses;
            ELSE b_words := listed.words; b_uses := listed.uses; END IF;
        END LOOP;
        -- Two pieces: the quotes holding both, as if independent (a guess; reading them costs at most
        -- the rarer piece's quotes).
        candidates := CASE WHEN b_words IS NULL THEN a_uses
                           ELSE search.quote_search_both_pieces(a_uses, b_uses) END;
        counted := CASE WHEN a_words IS NULL THEN NULL ELSE -1 END;
        IF a_words IS NOT NULL AND least(a_uses, b_uses) >= quote_search_limit('sorted_reads')
           AND candidates <= quote_search_limit('ranked_reads') THEN
            -- Each piece in many quotes: the matching names of authors, counted and read newest first (0060).
            RETURN QUERY
                SELECT p.total, (SELECT qv.version FROM quotes_version qv), p.id, p.text, p.author,
                       p.category, p.created_at, false
                FROM search.quote_search_by_author_names(contains, whole, prefix, only_category, page_size,
                                                  page_offset) AS p
                ORDER BY p.tier, p.created_at DESC, p.id DESC;
            RETURN;
        END IF;
    END IF;
    IF counted = -1 THEN
        counted := CASE WHEN candidates > quote_search_limit('ranked_reads') THEN NULL
                        WHEN candidates = 0 THEN 0 ELSE -1 END;
    END IF;
    IF counted = -1 AND one_word IS NOT NULL AND candidates >= quote_search_limit('sorted_reads') THEN
        -- One word, many candidates: its matches are the quotes holding a word of the tiers, counted
        -- from the word index alone; the page is the walk's (each tier newest first, only the rows it
        -- needs). With fewer candidates, all are read and sorted (below).
        SELECT count(*) INTO counted FROM (
            SELECT 1 FROM quotes t
            WHERE quote_words_array(t.author)
                  && (tier_lists[1]::text[] || tier_lists[2]::text[] || tier_lists[3]::text[])
              AND (only_category IS NULL OR t.category = only_category)
            LIMIT exact + 1) AS m;
        RETURN QUERY
            SELECT counted, (SELECT qv.version FROM quotes_version qv), w.id, w.text, w.author,
                   w.category, w.created_at, counted BETWEEN 1 AND exact
            FROM (SELECT) AS one LEFT JOIN LATERAL (
                SELECT r.* FROM search.quote_search_walk_author(contains, whole, prefix, query, only_category,
                                page_offset + page_size)
                    WITH ORDINALITY AS r (id, text, author, category, created_at, tier, n)
                WHERE counted BETWEEN 1 AND exact ORDER BY r.n OFFSET page_offset) AS w ON true
            ORDER BY w.n;
        RETURN;
    END IF;
    IF counted IS DISTINCT FROM -1 THEN
        RETURN QUERY SELECT counted, qv.version, NULL::uuid, NULL::text, NULL::text, NULL::text,
                            NULL::timestamptz, false FROM quotes_version qv;
        RETURN;
    END IF;
    RETURN QUERY
        WITH matches AS MATERIALIZED (
            -- one word: tier by tier, each from its words
            SELECT m.* FROM generate_series(0, 2) AS k,
                LATERAL (SELECT tier_lists[k + 1]::text[] AS words) AS l,
                search.quote_search_by_words_author(l.words, l.words, contains, whole, prefix, true, k, only_category,
                                             exact + 1) AS m
            WHERE one_word IS NOT NULL AND l.words <> '{}'
            UNION ALL
            SELECT m.* FROM search.quote_search_by_words_author(a_words, coalesce(b_words, a_words), contains, whole,
                                                         prefix, false, 0,
                                 only_category, exact + 1) AS m
            WHERE one_word IS NULL),
        n AS (SELECT count(*) AS n FROM matches)
        SELECT n.n, (SELECT qv.version FROM quotes_version qv), q.id, q.text, q.author, q.category,
               q.created_at, false
        FROM n
        LEFT JOIN LATERAL (SELECT m.id, m.tier, m.created_at FROM matches m WHERE n.n <= exact
                           ORDER BY m.tier, m.created_at DESC, m.id DESC
                           LIMIT page_size OFFSET page_offset) AS r ON true
        LEFT JOIN quotes q ON q.id = r.id
        ORDER BY r.tier, r.created_at DESC, r.id DESC;
END
$$;
