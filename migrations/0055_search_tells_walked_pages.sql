-- The search says whether its page was the walk's (issue 27: a word is defined once, in SQL).
-- quote_search_words_text/_author (0014, last replaced by 0047) gain a column `walked`: true when the query is one
-- word of the index (quote_words_one_word) with enough candidates that its page was read by the walk
-- (quote_search_walk_*) and its exact total (1 to exact_total) counted from the word index. The server remembers
-- that total per version of the quotes and, asked again at that version, runs the walk alone: the same page. It
-- no longer tells a word or a threshold by itself. The functions are otherwise those of 0047; results, totals
-- and ranking are unchanged.

DROP FUNCTION quote_search_words_text(text, text, text, text, text, bigint, bigint);
DROP FUNCTION quote_search_words_author(text, text, text, text, text, bigint, bigint);

DO $make$
DECLARE searched text;
BEGIN
    FOREACH searched IN ARRAY ARRAY['text', 'author'] LOOP
        EXECUTE format($f$
            CREATE FUNCTION %1$I(query text, contains text, whole text, prefix text, only_category text,
                                 page_size bigint, page_offset bigint)
            RETURNS TABLE (total bigint, version bigint, id uuid, text text, author text, category text,
                           created_at timestamptz, walked boolean)
            LANGUAGE plpgsql STABLE
            SET enable_seqscan = off SET plan_cache_mode = force_generic_plan SET jit = off
            SET max_parallel_workers_per_gather = 0
            AS $$
            DECLARE
                exact bigint := quote_search_limit('exact_total');
                one_word text := quote_words_one_word(query);
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
                IF char_length(one_word) >= 3 AND NOT quote_search_vocabulary_holds(%3$L, one_word) THEN
                    RETURN QUERY SELECT 0::bigint, qv.version, NULL::uuid, NULL::text, NULL::text, NULL::text,
                                        NULL::timestamptz, false FROM quotes_version qv;
                    RETURN;
                END IF;
                IF one_word IS NOT NULL THEN
                    whole := '\m' || one_word || '\M';
                    prefix := '\m' || one_word;
                    counted := -1;  -- to be read
                    tiers := quote_search_vocabulary_tiers(%3$L, one_word);
                    FOR k IN 0 .. 2 LOOP
                        -- `uses` counts every category
                        IF tiers.most[k + 1] > exact AND only_category IS NULL THEN counted := exact + 1; EXIT; END IF;
                        IF tiers.words[k + 1] IS NULL THEN counted := NULL; EXIT; END IF;
                        tier_lists[k + 1] := tiers.words[k + 1];
                        candidates := candidates + tiers.uses[k + 1];
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
                               w.category, w.created_at, counted BETWEEN 1 AND exact
                        FROM (SELECT) AS one LEFT JOIN LATERAL (
                            SELECT r.* FROM %5$I(contains, whole, prefix, query, only_category, page_offset + page_size)
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
                            %4$I(l.words, l.words, contains, whole, prefix, true, k, only_category, exact + 1) AS m
                        WHERE one_word IS NOT NULL AND l.words <> '{}'
                        UNION ALL
                        SELECT m.* FROM %4$I(a_words, coalesce(b_words, a_words), contains, whole, prefix, false, 0,
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
            END $$
            $f$, 'quote_search_words_' || searched, searched, CASE searched WHEN 'text' THEN 't' ELSE 'a' END,
            'quote_search_by_words_' || searched, 'quote_search_walk_' || searched);
    END LOOP;
END $make$;
