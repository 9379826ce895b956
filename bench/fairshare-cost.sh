#!/usr/bin/env bash
# What measuring and sharing database time costs a request: one quote by id (a database read each time) and a page of
# a category, wrk side by side with RATE_LIMITS=on (every job charged to its client, the pools' fair queue and
# half-pool cap; share and budget set out of reach, so that wrk's one address is measured, not throttled) and
# RATE_LIMITS=off (first come, first served), alternating ROUNDS times on one database. Prints requests/s and p99.
# Usage: bench/fairshare-cost.sh   (DURATION=5 seconds a measurement, ROUNDS=3, BENCH_SKIP_BUILD=1 to reuse a build)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
trap 'bench_stop_server' EXIT
ROUNDS=${ROUNDS:-3}
bench_build
port=${BENCH_PORT:-18080}
bench_start_server "$port"
bench_seed
id=$(curl -fs "http://127.0.0.1:$port/v1/quotes?page_size=1" | python3 -c "import json,sys; print(json.load(sys.stdin)['items'][0]['id'])")
bench_stop_server
echo "| round | limits | one quote req/s | p99 ms | category page req/s | p99 ms |"
echo "|---|---|---|---|---|---|"
for round in $(seq 1 "$ROUNDS"); do
  for limits in on off; do
    RATE_LIMITS=$limits DB_CLIENT_SHARE=600000 DB_CLIENT_BUDGET=600000 bench_start_server "$port"
    read -r one one_p99 < <(wrk_rate "http://127.0.0.1:$port/v1/quotes/$id")
    read -r page page_p99 < <(wrk_rate "http://127.0.0.1:$port/v1/quotes?category=love&page_size=20&page=3")
    echo "| $round | $limits | $one | $one_p99 | $page | $page_p99 |"
    bench_stop_server
  done
done
