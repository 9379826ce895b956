#!/usr/bin/env bash
# Whether the search functions' totals are what ILIKE counts, over a database's own text: 1,000 two-word phrases of
# its quotes (adjacent words of four letters or more, a fixed sample) and every two-word author name. Prints, per
# field, how many were searched, how many ILIKE finds, how many of those the search found none of, and how many
# totals differ from ILIKE's count (all 0 when correct).
# usage: bench/search-totals.sh DATABASE_URL
set -euo pipefail
URL=$1
psql -X "$URL" <<'SQL'
WITH w AS (SELECT regexp_split_to_array(lower(text), '[^a-z]+') AS ws FROM quotes),
phrases AS (SELECT DISTINCT w.ws[i] || ' ' || w.ws[i + 1] AS q FROM w, generate_series(1, 3) AS i
            WHERE length(w.ws[i]) > 3 AND length(w.ws[i + 1]) > 3),
names AS (SELECT DISTINCT lower(author) AS q FROM quotes WHERE author ~ '^[A-Za-z]+ [A-Za-z]+$'),
searched AS (
    SELECT 'keyword' AS field, s.q,
           (SELECT count(*) FROM quotes t WHERE t.text ILIKE '%' || s.q || '%') AS counted,
           (SELECT r.total FROM search.quote_search_words_text(s.q, '%' || s.q || '%', '\m' || s.q || '\M', '\m' || s.q,
                                                        NULL, 21, 0) AS r LIMIT 1) AS total
    FROM (SELECT q FROM phrases ORDER BY md5(q) LIMIT 1000) AS s
    UNION ALL
    SELECT 'author', n.q,
           (SELECT count(*) FROM quotes t WHERE t.author ILIKE '%' || n.q || '%'),
           (SELECT r.total FROM search.quote_search_words_author(n.q, '%' || n.q || '%', '\m' || n.q || '\M', '\m' || n.q,
                                                          NULL, 21, 0) AS r LIMIT 1)
    FROM names AS n)
SELECT field, count(*) AS searched, count(*) FILTER (WHERE counted > 0) AS present,
       count(*) FILTER (WHERE counted > 0 AND total = 0) AS present_none_found,
       count(*) FILTER (WHERE least(counted, 1001) IS DISTINCT FROM least(total, 1001)) AS totals_differ
FROM searched GROUP BY field ORDER BY field;
SQL
