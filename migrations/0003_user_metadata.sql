-- Free-form metadata the user may change (Supabase's `user_metadata`), shown by the Supabase-compatible
-- surface and carried in access tokens. The service bounds it to 4 KiB of compact JSON; jsonb text adds spaces.
ALTER TABLE users ADD COLUMN user_metadata jsonb NOT NULL DEFAULT '{}'::jsonb
    CONSTRAINT users_user_metadata_object CHECK (jsonb_typeof(user_metadata) = 'object')
    CONSTRAINT users_user_metadata_size CHECK (octet_length(user_metadata::text) <= 8192);
