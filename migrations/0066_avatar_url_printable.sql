-- profiles.avatar_url holds no control character (C0, DEL, C1) and no whitespace (Unicode White_Space, the line
-- and paragraph separators included): a line break in a URL splits a header or a log line wherever it is echoed.
-- AvatarURL refuses the same characters with a field error; this is the table's own rule, whoever writes it.
-- A URL stored before with one of them could not be loaded as written: it is cleared, as if never set.
UPDATE profiles SET avatar_url = NULL, updated_at = now()
WHERE avatar_url ~ '[\u0001-\u0020\u007F-\u00A0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000]';

ALTER TABLE profiles ADD CONSTRAINT profiles_avatar_url_printable
    CHECK (avatar_url !~ '[\u0001-\u0020\u007F-\u00A0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000]');
