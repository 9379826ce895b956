-- Search and counting for the quotes routes.

-- Trigram indexes serve case-insensitive substring search (ILIKE '%q%') without scanning the table.
CREATE INDEX quotes_text_trgm_idx ON quotes USING gin (text gin_trgm_ops);
CREATE INDEX quotes_author_trgm_idx ON quotes USING gin (author gin_trgm_ops);

-- `total` of the list routes, kept exact by the database itself: a count(*) over 100,000 rows costs
-- milliseconds per request, this costs one primary-key read.
CREATE TABLE quote_counts (
    category text PRIMARY KEY CHECK (category IN ('motivation', 'love', 'success', 'wisdom', 'humor')),
    count    bigint NOT NULL CHECK (count >= 0)
);
INSERT INTO quote_counts (category, count)
SELECT c.category, (SELECT count(*) FROM quotes q WHERE q.category = c.category)
FROM (VALUES ('motivation'), ('love'), ('success'), ('wisdom'), ('humor')) AS c (category);

-- Statement-level triggers: a bulk import updates each category's row once, not once per quote.
CREATE FUNCTION quote_counts_after_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE quote_counts c SET count = c.count + n.added
    FROM (SELECT category, count(*) AS added FROM inserted GROUP BY category) AS n
    WHERE c.category = n.category;
    RETURN NULL;
END $$;

CREATE FUNCTION quote_counts_after_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE quote_counts c SET count = c.count - n.removed
    FROM (SELECT category, count(*) AS removed FROM deleted GROUP BY category) AS n
    WHERE c.category = n.category;
    RETURN NULL;
END $$;

CREATE FUNCTION quote_counts_after_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE quote_counts c SET count = c.count + n.delta
    FROM (
        SELECT category, sum(delta) AS delta FROM (
            SELECT category, 1 AS delta FROM inserted
            UNION ALL
            SELECT category, -1 AS delta FROM deleted
        ) AS changes GROUP BY category
    ) AS n
    WHERE c.category = n.category AND n.delta <> 0;
    RETURN NULL;
END $$;

CREATE TRIGGER quote_counts_insert AFTER INSERT ON quotes
    REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION quote_counts_after_insert();
CREATE TRIGGER quote_counts_delete AFTER DELETE ON quotes
    REFERENCING OLD TABLE AS deleted FOR EACH STATEMENT EXECUTE FUNCTION quote_counts_after_delete();
CREATE TRIGGER quote_counts_update AFTER UPDATE ON quotes
    REFERENCING NEW TABLE AS inserted OLD TABLE AS deleted FOR EACH STATEMENT EXECUTE FUNCTION quote_counts_after_update();
-- TRUNCATE bypasses row triggers: keep the counts right for it too.
CREATE FUNCTION quote_counts_after_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE quote_counts SET count = 0;
    RETURN NULL;
END $$;
CREATE TRIGGER quote_counts_truncate AFTER TRUNCATE ON quotes
    FOR EACH STATEMENT EXECUTE FUNCTION quote_counts_after_truncate();
