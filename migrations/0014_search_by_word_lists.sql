-- The search over the compact index of words (0013), for one word and for several.
--
-- A query is cut into pieces, the runs of word characters of lower(query) (quote_words_array's words). A quote
-- containing the query holds, for each piece, a word of the vocabulary the piece allows: the piece itself when
-- non-word characters (or nothing) surround it in the query on both sides ("ada" and "lovelace" in "(ada)
-- lovelace"); a word ending with it when it starts the query ("ada" in "ada lovelace"); a word starting with it when
-- it ends the query ("lovelace"); a word containing it when it is the whole query. The two pieces with the fewest
-- quotes (the vocabulary's `uses`) select the candidates through the word indexes; ILIKE decides.

-- The pieces of `query` in field `searched` ('t' or 'a'), fewest quotes first: the vocabulary's words each allows
-- (a piece allowing more than words_per_piece words selects too little and is left out) and their quotes (`uses`,
-- summed). For a query of one word, quote_search_tier_words instead.
CREATE FUNCTION quote_search_pieces(searched "char", query text)
RETURNS TABLE (words text[], uses bigint)
LANGUAGE plpgsql STABLE
SET enable_seqscan = off SET enable_bitmapscan = on SET plan_cache_mode = force_generic_plan SET jit = off
SET max_parallel_workers_per_gather = 0
AS $$
DECLARE
    lowered text := lower(query);
    pieces text[] := quote_words_array(query);
    n int := cardinality(pieces);
    word_limit bigint := quote_search_limit('words_per_piece');
    piece text;
    fixed_start boolean;
    fixed_end boolean;
    found_words text[];
BEGIN
    FOR i IN 1 .. coalesce(n, 0) LOOP
        piece := pieces[i];
        fixed_start := i > 1 OR lowered !~ '^\w';
        fixed_end := i < n OR lowered !~ '\w$';
        -- One statement per kind, each with its own index: the key for a word or a range of words, the trigram
        -- index for a word's end or inside (three characters at least, or it selects nothing).
        IF fixed_start AND fixed_end THEN
            SELECT array_agg(v.word), coalesce(sum(v.uses), 0) INTO found_words, uses
            FROM quote_vocabulary v WHERE v.word = piece AND v.field = searched;
        ELSIF fixed_start THEN
            SELECT array_agg(v.word), coalesce(sum(v.uses), 0) INTO found_words, uses
            FROM (SELECT v.word, v.uses FROM quote_vocabulary v
                  WHERE v.word >= piece AND v.word < piece || chr(1114111) AND v.field = searched
                  LIMIT word_limit + 1) AS v;
        ELSIF char_length(piece) < 3 THEN
            CONTINUE;
        ELSE
            SELECT array_agg(v.word), coalesce(sum(v.uses), 0) INTO found_words, uses
            FROM (SELECT v.word, v.uses FROM quote_vocabulary v
                  WHERE v.word LIKE '%' || replace(piece, '_', '\_') || CASE WHEN fixed_end THEN '' ELSE '%' END
                    AND v.field = searched
                  LIMIT word_limit + 1) AS v;
        END IF;
        IF coalesce(cardinality(found_words), 0) <= word_limit THEN
            words := coalesce(found_words, '{}');
            RETURN NEXT;
        END IF;
    END LOOP;
END $$;

-- The query as one word of the index (when it is one run of word characters), else NULL.
CREATE OR REPLACE FUNCTION quote_words_one_word(query text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    -- one expression (no FROM), so that it is inlined into its callers' cached plans
    AS $$ SELECT CASE WHEN quote_words_array(query) = ARRAY[lower(query)] THEN lower(query) END $$;
DROP FUNCTION quote_words_containing(text);

-- The vocabulary's words of one rank tier of a one-word query, their quotes (`uses`, summed) and the most quotes
-- of one word: tier 0 the word itself, 1 the longer words starting with it (a range of the key), 2 the other words
-- containing it (the trigram index; three characters at least). `words` is NULL when there are more than
-- words_per_piece (or the word is too short for the trigram index): the tier cannot be read from the index.
CREATE FUNCTION quote_search_tier_words(searched "char", one_word text, tier int,
                                        OUT words text[], OUT uses bigint, OUT most bigint)
LANGUAGE plpgsql STABLE
SET enable_seqscan = off SET enable_bitmapscan = on SET plan_cache_mode = force_generic_plan SET jit = off
SET max_parallel_workers_per_gather = 0
AS $$
DECLARE
    word_limit bigint := quote_search_limit('words_per_piece');
BEGIN
    IF tier = 0 THEN
        SELECT coalesce(array_agg(v.word), '{}'), coalesce(sum(v.uses), 0), coalesce(max(v.uses), 0)
        INTO words, uses, most FROM quote_vocabulary v WHERE v.word = one_word AND v.field = searched;
    ELSIF tier = 1 THEN
        SELECT array_agg(v.word), coalesce(sum(v.uses), 0), coalesce(max(v.uses), 0) INTO words, uses, most
        FROM (SELECT v.word, v.uses FROM quote_vocabulary v
              WHERE v.word > one_word AND v.word < one_word || chr(1114111) AND v.field = searched
              LIMIT word_limit + 1) AS v;
    ELSIF char_length(one_word) >= 3 THEN
        SELECT array_agg(v.word), coalesce(sum(v.uses), 0), coalesce(max(v.uses), 0) INTO words, uses, most
        FROM (SELECT v.word, v.uses FROM quote_vocabulary v
              WHERE v.word LIKE '%' || replace(one_word, '_', '\_') || '%' AND v.field = searched
                AND NOT starts_with(v.word, one_word)
              LIMIT word_limit + 1) AS v;
        words := coalesce(words, '{}');
    END IF;
    words := CASE WHEN cardinality(words) > word_limit THEN NULL
                  WHEN words IS NULL AND tier < 2 THEN '{}' ELSE words END;
END $$;

-- A quote's tier, from its text or author (`value`): the query as a whole word (0), as the start of a word (1),
-- anywhere (2), by the case-insensitive `whole` and `prefix`; or, for one word (`lowered`), the tier of the words
-- read (`min_tier`), or -1 for a quote of an earlier tier (its words may include words of later ones), by
-- `whole` and `prefix` over lower(value), as the index's words are. One expression: inlined where it is used.
CREATE FUNCTION quote_search_tier(value text, lowered boolean, min_tier int, whole text, prefix text) RETURNS int
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT CASE WHEN NOT lowered THEN CASE WHEN value !~* prefix THEN 2 WHEN value ~* whole THEN 0 ELSE 1 END
                      WHEN min_tier = 1 AND value ~* whole AND lower(value) ~ whole THEN -1
                      WHEN min_tier = 2 AND value ~* prefix AND lower(value) ~ prefix THEN -1
                      ELSE min_tier END $$;

-- One function per searched column (its word index is in the plan), made from one text:
-- quote_search_by_words_text/_author: the quotes holding a word of `any_a` and one of `any_b` that contain the
-- query, at rank `min_tier` or after, in rank order, at most `wanted`: read from the word index and sorted, so
-- its cost is that of the candidates (the caller keeps them few); only quotes created before `before`, unless
-- NULL. Tiers by quote_search_tier; for one word (`lowered`), the words given are those of tier `min_tier`.
DO $make$
DECLARE searched text;
BEGIN
    FOREACH searched IN ARRAY ARRAY['text', 'author'] LOOP
        EXECUTE format($f$
            CREATE FUNCTION %1$I(any_a text[], any_b text[], contains text, whole text, prefix text, lowered boolean,
                                 min_tier int, only_category text, wanted bigint, before timestamptz DEFAULT NULL)
            RETURNS TABLE (id uuid, created_at timestamptz, tier int)
            -- PL/pgSQL: its plan is kept for the session (a SQL function's is made again at each call)
            LANGUAGE plpgsql STABLE
            SET enable_seqscan = off SET enable_bitmapscan = on SET plan_cache_mode = force_generic_plan SET jit = off
            SET max_parallel_workers_per_gather = 0
            AS $$ BEGIN RETURN QUERY
                SELECT c.id, c.created_at, c.tier FROM (
                    SELECT t.id, t.created_at, quote_search_tier(t.%2$I, lowered, min_tier, whole, prefix) AS tier
                    FROM quotes t
                    WHERE quote_words_array(t.%2$I) && any_a AND quote_words_array(t.%2$I) && any_b
                      -- coalesce: a test the trigram index cannot take over (the word index selects)
                      AND coalesce(t.%2$I ILIKE contains, false)
                      AND (only_category IS NULL OR t.category = only_category)
                      AND (before IS NULL OR t.created_at < before)
                    OFFSET 0) AS c  -- each row's tier computed once
                WHERE c.tier >= min_tier
                ORDER BY c.tier, c.created_at DESC, c.id DESC
                LIMIT wanted;
            END $$
            $f$, 'quote_search_by_words_' || searched, searched);
    END LOOP;
END $make$;

-- quote_search_newest_text/_author: what quote_search_by_words_* answers (same arguments, and `uses`, the quotes
-- the words hold by the vocabulary), read newest first when the words hold many quotes: GIN is asked for the
-- quotes holding the words in a few spans of time (time buckets of quote_time_buckets, intersected with the
-- words' lists inside the index), the newest spans first, then older ones, until `wanted` rows of `min_tier` are
-- found; only quotes created before `before` (unless NULL) are read, and quotes older than the spans read are
-- never fetched. The spans of a read are the buckets of the longest level holding at most half the rows still
-- wanted if the words' quotes were spread evenly between the oldest quote and the newest, as many as those rows
-- need; a read that falls short makes the next one twice as long. With fewer than sorted_reads quotes, the
-- words' quotes are read whole and sorted (quote_search_by_words_*).
DO $make$
DECLARE searched text;
BEGIN
    FOREACH searched IN ARRAY ARRAY['text', 'author'] LOOP
        EXECUTE format($f$
            CREATE FUNCTION %1$I(any_a text[], any_b text[], contains text, whole text, prefix text, lowered boolean,
                                 min_tier int, only_category text, wanted bigint, uses bigint,
                                 before timestamptz)
            RETURNS TABLE (id uuid, created_at timestamptz, tier int)
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
                    RETURN QUERY SELECT * FROM %2$I(any_a, any_b, contains, whole, prefix, lowered, min_tier,
                                                    only_category, wanted, before);
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
                                 quote_search_tier(t.%3$I, lowered, min_tier, whole, prefix) AS tier
                          FROM quotes t
                          WHERE quote_words_array(t.%3$I) && any_a AND quote_words_array(t.%3$I) && any_b
                            AND quote_time_buckets(t.created_at) && buckets
                            -- the span's own bounds (the newest bucket may end after upper_us); a function of the
                            -- time, so that no other index is asked
                            AND quote_time_us(t.created_at) >= lower_us AND quote_time_us(t.created_at) < upper_us
                            AND coalesce(t.%3$I ILIKE contains, false)
                            AND (only_category IS NULL OR t.category = only_category)
                          OFFSET 0) AS c
                    WHERE c.tier >= min_tier;
                    upper_us := lower_us;
                    boost := boost * 2;
                END LOOP;
                RETURN QUERY SELECT e.id, e.created_at, e.tier
                    FROM unnest(ids, times, tiers) AS e (id, created_at, tier)
                    ORDER BY e.tier, e.created_at DESC, e.id DESC LIMIT wanted;
            END $$
            $f$, 'quote_search_newest_' || searched, 'quote_search_by_words_' || searched, searched);
    END LOOP;
END $make$;

-- A search with at most exact_total matches, ranked in full from the word indexes, with an exact `total`.
-- `total` is exact_total + 1 (and no rows) when the query is known to have more (one word held by more quotes,
-- each of which contains the query; without a category), and NULL when this cannot tell cheaply (no piece
-- usable, or more than ranked_reads candidates): the caller counts through the trigram index instead. Every
-- answer has one row at least: `total` and the quotes' `version` ride on each (id NULL when the page is empty).
DO $make$
DECLARE searched text;
BEGIN
    FOREACH searched IN ARRAY ARRAY['text', 'author'] LOOP
        EXECUTE format($f$
            CREATE FUNCTION %1$I(query text, contains text, whole text, prefix text, only_category text,
                                 page_size bigint, page_offset bigint)
            RETURNS TABLE (total bigint, version bigint, id uuid, text text, author text, category text,
                           created_at timestamptz)
            LANGUAGE plpgsql STABLE
            SET enable_seqscan = off SET plan_cache_mode = force_generic_plan SET jit = off
            SET max_parallel_workers_per_gather = 0
            AS $$
            DECLARE
                exact bigint := quote_search_limit('exact_total');
                one_word text := quote_words_one_word(query);
                tier_lists text[] := ARRAY[NULL, NULL, NULL];  -- one word: each tier's words, as text
                candidates bigint := 0;
                counted bigint;
                listed record;
                a_words text[];  -- several words: the two rarest pieces' words and quotes
                a_uses bigint;
                b_words text[];
                b_uses bigint;
            BEGIN
                IF one_word IS NOT NULL THEN
                    whole := '\m' || one_word || '\M';
                    prefix := '\m' || one_word;
                    counted := -1;  -- to be read
                    FOR k IN 0 .. 2 LOOP
                        listed := quote_search_tier_words(%3$L, one_word, k);
                        -- `uses` counts every category
                        IF listed.most > exact AND only_category IS NULL THEN counted := exact + 1; EXIT; END IF;
                        IF listed.words IS NULL THEN counted := NULL; EXIT; END IF;
                        tier_lists[k + 1] := listed.words::text;
                        candidates := candidates + listed.uses;
                    END LOOP;
                ELSE
                    FOR listed IN SELECT * FROM quote_search_pieces(%3$L, query) AS p ORDER BY p.uses LIMIT 2 LOOP
                        IF a_words IS NULL THEN a_words := listed.words; a_uses := listed.uses;
                        ELSE b_words := listed.words; b_uses := listed.uses; END IF;
                    END LOOP;
                    -- Two pieces: the quotes holding both, as if independent (a guess; reading them costs at most
                    -- the rarer piece's quotes).
                    candidates := CASE WHEN b_words IS NULL THEN a_uses
                                       ELSE a_uses * b_uses / greatest((SELECT c.reltuples FROM pg_class c
                                                                        WHERE c.oid = 'quotes'::regclass), 1)::bigint
                                  END;
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
                        WHERE quote_words_array(t.%2$I)
                              && (tier_lists[1]::text[] || tier_lists[2]::text[] || tier_lists[3]::text[])
                          AND (only_category IS NULL OR t.category = only_category)
                        LIMIT exact + 1) AS m;
                    RETURN QUERY
                        SELECT counted, (SELECT qv.version FROM quotes_version qv), w.id, w.text, w.author,
                               w.category, w.created_at
                        FROM (SELECT) AS one LEFT JOIN LATERAL (
                            SELECT r.* FROM %5$I(contains, whole, prefix, query, only_category, page_offset + page_size)
                                WITH ORDINALITY AS r (id, text, author, category, created_at, tier, n)
                            WHERE counted BETWEEN 1 AND exact ORDER BY r.n OFFSET page_offset) AS w ON true
                        ORDER BY w.n;
                    RETURN;
                END IF;
                IF counted IS DISTINCT FROM -1 THEN
                    RETURN QUERY SELECT counted, qv.version, NULL::uuid, NULL::text, NULL::text, NULL::text,
                                        NULL::timestamptz FROM quotes_version qv;
                    RETURN;
                END IF;
                RETURN QUERY
                    WITH matches AS MATERIALIZED (
                        -- one word: tier by tier, each from its words
                        SELECT m.* FROM generate_series(0, 2) AS k,
                            LATERAL (SELECT tier_lists[k + 1]::text[] AS words) AS l,
                            %4$I(l.words, l.words, contains, whole, prefix, true, k, only_category, exact + 1) AS m
                        WHERE one_word IS NOT NULL AND l.words <> '{}'
                        UNION ALL
                        SELECT m.* FROM %4$I(a_words, coalesce(b_words, a_words), contains, whole, prefix, false, 0,
                                             only_category, exact + 1) AS m
                        WHERE one_word IS NULL),
                    n AS (SELECT count(*) AS n FROM matches)
                    SELECT n.n, (SELECT qv.version FROM quotes_version qv), q.id, q.text, q.author, q.category,
                           q.created_at
                    FROM n
                    LEFT JOIN LATERAL (SELECT m.id, m.tier, m.created_at FROM matches m WHERE n.n <= exact
                                       ORDER BY m.tier, m.created_at DESC, m.id DESC
                                       LIMIT page_size OFFSET page_offset) AS r ON true
                    LEFT JOIN quotes q ON q.id = r.id
                    ORDER BY r.tier, r.created_at DESC, r.id DESC;
            END $$
            $f$, 'quote_search_words_' || searched, searched, CASE searched WHEN 'text' THEN 't' ELSE 'a' END,
            'quote_search_by_words_' || searched, 'quote_search_walk_' || searched);
    END LOOP;
END $make$;

-- The first `wanted` matches of a query with many, in rank order, stopping at the rows the page needs; a tier is
-- only read when the ones before it cannot fill the page.
-- * One word: tier 0 is the word itself, read newest first from the window of ordered words (quote_words_newest,
--   migration 0016), then, if the window holds too few, from the word index span by span
--   (quote_search_newest_*); tier 1 the longer words starting with it, tier 2 the other words containing it:
--   each read from the word index (quote_search_newest_*), or walked newest-first (quotes_newest_author_idx)
--   with its test when its words are too many or hold walk_share of the quotes. The vocabulary's `uses` tells
--   each tier's quotes before anything is read.
-- * Several pieces: the candidates of the two rarest pieces, when few, sorted by tier; else the regular
--   expressions' walk of 0007. "Few": under sqrt(wanted * rows of quotes * walk_row_cost) or the rows wanted:
--   the walk reads about wanted * rows / matches quotes, the sort reads the matches; below that the sort costs
--   less.
-- A one-word tier's test is over lower(column), as the index's words are; `~*` first, which implies it and costs
-- a twentieth of lower() and `~` on a text (most rows of a walk fail it).
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
                few bigint;  -- several words: candidates sorted below this many, else walked
                walk_from bigint;  -- a one-word tier of other words held by more quotes is walked with its test
                word_uses bigint;  -- one word: the quotes holding it
                earlier bigint;  -- one word: the quotes the tiers before may hold (at most)
                one_word text := quote_words_one_word(query);
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
            BEGIN
                IF one_word IS NOT NULL THEN
                    whole := '\m' || one_word || '\M';
                    prefix := '\m' || one_word;
                    -- Tier 0, the word itself: its newest quotes from the window of ordered words; older ones
                    -- (when the window holds too few) from the word index, span by span.
                    SELECT coalesce(sum(v.uses), 0) INTO word_uses FROM quote_vocabulary v
                    WHERE v.word = one_word AND v.field = %3$L;
                    IF word_uses > 0 THEN
                        SELECT coalesce(array_agg(e.quote_id ORDER BY e.created_at DESC, e.quote_id DESC), '{}'),
                               coalesce(array_agg(e.created_at ORDER BY e.created_at DESC, e.quote_id DESC), '{}')
                        INTO sorted_ids, sorted_times
                        FROM (SELECT qw.quote_id, qw.created_at FROM quote_words_newest qw
                              WHERE qw.field = %3$L AND qw.word = one_word AND qw.created_at >= since
                                AND (only_category IS NULL OR qw.category = only_category)
                              ORDER BY qw.created_at DESC, qw.quote_id DESC LIMIT wanted) AS e;
                        filled := cardinality(sorted_ids);
                        IF filled < wanted AND since > '-infinity'
                           AND (filled < word_uses OR only_category IS NOT NULL) THEN
                            -- (rows in rank order: as returned)
                            SELECT sorted_ids || coalesce(array_agg(o.id), '{}'),
                                   sorted_times || coalesce(array_agg(o.created_at), '{}')
                            INTO sorted_ids, sorted_times
                            FROM %6$I(ARRAY[one_word], ARRAY[one_word], contains, whole, prefix, true, 0, only_category,
                                      wanted - filled, word_uses, since) AS o;
                            filled := cardinality(sorted_ids);
                        END IF;
                        sorted_tiers := array_fill(0, ARRAY[filled::int]);
                    END IF;
                    walk_from := quote_search_limit('walk_share') * greatest((SELECT c.reltuples FROM pg_class c
                                                              WHERE c.oid = 'quotes'::regclass), 0) / 1000;
                    earlier := word_uses;
                    FOR k IN 1 .. 2 LOOP
                        EXIT WHEN filled >= wanted;
                        listed := quote_search_tier_words(%3$L, one_word, k);
                        IF listed.words IS NULL OR listed.uses >= walk_from THEN
                            walked[k + 1] := true;
                            -- Without a category, at least the quotes of its most used word not in the tiers
                            -- before are in the tier (`uses` counts a quote once per word); with one, perhaps none.
                            IF only_category IS NULL THEN filled := filled + greatest(listed.most - earlier, 0); END IF;
                        ELSIF listed.uses > 0 THEN
                            FOR part IN SELECT * FROM %6$I(listed.words, listed.words, contains, whole, prefix, true,
                                                            k, only_category, wanted - filled, listed.uses, NULL) LOOP
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
                    FOR listed IN SELECT * FROM quote_search_pieces(%3$L, query) AS p ORDER BY p.uses LIMIT 2 LOOP
                        IF a_words IS NULL THEN a_words := listed.words; a_uses := listed.uses;
                        ELSE b_words := listed.words; END IF;
                    END LOOP;
                    few := greatest(wanted, sqrt(wanted * quote_search_limit('walk_row_cost_%2$s') / 100.0
                                                 * greatest((SELECT c.reltuples FROM pg_class c
                                                             WHERE c.oid = 'quotes'::regclass), 0))::bigint);
                    IF a_words IS NOT NULL AND a_uses < few THEN
                        SELECT coalesce(array_agg(s.id), '{}'), coalesce(array_agg(s.created_at), '{}'),
                               coalesce(array_agg(s.tier), '{}')
                        INTO sorted_ids, sorted_times, sorted_tiers
                        FROM %4$I(a_words, coalesce(b_words, a_words), contains, whole, prefix, false, 0,
                                  only_category, wanted) AS s;
                    ELSE
                        walked := ARRAY[true, true, true];
                    END IF;
                END IF;
                -- Tier by tier, in rank order (the sorted rows of a tier, then its walk): the walks after the page
                -- is full are not started.
                RETURN QUERY SELECT q.id, q.text, q.author, q.category, q.created_at, w.tier FROM (
                    (SELECT e.id, e.created_at, e.tier FROM unnest(sorted_ids, sorted_times, sorted_tiers)
                        AS e (id, created_at, tier) WHERE e.tier = 0)
                    UNION ALL
                    (SELECT t.id, t.created_at, 0 FROM quotes t
                     WHERE walked[1] AND (only_category IS NULL OR t.category = only_category)
                       AND CASE WHEN one_word IS NOT NULL THEN %5$s
                                ELSE t.%2$I ~* whole AND t.%2$I ILIKE contains END
                     ORDER BY t.created_at DESC, t.id DESC LIMIT wanted)
                    UNION ALL
                    (SELECT e.id, e.created_at, e.tier FROM unnest(sorted_ids, sorted_times, sorted_tiers)
                        AS e (id, created_at, tier) WHERE e.tier = 1)
                    UNION ALL
                    (SELECT t.id, t.created_at, 1 FROM quotes t
                     WHERE walked[2] AND (only_category IS NULL OR t.category = only_category)
                       AND CASE WHEN one_word IS NOT NULL THEN t.%2$I ~* prefix AND lower(t.%2$I) ~ prefix
                                                                 AND NOT (t.%2$I ~* whole AND lower(t.%2$I) ~ whole)
                                ELSE t.%2$I ~* prefix AND t.%2$I ILIKE contains AND t.%2$I !~* whole END
                     ORDER BY t.created_at DESC, t.id DESC LIMIT wanted)
                    UNION ALL
                    (SELECT e.id, e.created_at, e.tier FROM unnest(sorted_ids, sorted_times, sorted_tiers)
                        AS e (id, created_at, tier) WHERE e.tier = 2)
                    UNION ALL
                    (SELECT t.id, t.created_at, 2 FROM quotes t
                     WHERE walked[3] AND (only_category IS NULL OR t.category = only_category)
                       AND t.%2$I ILIKE contains
                       AND CASE WHEN one_word IS NOT NULL THEN NOT (t.%2$I ~* prefix AND lower(t.%2$I) ~ prefix)
                                ELSE t.%2$I !~* prefix END
                     ORDER BY t.created_at DESC, t.id DESC LIMIT wanted)
                    LIMIT wanted) AS w
                JOIN quotes q ON q.id = w.id
                ORDER BY w.tier, w.created_at DESC, w.id DESC;
            END $$
            $f$, 'quote_search_walk_' || searched, searched, CASE searched WHEN 'text' THEN 't' ELSE 'a' END,
            'quote_search_by_words_' || searched,
            -- over a text the regular expression first (about half ILIKE's cost a row); over a short author, ILIKE
            CASE searched WHEN 'text' THEN 't.text ~* whole AND lower(t.text) ~ whole'
                          ELSE 't.author ILIKE contains AND t.author ~* whole AND lower(t.author) ~ whole' END,
            'quote_search_newest_' || searched);
    END LOOP;
END $make$;
