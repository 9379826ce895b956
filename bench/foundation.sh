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
pg=$(pgbench_rate "$url" "$sql" 4)
pg_prepared=$(pgbench_rate "$url" "$sql" 4 prepared)

printf '\n%-34s %12s %10s\n' "measurement" "requests/s" "p99 ms"
printf '%-34s %12.0f %10s\n' "C libmicrohttpd floor /health" "$floor" "$floor_p99"
printf '%-34s %12.0f %10s   %s of floor\n' "quote-server /health" "$health" "$health_p99" "$(ratio "$health" "$floor")"
printf '%-34s %12.0f %10s\n' "pgbench: one-row SELECT (4 clients)" "$pg" "-"
printf '%-34s %12.0f %10s   %s of pgbench\n' "quote-server GET /v1/quotes/{id}" "$route" "$route_p99" "$(ratio "$route" "$pg")"
# For reference: pgbench with server-side prepared statements (no parse or plan per statement), which the
# server does not use; the route is compared with the protocol it does use.
printf '%-34s %12.0f %10s   route at %s of it\n' "pgbench -M prepared (reference)" "$pg_prepared" "-" "$(ratio "$route" "$pg_prepared")"
