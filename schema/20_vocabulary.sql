-- The vocabulary (quote_vocabulary: each word of texts ('t') and of authors ('a'), with the number of quotes
-- holding it, kept by the triggers of migrations 0013 and 0045) tells, before any quote is read, which words a
-- piece of a query can be part of, and how many quotes hold them. A word is a run of \w characters, lowercased
-- (quote_words_array, migration 0009); the limits are quote_search_limit's (migration 0014 and later).

-- The query, lowercased, when it is one word; else NULL.
CREATE FUNCTION search.quote_words_one_word(query text)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT CASE WHEN lower(query) ~ '^\w+$' THEN lower(query) END $$;

-- The query back from its ILIKE pattern %...% (NULL when the pattern holds an unescaped wildcard).
CREATE FUNCTION search.quote_search_unescaped(contains text)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT CASE WHEN contains ~ '^%([^%_\\]|\\.)*%$'
                THEN regexp_replace(substr(contains, 2, char_length(contains) - 2), '\\(.)', '\1', 'g') END
$$;

-- Whether a word of the vocabulary contains `piece` (one probe of the trigram index): a word of three characters
-- or more that none contains has no match.
CREATE FUNCTION search.quote_search_vocabulary_holds(searched "char", piece text)
RETURNS boolean
LANGUAGE plpgsql STABLE
SET enable_seqscan = off SET enable_indexscan = off SET enable_bitmapscan = on SET plan_cache_mode = force_generic_plan
SET jit = off
AS $$
BEGIN
    RETURN EXISTS (SELECT FROM quote_vocabulary v
                   WHERE v.word LIKE '%' || replace(piece, '_', '\_') || '%' AND v.field = searched);
END
$$;

-- One word's three tiers in one statement: per tier, its words (as text; NULL when more than words_per_piece, or
-- for the "anywhere" tier of a word under three characters), the quotes holding them (once per word), and the
-- most quotes any one of them is in.
CREATE FUNCTION search.quote_search_vocabulary_tiers(
    searched "char", one_word text, OUT words text[], OUT uses bigint[], OUT most bigint[])
RETURNS record
LANGUAGE plpgsql STABLE
SET enable_seqscan = off SET enable_bitmapscan = on SET plan_cache_mode = force_generic_plan SET jit = off
SET max_parallel_workers_per_gather = 0
AS $$
DECLARE
    word_limit bigint := quote_search_limit('words_per_piece');
BEGIN
    SELECT array_agg(CASE WHEN t.n > word_limit OR (t.tier = 2 AND char_length(one_word) < 3) THEN NULL
                          ELSE coalesce(t.w, '{}')::text END ORDER BY t.tier),
           array_agg(t.u ORDER BY t.tier), array_agg(t.m ORDER BY t.tier)
    INTO words, uses, most
    FROM (SELECT 0 AS tier, array_agg(v.word) AS w, count(*) AS n, coalesce(sum(v.uses), 0)::bigint AS u,
                 coalesce(max(v.uses), 0) AS m
          FROM quote_vocabulary v WHERE v.word = one_word AND v.field = searched
          UNION ALL
          SELECT 1, array_agg(v.word), count(*), coalesce(sum(v.uses), 0)::bigint, coalesce(max(v.uses), 0)
          FROM (SELECT v.word, v.uses FROM quote_vocabulary v
                WHERE v.word > one_word AND v.word < one_word || chr(1114111) AND v.field = searched
                LIMIT word_limit + 1) AS v
          UNION ALL
          -- (a gate on the length: a pattern of fewer than three characters would read the whole trigram index)
          SELECT 2, array_agg(v.word), count(*), coalesce(sum(v.uses), 0)::bigint, coalesce(max(v.uses), 0)
          FROM (SELECT v.word, v.uses FROM quote_vocabulary v
                WHERE char_length(one_word) >= 3 AND v.word LIKE '%' || replace(one_word, '_', '\_') || '%'
                  AND v.field = searched AND NOT starts_with(v.word, one_word)
                LIMIT word_limit + 1) AS v) AS t;
END
$$;

-- One tier of the above at a time (the walk stops after the tier that fills the page).
CREATE FUNCTION search.quote_search_tier_words(
    searched "char", one_word text, tier integer, OUT words text[], OUT uses bigint, OUT most bigint)
RETURNS record
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
END
$$;

-- For each run of word characters of a query, the words of the vocabulary it can be part of (equal to it, starting
-- with it, or containing it, by where it sits in the query) and the quotes holding them. A piece with more than
-- words_per_piece words, or an inner piece under three characters, is left out: it selects nothing.
CREATE FUNCTION search.quote_search_pieces(searched "char", query text)
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
END
$$;

-- The quotes holding both of two pieces, guessed as if independent (at least one when both occur).
CREATE FUNCTION search.quote_search_both_pieces(a_uses bigint, b_uses bigint)
RETURNS bigint
LANGUAGE sql STABLE PARALLEL SAFE
AS $$
    SELECT greatest(a_uses * b_uses / greatest((SELECT c.reltuples FROM pg_class c
                                                WHERE c.oid = 'quotes'::regclass), 1)::bigint,
                    least(a_uses, b_uses, 1))
$$;

-- A text query of several words: the keys (quote_word_pair_key) of its two rarest pairs of adjacent words, which
-- quotes_text_pairs_idx reads (migration 0048); NULL when no pair is usable. `second` is `first` when one is.
CREATE FUNCTION search.quote_search_pair_keys(searched "char", contains text, OUT first integer[], OUT second integer[])
RETURNS record
LANGUAGE plpgsql STABLE
SET plan_cache_mode = force_generic_plan SET jit = off
AS $$
DECLARE
    query text := search.quote_search_unescaped(contains);
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
        FOR listed IN SELECT * FROM search.quote_search_pieces(searched, pair) LOOP
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
END
$$;
