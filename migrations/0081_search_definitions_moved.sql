-- The query-time search functions now live in schema/, re-applied into the `search` schema whenever a file there
-- changes (see docs/search.md). Their old definitions in `public` are dropped, so an upgraded database and a new
-- one end the same. Tables, indexes, triggers and the immutable functions indexes are built on stay here.
DROP FUNCTION public.quote_authors_matching(contains text);
DROP FUNCTION public.quote_search_both_pieces(a_uses bigint, b_uses bigint);
DROP FUNCTION public.quote_search_by_author_names(contains text, whole text, prefix text, only_category text, page_size bigint, page_offset bigint);
DROP FUNCTION public.quote_search_by_words_author(any_a text[], any_b text[], contains text, whole text, prefix text, lowered boolean, min_tier integer, only_category text, wanted bigint, before timestamp with time zone);
DROP FUNCTION public.quote_search_by_words_text(any_a text[], any_b text[], contains text, whole text, prefix text, lowered boolean, min_tier integer, only_category text, wanted bigint, before timestamp with time zone);
DROP FUNCTION public.quote_search_matches_text(any_a text[], any_b text[], contains text, only_category text, before timestamp with time zone, wanted bigint);
DROP FUNCTION public.quote_search_newest_author(any_a text[], any_b text[], contains text, whole text, prefix text, lowered boolean, min_tier integer, only_category text, wanted bigint, uses bigint, before timestamp with time zone);
DROP FUNCTION public.quote_search_newest_text(any_a text[], any_b text[], contains text, whole text, prefix text, lowered boolean, min_tier integer, only_category text, wanted bigint, uses bigint, before timestamp with time zone);
DROP FUNCTION public.quote_search_pair_keys(searched "char", contains text, OUT first integer[], OUT second integer[]);
DROP FUNCTION public.quote_search_pieces(searched "char", query text);
DROP FUNCTION public.quote_search_ranked_author(contains text, whole text, prefix text, only_category text, page_size bigint, page_offset bigint);
DROP FUNCTION public.quote_search_ranked_text(contains text, whole text, prefix text, only_category text, page_size bigint, page_offset bigint);
DROP FUNCTION public.quote_search_tier(value text, lowered boolean, min_tier integer, whole text, prefix text);
DROP FUNCTION public.quote_search_tier_words(searched "char", one_word text, tier integer, OUT words text[], OUT uses bigint, OUT most bigint);
DROP FUNCTION public.quote_search_unescaped(contains text);
DROP FUNCTION public.quote_search_vocabulary_holds(searched "char", piece text);
DROP FUNCTION public.quote_search_vocabulary_tiers(searched "char", one_word text, OUT words text[], OUT uses bigint[], OUT most bigint[]);
DROP FUNCTION public.quote_search_walk_author(contains text, whole text, prefix text, query text, only_category text, wanted bigint);
DROP FUNCTION public.quote_search_walk_text(contains text, whole text, prefix text, query text, only_category text, wanted bigint);
DROP FUNCTION public.quote_search_words_author(query text, contains text, whole text, prefix text, only_category text, page_size bigint, page_offset bigint);
DROP FUNCTION public.quote_search_words_text(query text, contains text, whole text, prefix text, only_category text, page_size bigint, page_offset bigint);
DROP FUNCTION public.quote_text_holds(value text, pattern text);
DROP FUNCTION public.quote_words_one_word(query text);
DROP TYPE public.quote_search_match;
