#!/usr/bin/env bash
# Offline sync costs, on a user with 10,000 favorites and 200 collections of 25 quotes beside a user with 10:
#  1. GET /v1/sync since a token with 1 and with 100 changes after it (must not grow with the library's size),
#  2. a full first sync (pages of 1000), 3. POST /v1/sync with 500 operations (and the same 500 as single
#  requests), 4. what the change history adds to a favorite write: the history's triggers enabled and disabled,
#  alternated in one run (HTTP, one connection; and pgbench on the SQL, 4 clients on 8 users).
# Usage: bench/sync.sh   (DURATION seconds per measurement, default 5; ROUNDS alternations, default 3)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
trap bench_stop_server EXIT
ROUNDS=${ROUNDS:-3}
export BENCH_DATA=${BENCH_DATA:-$BENCH_OUT/sync-data}

bench_build
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
bench_start_server "$port" --rate-limits off
bench_seed
url=$DATABASE_URL_BENCH
base="http://127.0.0.1:$port"
sql() { psql -XAtq "$url" "$@"; }

# The feed's current end for a user: POST /v1/sync with no operations answers it.
position() {
  curl -fs -X POST -H "Authorization: Bearer $1" -H 'Content-Type: application/json' -d '{"operations":[]}' "$base/v1/sync" \
    | python3 -c "import json,sys; print(json.load(sys.stdin)['next'])"
}

# 12,000 synthetic quotes beside the corpus, numbered for the scripts below.
sql >/dev/null <<'SQL'
INSERT INTO quotes (text, author, category)
SELECT 'Sync bench quote number ' || n, 'Bench Author', 'wisdom' FROM generate_series(1, 12000) n ON CONFLICT DO NOTHING;
DROP TABLE IF EXISTS sync_bench_quotes;
CREATE TABLE sync_bench_quotes AS
  SELECT substring(text FROM 25)::int AS n, id FROM quotes WHERE text LIKE 'Sync bench quote number %';
ALTER TABLE sync_bench_quotes ADD PRIMARY KEY (n);
SQL

big=$(bench_token big@sync.bench); small=$(bench_token small@sync.bench)
big_id=$(sql -c "SELECT id FROM users WHERE email = 'big@sync.bench'")
small_id=$(sql -c "SELECT id FROM users WHERE email = 'small@sync.bench'")
sql >/dev/null <<SQL
INSERT INTO user_favorites (user_id, quote_id) SELECT '$big_id', id FROM sync_bench_quotes WHERE n <= 10000 ON CONFLICT DO NOTHING;
INSERT INTO collections (user_id, name) SELECT '$big_id', 'Collection ' || n FROM generate_series(1, 200) n
WHERE (SELECT count(*) FROM collections WHERE user_id = '$big_id') = 0;
INSERT INTO collection_quotes (collection_id, quote_id)
SELECT c.id, q.id FROM collections c CROSS JOIN LATERAL (SELECT id FROM sync_bench_quotes ORDER BY md5(c.id::text || id::text) LIMIT 25) q
WHERE c.user_id = '$big_id' ON CONFLICT DO NOTHING;
INSERT INTO user_favorites (user_id, quote_id) SELECT '$small_id', id FROM sync_bench_quotes WHERE n <= 10 ON CONFLICT DO NOTHING;
ANALYZE;
SQL
echo "big user: $(sql -c "SELECT count(*) FROM user_favorites WHERE user_id = '$big_id'") favorites," \
  "$(sql -c "SELECT count(*) FROM collections WHERE user_id = '$big_id'") collections," \
  "$(sql -c "SELECT count(*) FROM sync_changes WHERE user_id = '$big_id'") changes in its history;" \
  "small user: $(sql -c "SELECT count(*) FROM user_favorites WHERE user_id = '$small_id'") favorites"

# Tokens with exactly 100 and exactly 1 change after them: 99 new favorites, a position, 1 more.
declare -A since
for who in big small; do
  token=${!who}
  since[$who-100]=$(position "$token")
  for n in $(seq 10101 10199); do
    curl -fs -o /dev/null -X PUT -H "Authorization: Bearer $token" "$base/v1/favorites/$(sql -c "SELECT id FROM sync_bench_quotes WHERE n = $n")"
  done
  since[$who-1]=$(position "$token")
  curl -fs -o /dev/null -X PUT -H "Authorization: Bearer $token" "$base/v1/favorites/$(sql -c "SELECT id FROM sync_bench_quotes WHERE n = 10200")"
done

