-- A quote is kept as shown once a day has shown it, or while an owner's pin holds it for a coming day (issue 45).
-- A coming day's quote chosen by the date's seed (stored when a client or the console calendar asked ahead) binds
-- nothing: an edit shows on that day, and a deletion takes the choice with it (the day chooses again when asked).
-- Days shown and pins still refuse a deletion (quote_of_day's foreign key). Only the seed's choice says so
-- (QuoteOfTheDay inserts pinned = false); a row written any other way (/rest/v1 with the service role key, SQL) is
-- an owner's pin.
ALTER TABLE quote_of_day ALTER COLUMN pinned SET DEFAULT true;
CREATE OR REPLACE FUNCTION refuse_shown_quote_change() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    shown boolean;
BEGIN
    IF TG_TABLE_NAME = 'quote_of_day' THEN
        shown := OLD.date <= (now() AT TIME ZONE 'Etc/GMT-14')::date;
    ELSE
        shown := EXISTS (
            SELECT 1 FROM quote_of_day d
            WHERE d.quote_id = OLD.id AND (d.pinned OR d.date <= (now() AT TIME ZONE 'Etc/GMT-14')::date));
    END IF;
    IF shown THEN
        RAISE EXCEPTION 'A quote that has been a quote of the day cannot be changed' USING ERRCODE = '55000',
            HINT = 'Add a new quote instead', TABLE = TG_TABLE_NAME;
    END IF;
    IF TG_OP = 'DELETE' THEN
        RETURN OLD;
    END IF;
    RETURN NEW;
END $$;

CREATE FUNCTION forget_coming_choices_of_quote() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM quote_of_day
    WHERE quote_id = OLD.id AND NOT pinned AND date > (now() AT TIME ZONE 'Etc/GMT-14')::date;
    RETURN OLD;
END $$;

CREATE TRIGGER quotes_coming_choices_forgotten BEFORE DELETE ON quotes
    FOR EACH ROW EXECUTE FUNCTION forget_coming_choices_of_quote();
