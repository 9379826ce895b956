-- Searches read GIN indexes whose new entries, by PostgreSQL's default (fastupdate), first go to an unsorted
-- pending list that every scan of the index reads in full until it is merged into the index: by the insert that
-- takes it past gin_pending_list_limit (4 MB), or by a vacuum or an autoanalyze of the table, which on a large
-- table come only after many thousands of changed rows. So a search's cost grew with what was written since: after
-- an import into a table in use, or console edits, every keyword search read megabytes of pending entries. Figures:
-- bench/README.md ("Issue 31: GIN pending lists and search latency after writes").
--
-- The trigram indexes of the vocabulary (probed by every keyword search) and of the authors' names (0060): no
-- pending list. Their tables are small, and a write of quotes changes few of their rows (a new word or name, or a
-- word's count whose new row version needs its trigrams again), so entries go straight into the index cheaply; a
-- pending list there held more entries than the index itself.
--
-- The GIN indexes of quotes: the smallest pending list PostgreSQL allows (64 kB), so a scan reads at most a few
-- pages of it. Each quote adds dozens of entries to each of them (trigrams, words, pairs, lexemes); merged in small
-- batches they keep most of what the list saves an insert of many rows (an import into a table in use), which
-- without any list takes several times as long. An import into an empty table builds them at its end (0049), from
-- definitions that keep the setting; one cut short before this migration gets it too.
--
-- A GIN index added later to these tables should say the same in its CREATE INDEX.
DO $$
DECLARE
    index record;
BEGIN
    FOR index IN
        SELECT c.oid, c.relname AS name, i.indrelid = 'quotes'::regclass AS of_quotes
        FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am a ON a.oid = c.relam
        WHERE i.indrelid IN ('quotes'::regclass, 'quote_vocabulary'::regclass, 'quote_authors'::regclass)
          AND a.amname = 'gin'
    LOOP
        -- What is pending now goes into the index (a setting applies to later inserts only).
        PERFORM gin_clean_pending_list(index.oid);
        EXECUTE format('ALTER INDEX %I SET (%s)', index.name,
                       CASE WHEN index.of_quotes THEN 'gin_pending_list_limit = 64' ELSE 'fastupdate = off' END);
    END LOOP;
END $$;

UPDATE quote_import_deferred_indexes SET definition = definition || ' WITH (gin_pending_list_limit = 64)'
WHERE definition NOT LIKE '% WITH (%';
