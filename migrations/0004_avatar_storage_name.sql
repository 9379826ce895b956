-- The Supabase-compatible storage bucket `avatars` holds each user's avatar as `<user id>/<name>`: the name the
-- client uploaded it under (NULL for avatars set through /v1/me/avatar, shown there as `avatar`).
ALTER TABLE avatars ADD COLUMN storage_name text
    CONSTRAINT avatars_storage_name_shape CHECK (storage_name IS NULL OR (storage_name <> '' AND char_length(storage_name) <= 200
        AND strpos(storage_name, '/') = 0));
