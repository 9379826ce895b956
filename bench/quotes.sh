#!/usr/bin/env bash
# Quotes benchmark: 100,000+ quotes; requests/s and p99 of a first page (with its total), a cursor page
# 5,000 pages deep, a keyword search, an author search and the quote of the day, each beside pgbench running
# the same SQL (the quote of the day beside the C libmicrohttpd floor), all in one run. Prints the plans.
# Usage: bench/quotes.sh   (DURATION=seconds per pgbench reference, default 5; the compared pairs alternate ROUNDS
# times, default 12, for ROUND_SECONDS each, default 2)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
ROUNDS=${ROUNDS:-12}
ROUND_SECONDS=${ROUND_SECONDS:-2}
trap 'bench_stop_server; [[ -n "${floor_pid:-}" ]] && kill "$floor_pid" 2>/dev/null || true' EXIT

bench_build
bench_start_server 18080
url=$DATABASE_URL_BENCH
bench_seed

echo "quotes: $(bench_grow_quotes)"

size=10
# The cursor of page 5,001: the position after item 50,000.
cursor=$(curl -fs "http://127.0.0.1:18080/v1/quotes?page=5000&page_size=$size" | python3 -c "import json,sys; print(json.load(sys.stdin)['next_cursor'])")
read -r deep_at deep_id < <(psql -XAtq -F ' ' "$url" -c "
  SELECT replace(created_at::text, ' ', 'T'), id FROM quotes ORDER BY created_at DESC, id DESC OFFSET 49999 LIMIT 1")

columns="quotes.id AS quote_id, quotes.text AS quote_text, quotes.author AS quote_author, quotes.category AS quote_category, quotes.created_at AS quote_created_at"
page_sql="SELECT $columns FROM quotes WHERE true ORDER BY quotes.created_at DESC, quotes.id DESC LIMIT $((size + 1)) OFFSET 0;"
# The same page with its total, as the server sends it: what the total costs PostgreSQL itself.
page_total_sql="SELECT $columns, (SELECT coalesce(sum(count), 0)::int8 FROM quote_counts) AS total FROM quotes WHERE true ORDER BY quotes.created_at DESC, quotes.id DESC LIMIT $((size + 1)) OFFSET 0;"
deep_sql="SELECT $columns FROM quotes WHERE true AND (quotes.created_at, quotes.id) < ('$deep_at'::timestamptz, '$deep_id') ORDER BY quotes.created_at DESC, quotes.id DESC LIMIT $((size + 1));"
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

# Measures A and B (functions printing "rate [p99]") alternately ROUNDS times for ROUND_SECONDS each, so that
# neither side is measured only in a noisy moment: this shared machine's speed drifts by ±10% from one 5-second
# window to the next (five 5-second rounds of the same two pages gave 81–104%; sixteen 2-second rounds, 85–105%
# each but 96% over all). Prints the mean rate and p99 of A, the mean rate and p99 of B (0 for pgbench), then each
# round's ratio A/B. The means are over equal durations, so their ratio is the ratio of requests served.
alternate() {
  local a=$1 b=$2 i rate_a p99_a rate_b p99_b
  local DURATION=$ROUND_SECONDS  # read by wrk_rate and pgbench_rate
  local -a rates_a=() p99s_a=() rates_b=() p99s_b=() ratios=()
  for ((i = 0; i < ROUNDS; i++)); do
    read -r rate_a p99_a < <($a)
    read -r rate_b p99_b < <($b)
    rates_a+=("$rate_a"); p99s_a+=("$p99_a"); rates_b+=("$rate_b"); p99s_b+=("${p99_b:-0}")
    ratios+=("$(ratio "$rate_a" "$rate_b")")
  done
  echo "$(mean "${rates_a[@]}") $(mean "${p99s_a[@]}") $(mean "${rates_b[@]}") $(mean "${p99s_b[@]}") ${ratios[*]}"
}
mean() { printf '%s\n' "$@" | awk '{ sum += $1 } END { printf "%.1f", sum / NR }'; }

first_url="http://127.0.0.1:18080/v1/quotes?page_size=$size"
deep_url="http://127.0.0.1:18080/v1/quotes?page_size=$size&cursor=$cursor"
first_page() { wrk_rate "$first_url"; }
deep_page() { wrk_rate "$deep_url"; }
keyword_search() { wrk_rate "http://127.0.0.1:18080/v1/quotes/search?q=courage&page_size=$size"; }
keyword_search_sql() { pgbench_rate "$url" "$(search_sql text courage)" 4 extended; }
author_search() { wrk_rate "http://127.0.0.1:18080/v1/quotes/search?q=twain&type=author&page_size=$size"; }
author_search_sql() { pgbench_rate "$url" "$(search_sql author twain)" 4 extended; }
quote_of_the_day() { wrk_rate "http://127.0.0.1:18080/v1/qotd"; }
c_floor() { wrk_rate "http://127.0.0.1:18081/qotd"; }

read -r deep_rate deep_p99 first_rate first_p99 deep_ratios < <(alternate deep_page first_page)
echo "cursor page vs first page, round by round: $deep_ratios"
# pgbench in its three protocols: simple (its default) and extended parse and plan every statement; prepared plans
# once per connection, as the server does for these pipelined reads.
page_simple=$(pgbench_rate "$url" "$page_sql" 4 simple)
page_extended=$(pgbench_rate "$url" "$page_sql" 4 extended)
page_prepared=$(pgbench_rate "$url" "$page_sql" 4 prepared)
page_total_prepared=$(pgbench_rate "$url" "$page_total_sql" 4 prepared)
deep_prepared=$(pgbench_rate "$url" "$deep_sql" 4 prepared)
# The searches run unnamed (planned for each pattern), as pgbench -M extended does.
read -r keyword_rate keyword_p99 keyword_sql_rate _ keyword_ratios < <(alternate keyword_search keyword_search_sql)
echo "keyword search vs pgbench, round by round: $keyword_ratios"
read -r author_rate author_p99 author_sql_rate _ author_ratios < <(alternate author_search author_search_sql)
echo "author search vs pgbench, round by round: $author_ratios"
read -r qotd_rate qotd_p99 floor_rate _ qotd_ratios < <(alternate quote_of_the_day c_floor)
echo "quote of the day vs C floor, round by round: $qotd_ratios"

printf '\n%-30s %10s %8s   (means of %d rounds)\n' "route" "req/s" "p99 ms" "$ROUNDS"
printf '%-30s %10.0f %8.2f   pgbench %10.0f   %s (the page query alone, -M simple)\n' "first page + total" "$first_rate" "$first_p99" "$page_simple" "$(ratio "$first_rate" "$page_simple")"
printf '%-30s %10s %8s   pgbench %10.0f   %s (the page query alone, -M extended)\n' "" "" "" "$page_extended" "$(ratio "$first_rate" "$page_extended")"
printf '%-30s %10s %8s   pgbench %10.0f   %s (the page query alone, -M prepared)\n' "" "" "" "$page_prepared" "$(ratio "$first_rate" "$page_prepared")"
printf '%-30s %10s %8s   pgbench %10.0f   %s (the page query with its total, -M prepared)\n' "" "" "" "$page_total_prepared" "$(ratio "$first_rate" "$page_total_prepared")"
printf '%-30s %10.0f %8.2f   pgbench %10.0f   %s (-M prepared)\n' "cursor page 5,000 deep" "$deep_rate" "$deep_p99" "$deep_prepared" "$(ratio "$deep_rate" "$deep_prepared")"
printf '%-30s %10.0f %8.2f   pgbench %10.0f   %s (-M extended)\n' "keyword search 'courage'" "$keyword_rate" "$keyword_p99" "$keyword_sql_rate" "$(ratio "$keyword_rate" "$keyword_sql_rate")"
printf '%-30s %10.0f %8.2f   pgbench %10.0f   %s (-M extended)\n' "author search 'twain'" "$author_rate" "$author_p99" "$author_sql_rate" "$(ratio "$author_rate" "$author_sql_rate")"
printf '%-30s %10.0f %8.2f   C floor %10.0f   %s\n' "quote of the day" "$qotd_rate" "$qotd_p99" "$floor_rate" "$(ratio "$qotd_rate" "$floor_rate")"
echo
echo "cursor page 5,000 deep vs first page: $(ratio "$deep_rate" "$first_rate") (pgbench -M prepared, the same two queries: $(ratio "$deep_prepared" "$page_prepared"))"
