-- Offline sync: a per-user change feed (deletions included), the remembered results of queued operations,
-- and idempotency keys.
--
-- Why a per-user sequence under a row lock. A feed read "every change after position N" must never skip a
-- change that commits after the reader looked. A global sequence (bigserial) cannot promise that: numbers are
-- handed out at insert time and transactions commit in any order, so a reader can see 12 before 11 commits,
-- move its token past 11, and never see it. Here every change of a user takes the next number from the
-- user's row in sync_positions with an UPDATE, which holds that row's lock until the transaction ends: a
-- second writer of the same user waits for the first to commit (or roll back) before it gets its number. So
-- for each user, numbers become visible strictly in order: any snapshot sees a prefix 1…k of the user's
-- changes, and a token k taken from what a reader saw is safe. The price: one user's writes commit one after
-- another (not across users), which a single person's devices never notice. The triggers below catch every
-- path that writes the library: /v1, the batch of POST /v1/sync, and the Supabase-compatible /rest/v1.

CREATE TABLE sync_positions (
    user_id        uuid PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    -- The number of the user's latest change.
    last_seq       bigint NOT NULL DEFAULT 0,
    -- Changes up to here were pruned: a token older than this answers 410 sync_token_expired.
    pruned_through bigint NOT NULL DEFAULT 0
);

-- One row per change, naming the object; the feed reads the object's current state when it answers.
CREATE TABLE sync_changes (
    user_id    uuid NOT NULL REFERENCES sync_positions (user_id) ON DELETE CASCADE,
    seq        bigint NOT NULL,
    kind       text NOT NULL CHECK (kind IN ('favorite', 'collection', 'collection_quote', 'profile')),
    op         text NOT NULL CHECK (op IN ('upsert', 'delete')),
    -- favorite: the quote; collection: the collection; collection_quote: the collection; profile: the user.
    object_id  uuid NOT NULL,
    -- collection_quote: the quote.
    quote_id   uuid,
    changed_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT sync_changes_pkey PRIMARY KEY (user_id, seq)
);
-- Pruning finds the oldest changes without scanning every user. Rows arrive in time order, so a BRIN index
-- (a few pages, next to nothing to maintain per insert) finds the old block ranges.
CREATE INDEX sync_changes_changed_at_idx ON sync_changes USING brin (changed_at);

-- Records one change of `p_user` with the user's next number (see the top of this file). For a user being
-- deleted (cascades from DELETE users) it records nothing, or something that goes with the user's position row.
CREATE FUNCTION sync_record(p_user uuid, p_kind text, p_op text, p_object uuid, p_quote uuid) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    next_seq bigint;
BEGIN
    UPDATE sync_positions SET last_seq = last_seq + 1 WHERE user_id = p_user RETURNING last_seq INTO next_seq;
    IF next_seq IS NULL THEN
        -- The user's first change (or a user being deleted, whose row is gone or about to be).
        INSERT INTO sync_positions AS p (user_id, last_seq)
        SELECT p_user, 1 WHERE EXISTS (SELECT 1 FROM users WHERE id = p_user)
        ON CONFLICT (user_id) DO UPDATE SET last_seq = p.last_seq + 1
        RETURNING last_seq INTO next_seq;
    END IF;
    IF next_seq IS NOT NULL THEN
        INSERT INTO sync_changes (user_id, seq, kind, op, object_id, quote_id)
        VALUES (p_user, next_seq, p_kind, p_op, p_object, p_quote);
    END IF;
END $$;

-- Rows owned directly by a user (user_id): favorites (keyed by quote_id) and collections (keyed by id).
-- TG_ARGV: the change kind, the key column.
CREATE FUNCTION sync_owned_row_changed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    old_row jsonb := CASE WHEN TG_OP <> 'INSERT' THEN to_jsonb(OLD) END;
    new_row jsonb := CASE WHEN TG_OP <> 'DELETE' THEN to_jsonb(NEW) END;
