-- Bulk import into an empty table: the GIN indexes of quotes (trigram, full text, words) are set aside while the
-- rows go in and built once at the end. Keeping eight GIN indexes row by row is most of an import's cost; one
-- CREATE INDEX sorts all the entries at once. Figures: bench/README.md ("Issue 31, import in 120 s").
--
-- The definitions set aside are kept here, committed with the DROP, so that an import cut short at any point (even
-- killed) leaves a record of what to build again: the importer builds them at its end (interrupted or not),
-- and any later import at its end. Searches stay right meanwhile (the indexes are on expressions the queries
-- compute themselves), only slower; the vocabulary and the window of newest words are kept by their triggers.
CREATE TABLE quote_import_deferred_indexes (
    name       text PRIMARY KEY,
    definition text NOT NULL
);

-- Drops every GIN index of quotes, keeping its definition; returns how many. Whatever indexes other migrations
-- add or drop later, the same ones come back.
CREATE FUNCTION quote_import_defer_indexes() RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    index record;
    n bigint := 0;
BEGIN
    FOR index IN
        SELECT c.relname AS name, pg_get_indexdef(c.oid) AS definition
        FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am a ON a.oid = c.relam
        WHERE i.indrelid = 'quotes'::regclass AND a.amname = 'gin' AND NOT i.indisunique
        ORDER BY c.relname
    LOOP
        INSERT INTO quote_import_deferred_indexes (name, definition) VALUES (index.name, index.definition);
        EXECUTE format('DROP INDEX %I', index.name);
        n := n + 1;
    END LOOP;
    RETURN n;
END $$;

-- Builds one index set aside (the caller's transaction holds it; builds of different indexes may run side by side
-- on several sessions). A name no longer set aside (built by another session) does nothing.
CREATE FUNCTION quote_import_build_index(index_name text) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
    definition text;
BEGIN
    DELETE FROM quote_import_deferred_indexes d WHERE d.name = index_name RETURNING d.definition INTO definition;
    IF definition IS NULL THEN
        RETURN false;
    END IF;
    -- A GIN build sorts its entries in memory: with room for all of them, one pass.
    SET LOCAL maintenance_work_mem = '512MB';
    EXECUTE definition;
    RETURN true;
END $$;
