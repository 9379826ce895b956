-- Rules that belong to a table live with the table, whichever door writes it (/v1, /rest/v1, SQL):
-- a day's quote of the day is kept as it was shown. Its quote_of_day row never changes or goes (new dates may
-- still be chosen or pinned), and a quote once shown as a quote of the day is not rewritten (deleting it is
-- already refused by quote_of_day's foreign key). A refusal is SQLSTATE 55000 (object not in prerequisite state).
CREATE FUNCTION refuse_shown_quote_change() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    shown boolean;
BEGIN
    -- Every quote_of_day row was shown; a quote only if a day chose it (OLD.id is read for quotes only).
    IF TG_TABLE_NAME = 'quote_of_day' THEN
        shown := true;
    ELSE
        shown := EXISTS (SELECT 1 FROM quote_of_day d WHERE d.quote_id = OLD.id);
    END IF;
    IF shown THEN
        RAISE EXCEPTION 'A quote that has been a quote of the day cannot be changed' USING ERRCODE = '55000',
            HINT = 'Add a new quote instead', TABLE = TG_TABLE_NAME;
    END IF;
    RETURN NEW;
END $$;

CREATE TRIGGER quote_of_day_kept BEFORE UPDATE OR DELETE ON quote_of_day
    FOR EACH ROW EXECUTE FUNCTION refuse_shown_quote_change();
CREATE TRIGGER quotes_shown_kept BEFORE UPDATE ON quotes
    FOR EACH ROW EXECUTE FUNCTION refuse_shown_quote_change();
