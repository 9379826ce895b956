-- Where each audited request came from (issue 45): the client address and User-Agent of console actions, failed
-- sign-ins and service role writes through /rest/v1; searchable with the rest of the row.
ALTER TABLE console_audit ADD COLUMN client_address text, ADD COLUMN user_agent text;
ALTER TABLE console_audit DROP COLUMN search_text;
ALTER TABLE console_audit ADD COLUMN search_text text GENERATED ALWAYS AS (
    lower(owner_email || ' ' || action || ' ' || target || ' ' || coalesce(before::text, '') || ' '
          || coalesce(after::text, '') || ' ' || coalesce(client_address, '') || ' ' || coalesce(user_agent, '')))
    STORED;
CREATE INDEX console_audit_search_idx ON console_audit USING gin (search_text gin_trgm_ops);
