-- One lock order per account: its feed position (sync_positions), then a quota's lock. A quota took its advisory
-- lock in a BEFORE INSERT trigger and the account's position (sync_record) after the row was written, while a
-- transaction of several writes (a POST /v1/sync batch) already holds the position from an earlier write when a
-- later one takes a quota's lock: a batch and a single insert of one account could wait on each other (40P01,
-- seen while fuzzing with two workers). Now every quota takes the account's position first.

-- Locks the account's feed position, creating it (at 0, as 0008 does for existing users) if it is missing, so the
-- lock is taken even before the account's first change.
CREATE FUNCTION sync_lock_position(p_user uuid) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM 1 FROM sync_positions WHERE user_id = p_user FOR UPDATE;
    IF NOT FOUND THEN
        INSERT INTO sync_positions (user_id) SELECT p_user WHERE EXISTS (SELECT 1 FROM users WHERE id = p_user)
        ON CONFLICT (user_id) DO NOTHING;
        PERFORM 1 FROM sync_positions WHERE user_id = p_user FOR UPDATE;
    END IF;
END $$;

-- As in 0011, with TG_ARGV[5]: a query giving the account that owns the counted owner ($1).
CREATE OR REPLACE FUNCTION enforce_quota() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    owner uuid;
    key uuid;
    account uuid;
    present boolean;
    held bigint;
BEGIN
    EXECUTE format('SELECT ($1).%I, ($1).%I', TG_ARGV[2], TG_ARGV[3]) INTO owner, key USING NEW;
    EXECUTE TG_ARGV[5] INTO account USING owner;
    IF account IS NOT NULL THEN
        PERFORM sync_lock_position(account);
    END IF;
    PERFORM pg_advisory_xact_lock(hashtextextended(TG_ARGV[0] || ':' || owner::text, 0));
    EXECUTE format('SELECT EXISTS (SELECT 1 FROM %1$I WHERE %2$I = $1 AND %3$I = $2), '
                   '(SELECT count(*) FROM %1$I WHERE %2$I = $1)', TG_TABLE_NAME, TG_ARGV[2], TG_ARGV[3])
        INTO present, held USING owner, key;
    IF NOT present AND held >= TG_ARGV[1]::bigint THEN
        RAISE EXCEPTION '%', format(TG_ARGV[4], TG_ARGV[1]) USING ERRCODE = 'QV001', CONSTRAINT = TG_ARGV[0];
    END IF;
    RETURN NEW;
END $$;

DROP TRIGGER collections_per_account ON collections;
CREATE TRIGGER collections_per_account BEFORE INSERT ON collections FOR EACH ROW EXECUTE FUNCTION
    enforce_quota('collections_per_account', '200', 'user_id', 'id', 'an account holds at most %s collections',
                  'SELECT $1');
DROP TRIGGER quotes_per_collection ON collection_quotes;
CREATE TRIGGER quotes_per_collection BEFORE INSERT ON collection_quotes FOR EACH ROW EXECUTE FUNCTION
    enforce_quota('quotes_per_collection', '1000', 'collection_id', 'quote_id', 'a collection holds at most %s quotes',
                  'SELECT user_id FROM collections WHERE id = $1');