echo
echo "== 1. GET /v1/sync since a token (wrk, 1 thread, 8 connections, ${DURATION}s each, $ROUNDS alternations)"
printf '%-34s %10s %10s %10s %8s\n' "" "req/s" "p50" "p99" "changes"
for round in $(seq 1 "$ROUNDS"); do
  for changes in 1 100; do
    for who in big small; do
      token=${!who}
      path="/v1/sync?since=${since[$who-$changes]}"
      wrk -t1 -c8 -d"${DURATION}s" --latency -H "Authorization: Bearer $token" "$base$path" >"$BENCH_OUT/sync-wrk.txt"
      count=$(curl -fs -H "Authorization: Bearer $token" "$base$path" | python3 -c "import json,sys; print(len(json.load(sys.stdin)['changes']))")
      printf '%-34s %10s %10s %10s %8s\n' "round $round: $changes changed, $who user" \
        "$(awk '/Requests\/sec/ {print $2}' "$BENCH_OUT/sync-wrk.txt")" "$(awk '$1 == "50%" {print $2}' "$BENCH_OUT/sync-wrk.txt")" \
        "$(awk '$1 == "99%" {print $2}' "$BENCH_OUT/sync-wrk.txt")" "$count"
    done
  done
done
echo "the change query's plan for the big user (100 changes):"
seq100=$(sql -c "SELECT last_seq - 100 FROM sync_positions WHERE user_id = '$big_id'")
sql -c "EXPLAIN ANALYZE SELECT * FROM sync_changes WHERE user_id = '$big_id' AND seq > $seq100 ORDER BY seq LIMIT 501" \
  | grep -E "Scan|Execution"

echo
echo "== 2. full first sync"
for who in big small; do printf '%-6s ' "$who:"; python3 "$BENCH_ROOT/bench/sync.py" "$port" "${!who}" full "$ROUNDS"; done

echo
echo "== 3. queued operations (250 favorite.add + 250 favorite.remove), big user"
# shellcheck disable=SC2046
python3 "$BENCH_ROOT/bench/sync.py" "$port" "$big" batch "$ROUNDS" $(sql -c "SELECT id FROM sync_bench_quotes WHERE n BETWEEN 11001 AND 11250")

echo
echo "== 4. a favorite write with and without the change history (triggers disabled), alternated"
writer=$(bench_token writer@sync.bench)
writer_quote=$(sql -c "SELECT id FROM sync_bench_quotes WHERE n = 11500")
cat >"$BENCH_OUT/sync-toggle.lua" <<LUA
local n = 0
request = function()
  n = n + 1
  local method = (n % 2 == 1) and "PUT" or "DELETE"
  return wrk.format(method, "/v1/favorites/$writer_quote", {["Authorization"] = "Bearer $writer"})
end
LUA
for n in 1 2 3 4 5; do bench_token "pg$n@sync.bench" >/dev/null; done
sql >/dev/null <<SQL
DROP TABLE IF EXISTS sync_bench_users;
CREATE TABLE sync_bench_users AS SELECT row_number() OVER (ORDER BY id) AS n, id FROM users WHERE email LIKE '%@sync.bench';
SQL
users=$(sql -c "SELECT count(*) FROM sync_bench_users")
cat >"$BENCH_OUT/sync-favorite.sql" <<SQL
\set u random(1, $users)
\set q random(10201, 10999)
INSERT INTO user_favorites (user_id, quote_id) SELECT u.id, q.id FROM sync_bench_users u, sync_bench_quotes q WHERE u.n = :u AND q.n = :q ON CONFLICT DO NOTHING;
DELETE FROM user_favorites WHERE user_id = (SELECT id FROM sync_bench_users WHERE n = :u) AND quote_id = (SELECT id FROM sync_bench_quotes WHERE n = :q);
SQL
history() {
  local state=$1
  sql -c "ALTER TABLE user_favorites $state TRIGGER sync_favorites" >/dev/null
}
printf '%-30s %14s %14s %14s\n' "" "HTTP req/s" "HTTP p50" "pgbench tps"
declare -a on_http off_http on_pg off_pg
for round in $(seq 1 "$ROUNDS"); do
  for state in ENABLE DISABLE; do
    history "$state"
    wrk -t1 -c1 -d"${DURATION}s" --latency -s "$BENCH_OUT/sync-toggle.lua" "$base" >"$BENCH_OUT/sync-wrk.txt"
    rate=$(awk '/Requests\/sec/ {print $2}' "$BENCH_OUT/sync-wrk.txt")
    tps=$(pgbench -n -M prepared -c 4 -j 1 -T "$DURATION" -f "$BENCH_OUT/sync-favorite.sql" "$url" 2>/dev/null | awk '/^tps/ {print $3; exit}')
    label=$([[ $state == ENABLE ]] && echo "with history" || echo "without history")
    printf '%-30s %14s %14s %14s\n' "round $round: $label" "$rate" "$(awk '$1 == "50%" {print $2}' "$BENCH_OUT/sync-wrk.txt")" "$tps"
    if [[ $state == ENABLE ]]; then on_http+=("$rate"); on_pg+=("$tps"); else off_http+=("$rate"); off_pg+=("$tps"); fi
  done
done
history ENABLE
sum() { printf '%s\n' "$@" | awk '{s += $1} END {print s}'; }
echo "with history / without: HTTP $(ratio "$(sum "${on_http[@]}")" "$(sum "${off_http[@]}")"), SQL (pgbench) $(ratio "$(sum "${on_pg[@]}")" "$(sum "${off_pg[@]}")")"
