#!/usr/bin/env bash
# What the per-request session check costs: an authenticated route that is one query after the check
# (GET /v1/favorites/ids of a user with no favorites) beside a public route that is one query
# (GET /v1/quotes/{id}), and pgbench running the session lookup itself, in one run.
# Usage: bench/session-check.sh   (DURATION=seconds per measurement, default 5)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
trap bench_stop_server EXIT

bench_build
bench_start_server 18080 --rate-limits off
bench_seed
url=$DATABASE_URL_BENCH
email="session-$(date +%s)@bench.local"
token=$(bench_token "$email")
id=$(psql -XAtq "$url" -c "SELECT id FROM quotes LIMIT 1")
session=$(psql -XAtq "$url" -c "SELECT s.id || ' ' || s.user_id FROM sessions s JOIN users u ON u.id = s.user_id WHERE u.email = '$email'")
read -r session_id user_id <<<"$session"

cat >"$BENCH_OUT/auth.lua" <<LUA
wrk.headers["Authorization"] = "Bearer $token"
LUA
read -r public public_p99 < <(wrk_rate "http://127.0.0.1:18080/v1/quotes/$id")
read -r authed authed_p99 < <(wrk_rate http://127.0.0.1:18080/v1/favorites/ids -s "$BENCH_OUT/auth.lua")
lookup=$(pgbench_rate "$url" "SELECT 1 AS live FROM sessions WHERE id = '$session_id' AND user_id = '$user_id' AND revoked_at IS NULL;")
printf '\n%-52s %10s %10s\n' "measurement" "req/s" "p99"
printf '%-52s %10s %10s\n' "GET /v1/quotes/{id} (one query)" "$public" "$public_p99 ms"
printf '%-52s %10s %10s   %s\n' "GET /v1/favorites/ids, empty (session check + one query)" "$authed" "$authed_p99 ms" "$(ratio "$authed" "$public")"
printf '%-52s %10s\n' "pgbench: the session lookup alone (4 clients)" "$lookup"
psql -XAtq "$url" -c "EXPLAIN ANALYZE SELECT 1 AS live FROM sessions WHERE id = '$session_id' AND user_id = '$user_id' AND revoked_at IS NULL" | head -3
