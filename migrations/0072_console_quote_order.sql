-- The console's quote list sorted by a column at any page of 100,000 quotes (issue 45): a page seeks its first row
-- in one of these (the category included, so a category filter needs no table row), from the nearer end, then reads
-- its rows. Newest first uses quotes_newest_author_idx (0007).
-- The text and the author in lower case (case does not split the order), and so no index keyed on either column,
-- which the planner would take for the app's own filters on it (a whole scan rather than the trigram index).
CREATE INDEX quotes_text_order_idx ON quotes ((lower(text)), id) INCLUDE (category);
-- The same for the author: the search reads quotes_by_author_idx (0060) and must keep choosing it.
CREATE INDEX quotes_author_order_idx ON quotes ((lower(author)), id) INCLUDE (category);
-- The category order reads quote_favorite_counts (0071), which holds the category and created_at of every quote,
-- so no index of quotes competes with quotes_category_newest_idx for the app's own queries.
CREATE INDEX quote_favorite_counts_category_idx ON quote_favorite_counts (category, created_at, quote_id);
