-- Several words over authors whose pieces are each in many quotes (`ada lovelace`, `lao tzu`: two common words,
-- often together) are counted and paged through the names of authors instead of reading every match (issue 31,
-- goal 2). An author's name decides its match and its tier, so the matches of a query are the quotes of the names
-- matching it: the names come from quote_authors (each distinct author once, kept by statement triggers, trigram
-- index), the exact total from quotes_by_author_idx alone (index-only: no quote is read), and the page from the
-- same index, each tier's names newest first, only the rows the page needs. A piece in fewer than sorted_reads
-- quotes (so at most that many candidates) is read whole as before (0014): as cheap, and bounded; more candidates
-- than ranked_reads by the words' counts are still counted by the trigrams. Results, totals and ranking are
-- unchanged.
--
-- No writer waits for another over a name (a unique key would make two inserts of one new author wait, as the
-- import's batches side by side): two may both add the same new name, so the names are read DISTINCT. A name
-- stays when its last quote goes (it then matches no quote): deleting it would race a concurrent insert of the
-- same author. TRUNCATE empties both.

CREATE TABLE quote_authors (author text NOT NULL);
INSERT INTO quote_authors (author) SELECT DISTINCT q.author FROM quotes q;
CREATE INDEX quote_authors_name_idx ON quote_authors (author);
CREATE INDEX quote_authors_name_trgm_idx ON quote_authors USING gin (author gin_trgm_ops);
CREATE INDEX quotes_by_author_idx ON quotes (author, created_at DESC);

CREATE FUNCTION quote_authors_on_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO quote_authors (author)
    SELECT DISTINCT n.author FROM inserted n
    WHERE NOT EXISTS (SELECT FROM quote_authors a WHERE a.author = n.author);
    RETURN NULL;
END $$;
CREATE FUNCTION quote_authors_on_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM quote_authors;
    RETURN NULL;
END $$;
CREATE TRIGGER quote_authors_insert AFTER INSERT ON quotes REFERENCING NEW TABLE AS inserted
    FOR EACH STATEMENT EXECUTE FUNCTION quote_authors_on_insert();
CREATE TRIGGER quote_authors_update AFTER UPDATE ON quotes REFERENCING NEW TABLE AS inserted
    FOR EACH STATEMENT EXECUTE FUNCTION quote_authors_on_insert();
CREATE TRIGGER quote_authors_truncate AFTER TRUNCATE ON quotes
    FOR EACH STATEMENT EXECUTE FUNCTION quote_authors_on_truncate();

-- The names an ILIKE pattern matches, through their trigrams.
CREATE FUNCTION quote_authors_matching(contains text) RETURNS text[]
LANGUAGE sql STABLE SET enable_seqscan = off SET enable_bitmapscan = on
AS $$ SELECT ARRAY(SELECT DISTINCT a.author FROM quote_authors a WHERE a.author ILIKE contains) $$;

-- The matches of a query over authors, through the names: (total, no row) when there are none, more than
-- exact_total, or none on the page; else the page's rows in rank order (tier, newest first), each with the total.
CREATE FUNCTION quote_search_by_author_names(contains text, whole text, prefix text, only_category text,
                                             page_size bigint, page_offset bigint)
RETURNS TABLE (total bigint, id uuid, text text, author text, category text, created_at timestamptz,
               tier integer)
LANGUAGE plpgsql STABLE
-- (bitmaps off: the names' entries are read in order from quotes_by_author_idx, not from the trigrams)
SET enable_seqscan = off SET enable_bitmapscan = off SET plan_cache_mode = force_generic_plan SET jit = off
SET max_parallel_workers_per_gather = 0
AS $$
DECLARE
    exact bigint := quote_search_limit('exact_total');
    found text[] := quote_authors_matching(contains);
    names text[];  -- the names holding matches, and their quotes
    uses bigint[];
    counted bigint;
    tier_names text[];
    tier_uses bigint;
    before bigint := 0;  -- matches in the tiers before
    wanted bigint;
    skipped bigint;
    shown bigint := 0;
    added bigint;
BEGIN
    -- (at most exact + 1 entries of the index read in all; without a category, from the index alone)
    SELECT coalesce(array_agg(c.author), '{}'), coalesce(array_agg(c.n), '{}'), coalesce(sum(c.n), 0)
    INTO names, uses, counted
    FROM (SELECT m.author, count(*) AS n
          FROM ((SELECT t.author FROM quotes t WHERE t.author = ANY (found) AND only_category IS NULL)
                UNION ALL
                (SELECT t.author FROM quotes t WHERE t.author = ANY (found) AND only_category IS NOT NULL
                                                  AND t.category = only_category)
                LIMIT exact + 1) AS m
          GROUP BY m.author) AS c;
    IF counted BETWEEN 1 AND exact THEN
        FOR k IN 0 .. 2 LOOP
            SELECT coalesce(array_agg(e.author), '{}'), coalesce(sum(e.n), 0) INTO tier_names, tier_uses
            FROM unnest(names, uses) AS e (author, n)
            WHERE quote_search_tier(e.author, false, 0, whole, prefix) = k;
            IF tier_uses > 0 AND before + tier_uses > page_offset AND before < page_offset + page_size THEN
                wanted := page_offset + page_size - before;
                skipped := greatest(page_offset - before, 0);
                RETURN QUERY
                    -- (the rows come with the page: no join with quotes afterwards)
                    SELECT counted, r.id, r.text, r.author, r.category, r.created_at, k
                    FROM unnest(tier_names) AS e (name),
                         LATERAL (SELECT t.id, t.text, t.author, t.category, t.created_at FROM quotes t
                                  WHERE t.author = e.name AND (only_category IS NULL OR t.category = only_category)
                                  ORDER BY t.created_at DESC, t.id DESC LIMIT wanted) AS r
                    ORDER BY r.created_at DESC, r.id DESC LIMIT wanted - skipped OFFSET skipped;
                GET DIAGNOSTICS added = ROW_COUNT;
                shown := shown + added;
            END IF;
            before := before + tier_uses;
        END LOOP;
    END IF;
    IF shown = 0 THEN
        RETURN QUERY SELECT CASE WHEN counted > exact THEN exact + 1 ELSE counted END, NULL::uuid, NULL::text,
                            NULL::text, NULL::text, NULL::timestamptz, NULL::integer;
    END IF;
END $$;

-- 0055's quote_search_words_author, with the branch above for several words.
CREATE OR REPLACE FUNCTION quote_search_words_author(query text, contains text, whole text, prefix text,
                                                     only_category text, page_size bigint, page_offset bigint)
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
    IF char_length(one_word) >= 3 AND NOT quote_search_vocabulary_holds('a', one_word) THEN
        RETURN QUERY SELECT 0::bigint, qv.version, NULL::uuid, NULL::text, NULL::text, NULL::text,
                            NULL::timestamptz, false FROM quotes_version qv;
        RETURN;
    END IF;
    IF one_word IS NOT NULL THEN
        whole := '\m' || one_word || '\M';
        prefix := '\m' || one_word;
        counted := -1;  -- to be read
        tiers := quote_search_vocabulary_tiers('a', one_word);
        FOR k IN 0 .. 2 LOOP
            -- `uses` counts every category
            IF tiers.most[k + 1] > exact AND only_category IS NULL THEN counted := exact + 1; EXIT; END IF;
            IF tiers.words[k + 1] IS NULL THEN counted := NULL; EXIT; END IF;
            tier_lists[k + 1] := tiers.words[k + 1];
            candidates := candidates + tiers.uses[k + 1];
        END LOOP;
    ELSE
        FOR listed IN SELECT * FROM quote_search_pieces('a', query) AS p ORDER BY p.uses LIMIT 2 LOOP
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
        IF a_words IS NOT NULL AND least(a_uses, b_uses) >= quote_search_limit('sorted_reads')
           AND candidates <= quote_search_limit('ranked_reads') THEN
            -- Each piece in many quotes: the matching names of authors, counted and read newest first (0060).
            RETURN QUERY
                SELECT p.total, (SELECT qv.version FROM quotes_version qv), p.id, p.text, p.author,
                       p.category, p.created_at, false
                FROM quote_search_by_author_names(contains, whole, prefix, only_category, page_size,
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
                SELECT r.* FROM quote_search_walk_author(contains, whole, prefix, query, only_category,
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
                quote_search_by_words_author(l.words, l.words, contains, whole, prefix, true, k, only_category,
                                             exact + 1) AS m
            WHERE one_word IS NOT NULL AND l.words <> '{}'
            UNION ALL
            SELECT m.* FROM quote_search_by_words_author(a_words, coalesce(b_words, a_words), contains, whole,
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
END $$;
