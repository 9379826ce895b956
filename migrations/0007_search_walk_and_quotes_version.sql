-- Ranked search whose cost does not grow with its matches, and a version of the quotes for caches and ETags.

-- A number that changes with every statement that changes quotes (insert, update, delete, truncate), whoever
-- runs it (this server, another instance, an import by plain SQL). Answers derived from quotes are tagged with
-- it: an ETag, a cached page or a cached "more than 1,000 matches" stays valid while it is unchanged.
CREATE TABLE quotes_version (
    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    version   bigint NOT NULL
);
INSERT INTO quotes_version (version) VALUES (1);

CREATE FUNCTION quotes_version_bump() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE quotes_version SET version = version + 1;
    RETURN NULL;
END $$;
CREATE TRIGGER quotes_version_change AFTER INSERT OR UPDATE OR DELETE ON quotes
    FOR EACH STATEMENT EXECUTE FUNCTION quotes_version_bump();
CREATE TRIGGER quotes_version_truncate AFTER TRUNCATE ON quotes
    FOR EACH STATEMENT EXECUTE FUNCTION quotes_version_bump();

-- Authors are short: the newest-first order with the author (and category) in the index lets an author search
-- walk the index alone, reading the table only for the rows it returns.
CREATE INDEX quotes_newest_author_idx ON quotes (created_at DESC, id DESC) INCLUDE (author, category);

-- The first `wanted` matches of a search with many matches, in the contract's order: the query as a whole word
-- (tier 0), then as the start of a word (1), then anywhere (2); newest first within a tier. Each tier walks the
-- newest-first index and stops as soon as it has `wanted` rows, and a tier is only walked when the ones before
-- it had fewer: with many matches the walk is short, whatever their number. The planner is kept to that walk
-- (no bitmap scan, no sort of every match) and to one plan (planning the three tiers' regular expressions
-- against the column statistics cost more than the walk): with parameters it cannot see how common a term
-- is, and a bitmap scan plus sort costs as much as the matches (nor parallel workers: starting them costs more
-- than these walks). The tiers return positions (id, created_at),
-- so an author walk stays in quotes_newest_author_idx; the table is read for the rows returned only.
-- `contains` is the ILIKE pattern, which defines a match; `whole` and `prefix` are the regular expressions that
-- rank it (`whole` implies `prefix`, so the three tiers never share a row and miss none). Over a quote's text
-- the regular expression is tested first in tiers 0 and 1 (about half ILIKE's cost per row of a long text, and
-- most rows of the walk fail it); over a short author, ILIKE first. The expression cannot replace ILIKE, whose
-- case-insensitivity is lower()'s ('İ' is 'i' to ILIKE, not to ~*).
-- One function per searched column (quote_search_walk_text, quote_search_walk_author), made from one text.
DO $make$
DECLARE searched text;
BEGIN
    FOREACH searched IN ARRAY ARRAY['text', 'author'] LOOP
        EXECUTE format($f$
            CREATE FUNCTION %1$I(contains text, whole text, prefix text, only_category text, wanted bigint)
            RETURNS TABLE (id uuid, text text, author text, category text, created_at timestamptz, tier int)
            LANGUAGE plpgsql STABLE
            SET enable_seqscan = off SET enable_bitmapscan = off SET enable_sort = off
            SET plan_cache_mode = force_generic_plan SET jit = off SET max_parallel_workers_per_gather = 0
            AS $$
            BEGIN
                RETURN QUERY SELECT q.id, q.text, q.author, q.category, q.created_at, w.tier FROM (
                    (SELECT t.id, t.created_at, 0 AS tier FROM quotes t
                     WHERE %3$s AND (only_category IS NULL OR t.category = only_category)
                     ORDER BY t.created_at DESC, t.id DESC LIMIT wanted)
                    UNION ALL
                    (SELECT t.id, t.created_at, 1 FROM quotes t
                     WHERE %4$s AND t.%2$I !~* whole AND (only_category IS NULL OR t.category = only_category)
                     ORDER BY t.created_at DESC, t.id DESC LIMIT wanted)
                    UNION ALL
                    (SELECT t.id, t.created_at, 2 FROM quotes t
                     WHERE t.%2$I ILIKE contains AND t.%2$I !~* prefix
                       AND (only_category IS NULL OR t.category = only_category)
                     ORDER BY t.created_at DESC, t.id DESC LIMIT wanted)
                    LIMIT wanted) AS w
                JOIN quotes q ON q.id = w.id
                ORDER BY w.tier, w.created_at DESC, w.id DESC;
            END $$
            $f$, 'quote_search_walk_' || searched, searched,
            CASE searched WHEN 'text' THEN 't.text ~* whole AND t.text ILIKE contains'
                          ELSE 't.author ILIKE contains AND t.author ~* whole' END,
            CASE searched WHEN 'text' THEN 't.text ~* prefix AND t.text ILIKE contains'
                          ELSE 't.author ILIKE contains AND t.author ~* prefix' END);
    END LOOP;
END $make$;

-- A search with at most 1,000 matches, ranked in full: at most 1,001 matches are read (through the trigram
-- index of the searched column), and `total` is their number; with 1,001 (more than 1,000) no row is ranked and
-- the caller walks instead. Every answer has one row at least: `total` and the quotes' `version` ride on each
-- (id NULL when the page is empty). One plan, kept for the session: ILIKE through the trigram index whatever the
-- pattern (planning each pattern against the statistics cost more than ranking a few hundred matches). One
-- function per searched column, made from one text, so that each has its own index in its plan.
DO $make$
DECLARE searched text;
BEGIN
    FOREACH searched IN ARRAY ARRAY['text', 'author'] LOOP
        EXECUTE format($f$
            CREATE FUNCTION %1$I(
                contains text, whole text, prefix text, only_category text, page_size bigint, page_offset bigint)
            RETURNS TABLE (total bigint, version bigint, id uuid, text text, author text, category text, created_at timestamptz)
            LANGUAGE plpgsql STABLE
            SET enable_seqscan = off SET plan_cache_mode = force_generic_plan SET jit = off SET max_parallel_workers_per_gather = 0
            AS $$
            BEGIN
                RETURN QUERY
                    WITH matches AS MATERIALIZED (
                        SELECT q.id, q.text, q.author, q.category, q.created_at FROM quotes q
                        WHERE q.%2$I ILIKE contains AND (only_category IS NULL OR q.category = only_category)
                        LIMIT 1001),
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
            $f$, 'quote_search_ranked_' || searched, searched);
    END LOOP;
END $make$;
