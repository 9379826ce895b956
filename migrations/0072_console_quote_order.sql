-- The console's quote list sorted by a column at any page of 100,000 quotes (issue 45): a page seeks its first row
-- with an index-only scan of one of these (the category included, so a category filter needs no table row), then
-- reads its rows. Newest first uses quotes_newest_author_idx (0007).
CREATE INDEX quotes_text_order_idx ON quotes (text, id) INCLUDE (category);
CREATE INDEX quotes_author_order_idx ON quotes (author, id) INCLUDE (category);
CREATE INDEX quotes_category_order_idx ON quotes (category, created_at, id);
