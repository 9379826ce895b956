-- Writes made with the service role key through /rest/v1 are audited beside the console's own (issue 45). The
-- REST layer names the writer for its transaction (quotevault.audit_actor, .audit_address, .audit_user_agent);
-- each table the key may write records its changed rows. Other writers set nothing, and the WHEN clause skips
-- them without calling the function, so imports and the app's own writes pay next to nothing.
CREATE FUNCTION audit_named_writer() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    changed jsonb := to_jsonb(CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END);
BEGIN
    INSERT INTO console_audit (owner_email, action, target, before, after, client_address, user_agent)
    VALUES (
        current_setting('quotevault.audit_actor'),
        'rest.' || TG_TABLE_NAME || '.' || lower(TG_OP),
        coalesce(changed->>'id', changed->>'date', concat_ws(' ', changed->>'user_id', changed->>'collection_id',
                                                             changed->>'quote_id')),
        CASE WHEN TG_OP = 'INSERT' THEN NULL ELSE to_jsonb(OLD) END,
        CASE WHEN TG_OP = 'DELETE' THEN NULL ELSE to_jsonb(NEW) END,
        nullif(current_setting('quotevault.audit_address', true), ''),
        nullif(current_setting('quotevault.audit_user_agent', true), ''));
    RETURN NULL;
END $$;

DO $$
DECLARE
    name text;
BEGIN
    FOREACH name IN ARRAY ARRAY['quotes', 'quote_of_day', 'user_favorites', 'collections', 'collection_quotes'] LOOP
        EXECUTE format(
            'CREATE TRIGGER %I AFTER INSERT OR UPDATE OR DELETE ON %I FOR EACH ROW '
            || 'WHEN (coalesce(current_setting(''quotevault.audit_actor'', true), '''') <> '''') '
            || 'EXECUTE FUNCTION audit_named_writer()',
            name || '_named_writer_audited', name);
    END LOOP;
END $$;
