-- Per-account quotas (README, "Per-account quotas"): a user keeps at most 200 collections and a collection holds
-- at most 1,000 quotes, whichever door writes them (/v1, /rest/v1, a sync batch). A refusal is SQLSTATE QV001
-- with the quota's name as its constraint; the server answers it as a 403 on every surface.
--
-- One trigger function for every quota. TG_ARGV: [0] the quota's name, [1] its limit, [2] the column naming the
-- owner rows are counted per, [3] the column that identifies a row beside it (an upsert of a row already there
-- adds nothing), [4] the refusal's message with %s for the limit. The count runs under an advisory lock on the
-- owner, so concurrent inserts cannot overshoot.
CREATE FUNCTION enforce_quota() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    owner uuid;
    key uuid;
    present boolean;
    held bigint;
BEGIN
    EXECUTE format('SELECT ($1).%I, ($1).%I', TG_ARGV[2], TG_ARGV[3]) INTO owner, key USING NEW;
    PERFORM pg_advisory_xact_lock(hashtextextended(TG_ARGV[0] || ':' || owner::text, 0));
    EXECUTE format('SELECT EXISTS (SELECT 1 FROM %1$I WHERE %2$I = $1 AND %3$I = $2), '
                   '(SELECT count(*) FROM %1$I WHERE %2$I = $1)', TG_TABLE_NAME, TG_ARGV[2], TG_ARGV[3])
        INTO present, held USING owner, key;
    IF NOT present AND held >= TG_ARGV[1]::bigint THEN
        RAISE EXCEPTION '%', format(TG_ARGV[4], TG_ARGV[1]) USING ERRCODE = 'QV001', CONSTRAINT = TG_ARGV[0];
    END IF;
    RETURN NEW;
END $$;

CREATE TRIGGER collections_per_account BEFORE INSERT ON collections FOR EACH ROW EXECUTE FUNCTION
    enforce_quota('collections_per_account', '200', 'user_id', 'id', 'an account holds at most %s collections');
CREATE TRIGGER quotes_per_collection BEFORE INSERT ON collection_quotes FOR EACH ROW EXECUTE FUNCTION
    enforce_quota('quotes_per_collection', '1000', 'collection_id', 'quote_id', 'a collection holds at most %s quotes');
