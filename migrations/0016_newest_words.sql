-- The words of the newest quotes, in order: 0009's ordered index of words, kept for a window of the newest quotes
-- only, so that a one-word search reads a word's newest quotes as 0009 did (a backward range of a B-tree, the rows
-- the page needs) at a fraction of 0009's size. Older quotes are found through the word indexes and their time
-- buckets (0013, 0014). Why this design: bench/README.md ("Issue 31, third pass").
--
-- * quote_words_window.since: every quote created at or after it has its entries in quote_words_newest (older
--   quotes may have some too, from before the window last moved; they are right, only not needed).
-- * The window moves up when it holds more than twice newest_window quotes (quote_search_limit): `since` becomes
--   the newest_window-th newest quote's time and older entries are deleted. It only moves forward, and a writer adds
--   the entries of every quote at or after the `since` it reads, so no quote inside the window lacks its entries.
CREATE TABLE quote_words_newest (
    field      "char" NOT NULL CHECK (field IN ('t', 'a')),  -- 't': the quote's text; 'a': its author
    word       text COLLATE "C" NOT NULL,
    created_at timestamptz NOT NULL,
    quote_id   uuid NOT NULL,
    category   text NOT NULL,
    -- (word, newest first) is a backward scan of this key; the category rides along for category searches.
    PRIMARY KEY (field, word, created_at, quote_id) INCLUDE (category)
);

CREATE TABLE quote_words_window (
    one   boolean PRIMARY KEY DEFAULT true CHECK (one),
    since timestamptz NOT NULL
);

-- A quote's entries: the words of its text and of its author.
CREATE OR REPLACE FUNCTION quote_words_entries(quote_text text, quote_author text, OUT field "char", OUT word text)
    RETURNS SETOF record
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT 't'::"char", w FROM quote_words_of(quote_text) AS w
          UNION ALL SELECT 'a'::"char", w FROM quote_words_of(quote_author) AS w $$;

-- Moves the window up when it holds more than twice newest_window quotes (one read of that many index entries).
CREATE FUNCTION quote_words_newest_trim() RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    keep bigint := quote_search_limit('newest_window');
    since_now timestamptz := (SELECT w.since FROM quote_words_window w);
    cut timestamptz;
BEGIN
    IF EXISTS (SELECT 1 FROM quotes q WHERE q.created_at >= since_now
               ORDER BY q.created_at DESC OFFSET 2 * keep LIMIT 1) THEN
        SELECT q.created_at INTO cut FROM quotes q ORDER BY q.created_at DESC OFFSET keep - 1 LIMIT 1;
        UPDATE quote_words_window SET since = cut WHERE since < cut;
        DELETE FROM quote_words_newest WHERE created_at < cut;
    END IF;
END $$;

-- The window moves first (the new quotes counted), so that a large import adds the entries of its newest only.
CREATE FUNCTION quote_words_newest_on_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM quote_words_newest_trim();
    INSERT INTO quote_words_newest (field, word, created_at, quote_id, category)
    SELECT e.field, e.word, n.created_at, n.id, n.category
    FROM inserted n, quote_words_entries(n.text, n.author) AS e
    WHERE n.created_at >= (SELECT w.since FROM quote_words_window w);
    RETURN NULL;
END $$;

-- Every removed quote's entries, inside the window or not (one may remain from before the window moved).
CREATE FUNCTION quote_words_newest_on_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM quote_words_newest qw USING removed o, quote_words_entries(o.text, o.author) AS e
    WHERE qw.field = e.field AND qw.word = e.word AND qw.created_at = o.created_at AND qw.quote_id = o.id;
    RETURN NULL;
END $$;

-- A row whose text, author, time and category are unchanged keeps its entries.
CREATE FUNCTION quote_words_newest_on_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM quote_words_newest qw USING removed o, quote_words_entries(o.text, o.author) AS e
    WHERE qw.field = e.field AND qw.word = e.word AND qw.created_at = o.created_at AND qw.quote_id = o.id
      AND NOT EXISTS (SELECT 1 FROM inserted n WHERE n.id = o.id AND n.text = o.text AND n.author = o.author
                      AND n.created_at = o.created_at AND n.category = o.category);
    INSERT INTO quote_words_newest (field, word, created_at, quote_id, category)
    SELECT e.field, e.word, n.created_at, n.id, n.category
    FROM inserted n, quote_words_entries(n.text, n.author) AS e
    WHERE n.created_at >= (SELECT w.since FROM quote_words_window w)
      AND NOT EXISTS (SELECT 1 FROM removed o WHERE o.id = n.id AND o.text = n.text AND o.author = n.author
                      AND o.created_at = n.created_at AND o.category = n.category);
    RETURN NULL;
END $$;

CREATE FUNCTION quote_words_newest_on_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    TRUNCATE quote_words_newest;
    RETURN NULL;
END $$;

CREATE TRIGGER quote_words_newest_insert AFTER INSERT ON quotes
    REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION quote_words_newest_on_insert();
CREATE TRIGGER quote_words_newest_update AFTER UPDATE ON quotes
    REFERENCING OLD TABLE AS removed NEW TABLE AS inserted
    FOR EACH STATEMENT EXECUTE FUNCTION quote_words_newest_on_update();
CREATE TRIGGER quote_words_newest_delete AFTER DELETE ON quotes
    REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION quote_words_newest_on_delete();
CREATE TRIGGER quote_words_newest_truncate AFTER TRUNCATE ON quotes
    FOR EACH STATEMENT EXECUTE FUNCTION quote_words_newest_on_truncate();

-- The window starts at the newest_window-th newest quote (all of them with fewer; -infinity on an empty table).
INSERT INTO quote_words_window (since)
SELECT coalesce((SELECT q.created_at FROM quotes q ORDER BY q.created_at DESC
                 OFFSET quote_search_limit('newest_window') - 1 LIMIT 1), '-infinity');
INSERT INTO quote_words_newest (field, word, created_at, quote_id, category)
SELECT e.field, e.word, q.created_at, q.id, q.category
FROM quotes q, quote_words_entries(q.text, q.author) AS e
WHERE q.created_at >= (SELECT w.since FROM quote_words_window w);
