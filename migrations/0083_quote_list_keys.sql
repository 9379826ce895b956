-- The console's quote list sorted by text or author at a middle page (issue 45): a page's first row is found by
-- skipping up to half the quotes in the order's index. The lower(text) and lower(author) expression indexes of
-- quotes (0072) cannot be read alone: PostgreSQL scans an expression index index-only only when the columns the
-- expression reads are in it too, so each entry skipped read a table row (p99 308 ms at 106,000 quotes). Including
-- the column would make that index cover the app's own filters on it, and the planner would take it for them
-- instead of the trigram index (0072). So the keys live in a table of their own, as the favorites and category
-- orders do (0071): plain columns, read index-only; kept by triggers, as they change only when a quote does.
CREATE TABLE quote_list_keys (
    quote_id   uuid PRIMARY KEY REFERENCES quotes (id) ON DELETE CASCADE,
    text_key   text NOT NULL,
    author_key text NOT NULL,
    category   text NOT NULL
);
INSERT INTO quote_list_keys (quote_id, text_key, author_key, category)
SELECT id, lower(text), lower(author), category FROM quotes;
CREATE INDEX quote_list_keys_text_idx ON quote_list_keys (text_key, quote_id) INCLUDE (category);
CREATE INDEX quote_list_keys_author_idx ON quote_list_keys (author_key, quote_id) INCLUDE (category);
DROP INDEX quotes_text_order_idx;
DROP INDEX quotes_author_order_idx;

-- A statement's new quotes get their keys at once (one insert per statement).
CREATE FUNCTION quote_list_keys_add_quotes() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO quote_list_keys (quote_id, text_key, author_key, category)
    SELECT id, lower(text), lower(author), category FROM inserted;
    RETURN NULL;
END $$;
CREATE TRIGGER quote_list_keys_add_quotes AFTER INSERT ON quotes
    REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION quote_list_keys_add_quotes();

CREATE FUNCTION quote_list_keys_follow_quote() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE quote_list_keys SET text_key = lower(NEW.text), author_key = lower(NEW.author), category = NEW.category
    WHERE quote_id = NEW.id;
    RETURN NULL;
END $$;
CREATE TRIGGER quote_list_keys_follow_quote AFTER UPDATE OF text, author, category ON quotes
    FOR EACH ROW WHEN (OLD.text IS DISTINCT FROM NEW.text OR OLD.author IS DISTINCT FROM NEW.author
                       OR OLD.category IS DISTINCT FROM NEW.category)
    EXECUTE FUNCTION quote_list_keys_follow_quote();
