#!/usr/bin/env bash
# The foundation benchmark: /health beside the C libmicrohttpd floor answering the same bytes, and a one-row
# query route (GET /v1/quotes/{id}) beside pgbench running the same SQL, all in one run.
# Usage: bench/foundation.sh   (DURATION=seconds per measurement, default 5)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
trap bench_stop_server EXIT

bench_build
bench_start_server 18080
bench_seed

body='{"status":"ok"}'
"$BENCH_OUT/http-floor" 18081 2 "$body" &
floor_pid=$!
sleep 0.5

# Alternate the two servers twice so that a noisy neighbour hurts both alike.
read -r floor1 floor_p99 < <(wrk_rate "http://127.0.0.1:18081/health")
read -r health1 health_p99 < <(wrk_rate "http://127.0.0.1:18080/health")
read -r floor2 _ < <(wrk_rate "http://127.0.0.1:18081/health")
read -r health2 _ < <(wrk_rate "http://127.0.0.1:18080/health")
kill "$floor_pid"
floor=$(awk -v a="$floor1" -v b="$floor2" 'BEGIN {print (a+b)/2}')
health=$(awk -v a="$health1" -v b="$health2" 'BEGIN {print (a+b)/2}')

url=$DATABASE_URL_BENCH
id=$(psql -XAtq "$url" -c "SELECT id FROM quotes ORDER BY created_at DESC, id DESC LIMIT 1")
sql="SELECT id, text, author, category, created_at FROM quotes WHERE id = '$id';"
read -r route route_p99 < <(wrk_rate "http://127.0.0.1:18080/v1/quotes/$id")
pg_prepared=$(pgbench_rate "$url" "$sql" 4 prepared)
pg_extended=$(pgbench_rate "$url" "$sql" 4 extended)
pg_simple=$(pgbench_rate "$url" "$sql" 4 simple)

printf '\n%-36s %12s %10s\n' "measurement" "requests/s" "p99 ms"
printf '%-36s %12.0f %10s\n' "C libmicrohttpd floor /health" "$floor" "$floor_p99"
printf '%-36s %12.0f %10s   %s of floor\n' "quote-server /health" "$health" "$health_p99" "$(ratio "$health" "$floor")"
# pgbench in its three protocols, from its default (simple: parse and plan every statement, as extended does) to
# prepared (plan once per connection, as the server now does for this pipelined read).
printf '%-36s %12.0f %10s\n' "pgbench -M simple: one-row SELECT" "$pg_simple" "-"
printf '%-36s %12.0f %10s\n' "pgbench -M extended: one-row SELECT" "$pg_extended" "-"
printf '%-36s %12.0f %10s\n' "pgbench -M prepared: one-row SELECT" "$pg_prepared" "-"
printf '%-36s %12.0f %10s   %s of simple, %s of extended, %s of prepared\n' "quote-server GET /v1/quotes/{id}" \
  "$route" "$route_p99" "$(ratio "$route" "$pg_simple")" "$(ratio "$route" "$pg_extended")" "$(ratio "$route" "$pg_prepared")"
