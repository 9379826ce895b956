-- Accounts an owner disabled from the console (issue 45), as GoTrue's banned_until: until then the account signs
-- in nowhere and its tokens are refused. 'infinity' until an owner re-enables it (NULL).
ALTER TABLE users ADD COLUMN banned_until timestamptz;
