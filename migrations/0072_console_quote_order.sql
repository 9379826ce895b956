-- The console's quote list sorted by a column at any page of 100,000 quotes (issue 45): a page seeks its first row
-- in one of these (the category included, so a category filter needs no table row), from the nearer end, then reads
-- its rows. Newest first uses quotes_newest_author_idx (0007).
-- The text in lower case (case does not split the order), and so no index holding the text itself, which the
-- planner would scan whole for a filter on the text rather than its trigram index.
CREATE INDEX quotes_text_order_idx ON quotes ((lower(text)), id) INCLUDE (category);
CREATE INDEX quotes_author_order_idx ON quotes (author, id) INCLUDE (category);
CREATE INDEX quotes_category_order_idx ON quotes (category, created_at, id);
