-- At most 1,001 matches read (by the trigram indexes, or for a text query of several words by its adjacent
-- pairs), counted and ranked in full: QuoteSearch's answer when the index of words cannot tell cheaply.

-- Every match (at most 1,001 read), counted and ranked; no rows when more than 1,000.
CREATE FUNCTION search.quote_search_ranked_text(
    contains text, whole text, prefix text, only_category text, page_size bigint, page_offset bigint)
RETURNS TABLE (total bigint, version bigint, id uuid, text text, author text, category text, created_at timestamptz)
LANGUAGE plpgsql STABLE
SET enable_seqscan = off SET plan_cache_mode = force_generic_plan SET jit = off SET max_parallel_workers_per_gather = 0
AS $$
DECLARE
    first_keys int[];
    second_keys int[];
BEGIN
    SELECT k.first, k.second INTO first_keys, second_keys FROM search.quote_search_pair_keys('t', contains) k;
    RETURN QUERY
        WITH matches AS MATERIALIZED (
            (SELECT q.id, q.text, q.author, q.category, q.created_at FROM quotes q
             WHERE first_keys IS NOT NULL
               AND quote_word_pairs(q.text) && first_keys AND quote_word_pairs(q.text) && second_keys
               AND search.quote_text_holds(q.text, contains)
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
            ORDER BY search.quote_search_tier(m.text, false, 0, whole, prefix), m.created_at DESC, m.id DESC
            LIMIT page_size OFFSET page_offset) AS r ON true;
END
$$;

-- The same for authors (their trigram index).
CREATE FUNCTION search.quote_search_ranked_author(
    contains text, whole text, prefix text, only_category text, page_size bigint, page_offset bigint)
RETURNS TABLE (total bigint, version bigint, id uuid, text text, author text, category text, created_at timestamptz)
LANGUAGE plpgsql STABLE
SET enable_seqscan = off SET plan_cache_mode = force_generic_plan SET jit = off SET max_parallel_workers_per_gather = 0
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
            ORDER BY search.quote_search_tier(m.author, false, 0, whole, prefix), m.created_at DESC, m.id DESC
            LIMIT page_size OFFSET page_offset) AS r ON true;
END
$$;

-- The distinct names of authors that match (quote_authors, migration 0060).
CREATE FUNCTION search.quote_authors_matching(contains text)
RETURNS text[]
LANGUAGE sql STABLE
SET enable_seqscan = off SET enable_bitmapscan = on
AS $$ SELECT ARRAY(SELECT DISTINCT a.author FROM quote_authors a WHERE a.author ILIKE contains) $$;

-- An author query of several words, each in many quotes: the names of authors that match, their quotes counted
-- from quotes_by_author_idx (at most exact_total + 1), the page tier by tier, newest first.
CREATE FUNCTION search.quote_search_by_author_names(
    contains text, whole text, prefix text, only_category text, page_size bigint, page_offset bigint)
RETURNS TABLE (total bigint, id uuid, text text, author text, category text, created_at timestamptz, tier integer)
LANGUAGE plpgsql STABLE
SET enable_seqscan = off SET enable_bitmapscan = off SET plan_cache_mode = force_generic_plan SET jit = off
SET max_parallel_workers_per_gather = 0
AS $$
DECLARE
    exact bigint := quote_search_limit('exact_total');
    found text[] := search.quote_authors_matching(contains);
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
            WHERE search.quote_search_tier(e.author, false, 0, whole, prefix) = k;
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
END
$$;
