#!/usr/bin/env bash
# Quotes benchmark: 100,000+ quotes; requests/s and p99 of a first page (with its total), a cursor page
# 5,000 pages deep, a keyword search, an author search and the quote of the day, each beside pgbench running
# the same SQL (the quote of the day beside the C libmicrohttpd floor), all in one run. Prints the plans.
# Usage: bench/quotes.sh   (DURATION=seconds per measurement, default 5)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
trap 'bench_stop_server; [[ -n "${floor_pid:-}" ]] && kill "$floor_pid" 2>/dev/null || true' EXIT

bench_build
bench_start_server 18080
url=$DATABASE_URL_BENCH
bench_seed

# Grow the corpus to 100,000+ distinct quotes by numbering copies of the real ones (same words, same search load).
count=$(psql -XAtq "$url" -c "SELECT count(*) FROM quotes")
if (( count < 100000 )); then
  psql -XAtq "$url" -c "
    INSERT INTO quotes (text, author, category, created_at)
    SELECT left(q.text, 290) || ' #' || n, q.author, q.category, q.created_at - n * interval '1 second'
    FROM quotes q, generate_series(1, 13) AS n
    ON CONFLICT DO NOTHING;
    ANALYZE quotes;" >/dev/null
fi
count=$(psql -XAtq "$url" -c "SELECT count(*) FROM quotes")
echo "quotes: $count"

