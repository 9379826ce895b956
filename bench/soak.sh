#!/usr/bin/env bash
# Soak: mixed traffic (pages, searches, favorites, quote of the day, logins) at a fixed rate well below
# saturation for SOAK_SECONDS (default 300). Reports the error rate (must be 0), the server's resident memory
# over time, and the database connections left open at the end (at most the two pools' sizes: nothing leaked).
# Usage: bench/soak.sh   (SOAK_SECONDS, SOAK_RATE requests/s, default 200)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
trap bench_stop_server EXIT

bench_build
# Two pools: writes and a user's own reads, and public reads apart (DB_PUBLIC_POOL_SIZE).
bench_start_server 18080 --rate-limits off --db-pool-size 4 --db-public-pool-size 4
url=$DATABASE_URL_BENCH
bench_seed

email="soak@bench.local"
password="correct horse battery"
token=$(bench_token "$email")
psql -XAtq "$url" -c "SELECT id FROM quotes ORDER BY random() LIMIT 2000" >"$BENCH_OUT/soak-quote-ids.txt"

status=0
python3 "$BENCH_ROOT/bench/soak.py" --port 18080 --pid "$SERVER_PID" --token "$token" --email "$email" \
  --password "$password" --quote-ids "$BENCH_OUT/soak-quote-ids.txt" \
  --rate "${SOAK_RATE:-200}" --seconds "${SOAK_SECONDS:-300}" || status=$?

connections=$(psql -XAtq "$url" -c "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()")
echo "database connections open at the end: $connections (pools of 4 + 4)"
(( connections <= 8 )) || { echo "more connections than the pools hold: leaked"; status=1; }
exit "$status"