BEGIN
    IF old_row IS NOT NULL AND (new_row IS NULL OR old_row ->> 'user_id' <> new_row ->> 'user_id'
                                OR old_row ->> TG_ARGV[1] <> new_row ->> TG_ARGV[1]) THEN
        PERFORM sync_record((old_row ->> 'user_id')::uuid, TG_ARGV[0], 'delete', (old_row ->> TG_ARGV[1])::uuid, NULL);
    END IF;
    IF new_row IS NOT NULL THEN
        PERFORM sync_record((new_row ->> 'user_id')::uuid, TG_ARGV[0], 'upsert', (new_row ->> TG_ARGV[1])::uuid, NULL);
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER sync_favorites AFTER INSERT OR UPDATE OR DELETE ON user_favorites
    FOR EACH ROW EXECUTE FUNCTION sync_owned_row_changed('favorite', 'quote_id');
CREATE TRIGGER sync_collections AFTER INSERT OR UPDATE OR DELETE ON collections
    FOR EACH ROW EXECUTE FUNCTION sync_owned_row_changed('collection', 'id');

-- A quote added to or removed from a collection also changes the collection's quote_count: both are recorded.
-- Links removed because their collection was deleted are not: the collection's deletion says it (its quotes go
-- with it), and its owner can no longer be found.
CREATE FUNCTION sync_record_link(p_collection uuid, p_quote uuid, p_op text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    owner uuid;
BEGIN
    SELECT user_id INTO owner FROM collections WHERE id = p_collection;
    IF owner IS NOT NULL THEN
        PERFORM sync_record(owner, 'collection_quote', p_op, p_collection, p_quote);
        PERFORM sync_record(owner, 'collection', 'upsert', p_collection, NULL);
    END IF;
END $$;

CREATE FUNCTION sync_collection_quotes_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('DELETE', 'UPDATE') AND (TG_OP = 'DELETE' OR OLD.collection_id <> NEW.collection_id OR OLD.quote_id <> NEW.quote_id) THEN
        PERFORM sync_record_link(OLD.collection_id, OLD.quote_id, 'delete');
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        PERFORM sync_record_link(NEW.collection_id, NEW.quote_id, 'upsert');
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER sync_collection_quotes AFTER INSERT OR UPDATE OR DELETE ON collection_quotes
    FOR EACH ROW EXECUTE FUNCTION sync_collection_quotes_changed();

-- The User object: profiles (name, preferences; avatar changes touch profiles.updated_at too) and users (email).
CREATE FUNCTION sync_profile_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM sync_record(NEW.id, 'profile', 'upsert', NEW.id, NULL);
    RETURN NULL;
END $$;
CREATE TRIGGER sync_profiles AFTER INSERT OR UPDATE ON profiles
    FOR EACH ROW EXECUTE FUNCTION sync_profile_changed();
CREATE TRIGGER sync_users AFTER UPDATE ON users
    FOR EACH ROW WHEN (OLD.email IS DISTINCT FROM NEW.email) EXECUTE FUNCTION sync_profile_changed();

-- Users who existed before this migration start at position 0 with nothing pruned: a full sync gives them
-- everything, and their first change is number 1.
INSERT INTO sync_positions (user_id) SELECT id FROM users;

-- Each queued operation of POST /v1/sync, applied at most once: its result, remembered for at least 30 days.
-- The row is written in the same transaction as the operation's effect.
CREATE TABLE sync_operations (
    user_id    uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    id         uuid NOT NULL,
    status     smallint NOT NULL,
    code       text,
    -- The result's object as JSON text, when it has one.
    object     text,
    applied_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT sync_operations_pkey PRIMARY KEY (user_id, id)
);
CREATE INDEX sync_operations_applied_at_idx ON sync_operations (applied_at);

-- Idempotency-Key on /v1 writes: the first answer for (user, key), replayed for 24 hours. `status` is NULL while
-- the first request runs; a row left running by a crashed instance is taken over after a lease.
CREATE TABLE idempotency_keys (
    user_id      uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    key          text NOT NULL CHECK (octet_length(key) BETWEEN 1 AND 255),
    -- SHA-256 of method, path and body: the same key with another request is refused.
    fingerprint  bytea NOT NULL,
    started_at   timestamptz NOT NULL DEFAULT now(),
    status       smallint,
    content_type text,
    body         bytea,
    created_at   timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT idempotency_keys_pkey PRIMARY KEY (user_id, key)
);
CREATE INDEX idempotency_keys_created_at_idx ON idempotency_keys (created_at);
