#!/usr/bin/env bash
# Page and write routes of a user's library on two builds side by side (issue 27: each write once, ownership
# declared once): BEFORE and AFTER quote-server binaries, each on its own embedded database, alternated round by
# round. A user with 1,000 favorites and 20 collections of 25 quotes; /v1 and /rest/v1 (user token + anon key).
# Usage: BEFORE=/path/quote-server [AFTER=/path/quote-server] bench/data-paths.sh
# env: DURATION (5) seconds per measurement, ROUNDS (2), CONNECTIONS (8). AFTER defaults to this checkout's release
# build. Everything listens on 127.0.0.1; every run is bounded by its duration.
set -euo pipefail
ROUNDS=${ROUNDS:-2}; CONNECTIONS=${CONNECTIONS:-8}
source "$(dirname "$0")/lib.sh"
BEFORE=${BEFORE:?set BEFORE to the quote-server binary to compare against}
AFTER=${AFTER:-$BENCH_ROOT/.build/release/quote-server}
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done; wait 2>/dev/null || true' EXIT

# start NAME BINARY PORT: a server on its own data directory; sets URL_<NAME> and DB_<NAME>.
start() {
  local name=$1 bin=$2 port=$3 data="$BENCH_OUT/data-paths-$1"
  rm -rf "$data"
  QUOTEVAULT_DATA=$data "$bin" migrate >/dev/null 2>&1
  QUOTEVAULT_DATA=$data PORT=$port "$bin" serve --rate-limits off --supabase-anon-key bench-anon-key \
    2>"$BENCH_OUT/data-paths-$name.log" &
  PIDS+=($!)
  for _ in $(seq 1 150); do curl -fs "http://127.0.0.1:$port/health" >/dev/null 2>&1 && break; sleep 0.2; done
  QUOTEVAULT_DATA=$data "$bin" seed >/dev/null 2>&1 || true
  printf -v "URL_$name" '%s' "http://127.0.0.1:$port"
  printf -v "DB_$name" '%s' "postgresql://quotevault:$(tr -d '\n' <"$data/postgres/embedded.secret")@127.0.0.1:$(cat "$data/postgres/embedded.port")/quotevault"
}

# library NAME: the user, its token and library; sets TOKEN_<NAME>, COLLECTION_<NAME>, QUOTE_<NAME>.
library() {
  local name=$1 url db token user
  url=$(eval echo "\$URL_$name"); db=$(eval echo "\$DB_$name")
  token=$(SERVER_PORT=${url##*:} bench_token big@bench.local)
  user=$(psql -XAtq "$db" -c "SELECT id FROM users WHERE email = 'big@bench.local'")
  psql -XAtq "$db" >/dev/null <<SQL
INSERT INTO user_favorites (user_id, quote_id) SELECT '$user', id FROM (SELECT id FROM quotes ORDER BY id LIMIT 1000) q;
INSERT INTO collections (user_id, name) SELECT '$user', 'Collection ' || n FROM generate_series(1, 20) n;
INSERT INTO collection_quotes (collection_id, quote_id)
SELECT c.id, q.id FROM collections c CROSS JOIN LATERAL (SELECT id FROM quotes ORDER BY md5(c.id::text || id::text) LIMIT 25) q
WHERE c.user_id = '$user';
ANALYZE;
SQL
  printf -v "TOKEN_$name" '%s' "$token"
  printf -v "COLLECTION_$name" '%s' "$(psql -XAtq "$db" -c "SELECT id FROM collections WHERE user_id = '$user' LIMIT 1")"
  printf -v "QUOTE_$name" '%s' "$(psql -XAtq "$db" -c "SELECT id FROM quotes ORDER BY id DESC LIMIT 1")"
}

start before "$BEFORE" 18090
start after "$AFTER" 18091
library before
library after

# measure NAME METHOD PATH [BODY]: one wrk run, "req/s p99"; METHOD PUT|DELETE alternates the two; OPID in BODY
# becomes a fresh operation id.
measure() {
  local name=$1 method=$2 path=$3 body=${4:-}
  local url token
  url=$(eval echo "\$URL_$name"); token=$(eval echo "\$TOKEN_$name")
  cat >"$BENCH_OUT/data-paths.lua" <<LUA
local n = 0
wrk.headers["Authorization"] = "Bearer $token"
wrk.headers["apikey"] = "bench-anon-key"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Prefer"] = "resolution=merge-duplicates"
request = function()
  n = n + 1
  local method = "$method"
  if method == "PUT|DELETE" then method = (n % 2 == 1) and "PUT" or "DELETE" end
  local body = [[$body]]
  body = body:gsub("OPID", function() return string.format("%08x-0000-4000-8000-%012x", math.random(0, 0x7fffffff), n) end)
  return wrk.format(method, "$path", nil, body ~= "" and body or nil)
end
LUA
  wrk_rate "$url$path" -s "$BENCH_OUT/data-paths.lua"
}

# route LABEL METHOD PATH [BODY] (COLLECTION and QUOTE stand for the server's own): measured on both servers,
# alternated, ROUNDS times.
declare -A RESULTS
route() {
  local label=$1 method=$2 path=$3 body=${4:-} name round c q
  for round in $(seq 1 "$ROUNDS"); do
    for name in before after; do
      c=$(eval echo "\$COLLECTION_$name"); q=$(eval echo "\$QUOTE_$name")
      RESULTS["$name,$label"]+=" $(measure "$name" "$method" "$(echo "$path" | sed "s/COLLECTION/$c/; s/QUOTE/$q/")" \
        "$(echo "$body" | sed "s/COLLECTION/$c/g; s/QUOTE/$q/g")")"
    done
  done
}
route "page /v1/favorites" GET '/v1/favorites?page_size=20'
route "page /v1/collections" GET /v1/collections
route "page /rest/v1/collections+count" GET '/rest/v1/collections?select=id,name,collection_quotes(count)&order=created_at.desc'
route "page /rest/v1/collection_quotes" GET '/rest/v1/collection_quotes?select=quote_id,quotes(text)&limit=20'
route "write PUT|DELETE /v1/favorites/{id}" 'PUT|DELETE' /v1/favorites/QUOTE
route "write PATCH /v1/collections/{id}" PATCH /v1/collections/COLLECTION '{"name":"Renamed"}'
route "write PATCH /rest/v1/collections" PATCH '/rest/v1/collections?id=eq.COLLECTION' '{"name":"Renamed"}'
route "write POST /rest/v1/collection_quotes (upsert)" POST /rest/v1/collection_quotes \
  '{"collection_id":"COLLECTION","quote_id":"QUOTE"}'
route "write POST /v1/sync (2 ops)" POST /v1/sync '{"operations":[{"id":"OPID","op":"favorite.add","quote_id":"QUOTE"},
  {"id":"OPID","op":"favorite.remove","quote_id":"QUOTE"}]}'