size=10
# The cursor of page 5,001: the position after item 50,000.
cursor=$(curl -fs "http://127.0.0.1:18080/v1/quotes?page=5000&page_size=$size" | python3 -c "import json,sys; print(json.load(sys.stdin)['next_cursor'])")
read -r deep_us deep_id < <(psql -XAtq -F ' ' "$url" -c "
  SELECT (extract(epoch FROM created_at) * 1000000)::int8, id FROM quotes ORDER BY created_at DESC, id DESC OFFSET 49999 LIMIT 1")

columns="quotes.id AS quote_id, quotes.text AS quote_text, quotes.author AS quote_author, quotes.category AS quote_category, quotes.created_at AS quote_created_at"
page_sql="SELECT $columns, (extract(epoch FROM quotes.created_at) * 1000000)::int8 AS created_us FROM quotes WHERE true ORDER BY quotes.created_at DESC, quotes.id DESC LIMIT $((size + 1)) OFFSET 0;"
# The same page with its total, as the server sends it: what the total costs PostgreSQL itself.
page_total_sql="SELECT $columns, (SELECT coalesce(sum(count), 0)::int8 FROM quote_counts) AS total, (extract(epoch FROM quotes.created_at) * 1000000)::int8 AS created_us FROM quotes WHERE true ORDER BY quotes.created_at DESC, quotes.id DESC LIMIT $((size + 1)) OFFSET 0;"
deep_sql="SELECT $columns, (extract(epoch FROM quotes.created_at) * 1000000)::int8 AS created_us FROM quotes WHERE true AND (quotes.created_at, quotes.id) < (timestamptz 'epoch' + $deep_us * interval '1 microsecond', '$deep_id') ORDER BY quotes.created_at DESC, quotes.id DESC LIMIT $((size + 1));"
search_sql() { # column, literal
  echo "SELECT $columns, count(*) OVER () AS total FROM quotes WHERE quotes.$1 ILIKE '%$2%' ORDER BY CASE WHEN quotes.$1 ~* '(^|\\W)$2(\$|\\W)' THEN 0 WHEN quotes.$1 ~* '(^|\\W)$2' THEN 1 ELSE 2 END, quotes.created_at DESC, quotes.id DESC LIMIT $((size + 1)) OFFSET 0;"
}

echo; echo "plans:"
psql -XAtq "$url" -c "EXPLAIN $page_sql" | sed 's/^/  page   | /' | head -4
psql -XAtq "$url" -c "EXPLAIN $deep_sql" | sed 's/^/  cursor | /' | head -4
psql -XAtq "$url" -c "EXPLAIN $(search_sql text courage)" | sed 's/^/  search | /' | grep -E "Index|Scan|Sort" | head -4

curl -fs "http://127.0.0.1:18080/v1/qotd" >/dev/null  # choose today's quote once; the rest is memory
qotd_body=$(curl -fs "http://127.0.0.1:18080/v1/qotd")
"$BENCH_OUT/http-floor" 18081 2 "$qotd_body" &
floor_pid=$!
sleep 0.5

measure() { # label, url, pgbench sql (or "floor"), pgbench mode (the server's protocol for that statement)
  local label=$1 target=$2 sql=$3 mode=${4:-} rate p99 reference
  read -r rate p99 < <(wrk_rate "$target")
  if [[ "$sql" == floor ]]; then
    # Alternated twice and averaged, as in foundation.sh: neither side is measured only in a noisy moment.
    local rate2 reference2
    read -r reference _ < <(wrk_rate "http://127.0.0.1:18081/qotd")
    read -r rate2 _ < <(wrk_rate "$target")
    read -r reference2 _ < <(wrk_rate "http://127.0.0.1:18081/qotd")
    rate=$(awk -v a="$rate" -v b="$rate2" 'BEGIN {print (a+b)/2}')
    reference=$(awk -v a="$reference" -v b="$reference2" 'BEGIN {print (a+b)/2}')
    printf '%-30s %10.0f %8s   C floor %10.0f   %s\n' "$label" "$rate" "$p99" "$reference" "$(ratio "$rate" "$reference")"
  else
    reference=$(pgbench_rate "$url" "$sql" 4 "$mode")
    printf '%-30s %10.0f %8s   pgbench %10.0f   %s (-M %s)\n' "$label" "$rate" "$p99" "$reference" "$(ratio "$rate" "$reference")" "$mode"
  fi
  echo "$rate" >"$BENCH_OUT/last-rate"
}

first_url="http://127.0.0.1:18080/v1/quotes?page_size=$size"
deep_url="http://127.0.0.1:18080/v1/quotes?page_size=$size&cursor=$cursor"
# The first page and the deep cursor page alternate three times and are averaged: their ratio is a target, so
# neither is measured only in a noisy moment.
read -r first1 first_p99 < <(wrk_rate "$first_url")
read -r deep1 deep_p99 < <(wrk_rate "$deep_url")
read -r first2 _ < <(wrk_rate "$first_url")
read -r deep2 _ < <(wrk_rate "$deep_url")
read -r first3 _ < <(wrk_rate "$first_url")
read -r deep3 _ < <(wrk_rate "$deep_url")
first_rate=$(awk -v a="$first1" -v b="$first2" -v c="$first3" 'BEGIN {print (a+b+c)/3}')
deep_rate=$(awk -v a="$deep1" -v b="$deep2" -v c="$deep3" 'BEGIN {print (a+b+c)/3}')
echo "first page runs: $first1 $first2 $first3; cursor page runs: $deep1 $deep2 $deep3"
# pgbench in its three protocols: simple (its default) and extended parse and plan every statement; prepared plans
# once per connection, as the server now does for these pipelined reads.
page_simple=$(pgbench_rate "$url" "$page_sql" 4 simple)
page_extended=$(pgbench_rate "$url" "$page_sql" 4 extended)
page_prepared=$(pgbench_rate "$url" "$page_sql" 4 prepared)
page_total_prepared=$(pgbench_rate "$url" "$page_total_sql" 4 prepared)
deep_prepared=$(pgbench_rate "$url" "$deep_sql" 4 prepared)

printf '\n%-30s %10s %8s\n' "route" "req/s" "p99 ms"
printf '%-30s %10.0f %8s   pgbench %10.0f   %s (the page query alone, -M simple)\n' "first page + total" "$first_rate" "$first_p99" "$page_simple" "$(ratio "$first_rate" "$page_simple")"
printf '%-30s %10s %8s   pgbench %10.0f   %s (the page query alone, -M extended)\n' "" "" "" "$page_extended" "$(ratio "$first_rate" "$page_extended")"
printf '%-30s %10s %8s   pgbench %10.0f   %s (the page query alone, -M prepared)\n' "" "" "" "$page_prepared" "$(ratio "$first_rate" "$page_prepared")"
printf '%-30s %10s %8s   pgbench %10.0f   %s (the page query with its total, -M prepared)\n' "" "" "" "$page_total_prepared" "$(ratio "$first_rate" "$page_total_prepared")"
printf '%-30s %10.0f %8s   pgbench %10.0f   %s (-M prepared)\n' "cursor page 5,000 deep" "$deep_rate" "$deep_p99" "$deep_prepared" "$(ratio "$deep_rate" "$deep_prepared")"
# The searches run unnamed (planned for each pattern), as pgbench -M extended does.
measure "keyword search 'courage'" "http://127.0.0.1:18080/v1/quotes/search?q=courage&page_size=$size" "$(search_sql text courage)" extended
measure "author search 'twain'" "http://127.0.0.1:18080/v1/quotes/search?q=twain&type=author&page_size=$size" "$(search_sql author twain)" extended
measure "quote of the day" "http://127.0.0.1:18080/v1/qotd" floor
echo
echo "cursor page 5,000 deep vs first page: $(ratio "$deep_rate" "$first_rate") (pgbench -M prepared, the same two queries: $(ratio "$deep_prepared" "$page_prepared"))"
