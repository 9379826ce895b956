#!/usr/bin/env bash
# The library routes for a large user: 10,000 favorites and 200 collections (with quotes in them).
# Measures GET /v1/favorites/ids and GET /v1/collections with wrk, and shows EXPLAIN ANALYZE of their queries.
# Usage: bench/library.sh   (DURATION=seconds per measurement, default 5)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
trap bench_stop_server EXIT

bench_build
bench_start_server 18080 --rate-limits off
bench_seed
url=$DATABASE_URL_BENCH
token=$(bench_token big@bench.local)
user=$(psql -XAtq "$url" -c "SELECT id FROM users WHERE email = 'big@bench.local'")
psql -XAtq "$url" >/dev/null <<SQL
INSERT INTO user_favorites (user_id, quote_id, created_at)
SELECT '$user', id, now() - row_number() OVER () * interval '1 second' FROM (SELECT id FROM quotes ORDER BY id LIMIT 10000) q
ON CONFLICT DO NOTHING;
INSERT INTO collections (user_id, name) SELECT '$user', 'Collection ' || n FROM generate_series(1, 200) n
WHERE (SELECT count(*) FROM collections WHERE user_id = '$user') = 0;
INSERT INTO collection_quotes (collection_id, quote_id)
SELECT c.id, q.id FROM collections c CROSS JOIN LATERAL (SELECT id FROM quotes ORDER BY md5(c.id::text || id::text) LIMIT 25) q
WHERE c.user_id = '$user' ON CONFLICT DO NOTHING;
ANALYZE;
SQL
echo "favorites: $(psql -XAtq "$url" -c "SELECT count(*) FROM user_favorites WHERE user_id = '$user'"), collections: $(psql -XAtq "$url" -c "SELECT count(*) FROM collections WHERE user_id = '$user'")"

for path in /v1/favorites/ids /v1/collections; do
  wrk -t1 -c8 -d"${DURATION}s" --latency -H "Authorization: Bearer $token" "http://127.0.0.1:18080$path" >"$BENCH_OUT/lib.txt"
  printf '%-22s %8s req/s   p50 %8s   p99 %8s   body %s bytes\n' "$path" "$(awk '/Requests\/sec/ {print $2}' "$BENCH_OUT/lib.txt")" \
    "$(awk '$1 == "50%" {print $2}' "$BENCH_OUT/lib.txt")" "$(awk '$1 == "99%" {print $2}' "$BENCH_OUT/lib.txt")" \
    "$(curl -fs -H "Authorization: Bearer $token" "http://127.0.0.1:18080$path" | wc -c)"
done
echo
psql -XAtq "$url" -c "EXPLAIN ANALYZE SELECT quote_id FROM user_favorites WHERE user_id = '$user' ORDER BY created_at DESC, quote_id DESC" | grep -E "Scan|Execution"
psql -XAtq "$url" -c "EXPLAIN ANALYZE SELECT c.id, c.name, c.created_at, c.updated_at, (SELECT count(*) FROM collection_quotes cq WHERE cq.collection_id = c.id)::int8 AS quote_count FROM collections c WHERE c.user_id = '$user' ORDER BY c.created_at DESC, c.id DESC" | grep -E "Scan|Execution"