printf '\n%-48s %-26s %-26s %s\n' "route (req/s p99ms, rounds alternated)" before after "after/before (sum of rounds)"
for key in "${!RESULTS[@]}"; do
  [[ $key == before,* ]] || continue
  label=${key#before,}
  b=${RESULTS[$key]}; a=${RESULTS["after,$label"]}
  bs=$(echo "$b" | awk '{s=0; for (i=1; i<=NF; i+=2) s+=$i; print s}')
  as=$(echo "$a" | awk '{s=0; for (i=1; i<=NF; i+=2) s+=$i; print s}')
  printf '%-48s %-26s %-26s %s\n' "$label" "$b" "$a" "$(ratio "$as" "$bs")"
done | sort

# What row-level security would cost instead (the alternative issue 27 weighs): the same page read and favorite
# write as SQL (one transaction per request), each user's predicate written in the statement (today) against a copy of user_favorites under a
# forced policy with the caller set per transaction (set_config('app.user_id', …, true), as Supabase does).
# pgbench, 4 clients, on the AFTER database; copies only, the app's tables are untouched.
user=$(psql -XAtq "$DB_after" -c "SELECT id FROM users WHERE email = 'big@bench.local'")
psql -XAtq "$DB_after" >/dev/null <<SQL
DROP TABLE IF EXISTS bench_fav_plain, bench_fav_rls;
CREATE TABLE bench_fav_plain (LIKE user_favorites INCLUDING ALL);
CREATE TABLE bench_fav_rls (LIKE user_favorites INCLUDING ALL);
INSERT INTO bench_fav_plain SELECT * FROM user_favorites;
INSERT INTO bench_fav_rls SELECT * FROM user_favorites;
ALTER TABLE bench_fav_rls ENABLE ROW LEVEL SECURITY;
ALTER TABLE bench_fav_rls FORCE ROW LEVEL SECURITY;
CREATE POLICY own ON bench_fav_rls USING (user_id = current_setting('app.user_id', true)::uuid);
ANALYZE bench_fav_plain, bench_fav_rls;
SQL
page_plain=$(pgbench_rate "$DB_after" "SELECT quote_id FROM bench_fav_plain WHERE user_id = '$user' ORDER BY created_at DESC, quote_id DESC LIMIT 20;" 4 prepared)
page_rls=$(pgbench_rate "$DB_after" "BEGIN;
SELECT set_config('app.user_id', '$user', true);
SELECT quote_id FROM bench_fav_rls ORDER BY created_at DESC, quote_id DESC LIMIT 20;
COMMIT;" 4 prepared)
write_plain=$(pgbench_rate "$DB_after" "INSERT INTO bench_fav_plain (user_id, quote_id) VALUES ('$user', '$QUOTE_after') ON CONFLICT DO NOTHING;
DELETE FROM bench_fav_plain WHERE user_id = '$user' AND quote_id = '$QUOTE_after';" 4 prepared)
write_rls=$(pgbench_rate "$DB_after" "BEGIN;
SELECT set_config('app.user_id', '$user', true);
INSERT INTO bench_fav_rls (user_id, quote_id) VALUES ('$user', '$QUOTE_after') ON CONFLICT DO NOTHING;
COMMIT;
BEGIN;
SELECT set_config('app.user_id', '$user', true);
DELETE FROM bench_fav_rls WHERE quote_id = '$QUOTE_after';
COMMIT;" 4 prepared)
psql -XAtq "$DB_after" -c "DROP TABLE bench_fav_plain, bench_fav_rls" >/dev/null
printf '\n%-48s %12s %12s %s\n' "SQL (pgbench tps, 4 clients)" "predicate" "RLS" "RLS/predicate"
printf '%-48s %12s %12s %s\n' "page of 20 favorites" "$page_plain" "$page_rls" "$(ratio "$page_rls" "$page_plain")"
printf '%-48s %12s %12s %s\n' "favorite add + remove" "$write_plain" "$write_rls" "$(ratio "$write_rls" "$write_plain")"
