-- A day's quote is kept as shown, and a day is shown once it has begun anywhere on Earth (the earliest zone is
-- UTC+14, as `QuoteOfTheDay.isFrozen` says): its quote_of_day row never changes or goes. A coming day's row may
-- still be replaced or removed by the owners' console pins (0036). Quotes once chosen for a day stay refused.
CREATE OR REPLACE FUNCTION refuse_shown_quote_change() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    shown boolean;
BEGIN
    IF TG_TABLE_NAME = 'quote_of_day' THEN
        shown := OLD.date <= (now() AT TIME ZONE 'Etc/GMT-14')::date;
    ELSE
        shown := EXISTS (SELECT 1 FROM quote_of_day d WHERE d.quote_id = OLD.id);
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
