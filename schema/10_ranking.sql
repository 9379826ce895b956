-- The ranking rule, written once. A match's tier is 0 when the query is a whole word of it, 1 when it starts a
-- word, 2 when it is anywhere else; within a tier, newest first (created_at DESC, id DESC: the ORDER BY every
-- entry point ends with, and the order of the indexes it walks). `whole` and `prefix` are the regular expressions
-- QuoteSearch.Patterns builds (\m...\M and \m...; (^|\W)...($|\W) next to punctuation). What matches at all is
-- ILIKE's: every case of the query, accented letters too, but not their plain forms.

-- A value's tier. `lowered`: the row was found through the words of tier `min_tier` of a one-word query, so
-- only whether it belongs to an earlier tier is tested: -1 then (callers keep tier >= min_tier), else min_tier.
CREATE FUNCTION search.quote_search_tier(value text, lowered boolean, min_tier integer, whole text, prefix text)
RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT CASE WHEN NOT lowered THEN CASE WHEN value ~* whole THEN 0 WHEN value ~* prefix THEN 1 ELSE 2 END
                WHEN min_tier = 1 AND value ~* whole AND lower(value) ~ whole THEN -1
                WHEN min_tier = 2 AND value ~* prefix AND lower(value) ~ prefix THEN -1
                ELSE min_tier END
$$;

-- Whether value matches the ILIKE pattern: LIKE first (a byte comparison, the query as typed), then ILIKE, which
-- lowercases the whole text (migration 0064). Inlined into the caller's statement.
CREATE FUNCTION search.quote_text_holds(value text, pattern text)
RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT coalesce(value LIKE pattern OR value ILIKE pattern, false) $$;
