#!/usr/bin/env bash
# The restore drill at size: 100,000 quotes and 10,000 users with their libraries (20 favorites and 2 collections of
# 10 quotes each). A full backup; more writes up to T; the accident (DELETE FROM user_favorites); restore to T and
# check every favorite written before T is back. Then more writes, the whole data directory deleted, restore
# --latest and every acknowledged write counted. Prints backup and restore times and the repository's size.
# Usage: bench/restore-drill.sh   (BENCH_DRILL_DIR to put the data and the repository elsewhere)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
trap bench_stop_server EXIT

(cd "$BENCH_ROOT" && scripts/install-deps && swift build -c release --product quote-server >/dev/null)
server="$BENCH_ROOT/.build/release/quote-server"
drill=${BENCH_DRILL_DIR:-$BENCH_OUT/drill}
rm -rf "$drill" && mkdir -p "$drill" && chmod 755 "$drill"
export BENCH_DATA="$drill/data" BACKUP_REPO="$drill/backups" BACKUP_SCHEDULE=off LOG_FORMAT=text

seconds() { local start=$1; awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }'; }
count() { psql -XAtq "$DATABASE_URL_BENCH" -c "SELECT count(*) FROM user_favorites"; }

bench_start_server 18090 --rate-limits off
url=$DATABASE_URL_BENCH
started=$(date +%s.%N)
# Collections in statements of 1,000 owners each: the quota trigger takes an advisory lock per owner, held to the
# end of the statement's transaction, and 10,000 at once overflow PostgreSQL's lock table.
collections="CREATE TEMP TABLE numbered_collections (id uuid, n int8);"
for from in $(seq 1 1000 10000); do
  collections+="
INSERT INTO collections (user_id, name) SELECT id, 'Collection ' || k FROM drill_users, generate_series(1, 2) AS k
WHERE n BETWEEN $from AND $((from + 999));"
done
collections+="
INSERT INTO numbered_collections SELECT id, row_number() OVER (ORDER BY user_id, name) FROM collections;"
for from in $(seq 1 2000 20000); do
  collections+="
INSERT INTO collection_quotes (collection_id, quote_id) SELECT c.id, q.id FROM numbered_collections c
JOIN numbered q ON q.n BETWEEN c.n * 3 AND c.n * 3 + 9 WHERE c.n BETWEEN $from AND $((from + 1999));"
done
psql -XAtq -v ON_ERROR_STOP=1 "$url" >/dev/null <<SQL
INSERT INTO quotes (text, author, category, created_at)
SELECT 'Drill quote ' || n || ': ' || md5(n::text), 'Author ' || (n % 5000),
       (ARRAY['motivation', 'love', 'success', 'wisdom', 'humor'])[1 + n % 5], now() - n * interval '1 second'
FROM generate_series(1, 100000) AS n;
INSERT INTO users (email, password_hash)
SELECT 'drill' || n || '@bench.local', '\$scrypt\$ln=4,r=1,p=1\$c2FsdA\$aGFzaA' FROM generate_series(1, 10000) AS n;
INSERT INTO profiles (id) SELECT id FROM users WHERE email LIKE 'drill%@bench.local';
CREATE TEMP TABLE numbered AS SELECT id, row_number() OVER (ORDER BY id) AS n FROM quotes;
CREATE TEMP TABLE drill_users AS SELECT id, row_number() OVER (ORDER BY id) AS n FROM users WHERE email LIKE 'drill%';
INSERT INTO user_favorites (user_id, quote_id)
SELECT u.id, q.id FROM drill_users u JOIN numbered q ON q.n BETWEEN u.n * 7 AND u.n * 7 + 19;
$collections
ANALYZE;
SQL
echo "loaded in $(seconds "$started") s: $(psql -XAtq "$url" -c "SELECT (SELECT count(*) FROM quotes) || ' quotes, ' || (SELECT count(*) FROM users) || ' users, ' || (SELECT count(*) FROM user_favorites) || ' favorites, ' || (SELECT count(*) FROM collection_quotes) || ' collected quotes'")"
echo "database: $(psql -XAtq "$url" -c "SELECT pg_size_pretty(pg_database_size('quotevault'))")"

started=$(date +%s.%N)
"$server" backup --type full | tail -1
echo "full backup: $(seconds "$started") s; repository $(du -sh "$BACKUP_REPO" | cut -f1)"

# More writes, acknowledged (psql returns after the commit), then T, then the accident.
psql -XAtq "$url" -c "INSERT INTO user_favorites (user_id, quote_id) SELECT u.id, q.id FROM (SELECT id, row_number() OVER (ORDER BY id) AS n FROM users WHERE email LIKE 'drill%') u JOIN (SELECT id, row_number() OVER (ORDER BY id) AS n FROM quotes) q ON q.n = 90000 + u.n" >/dev/null
started=$(date +%s.%N)
"$server" backup --type incr | tail -1
echo "incremental backup: $(seconds "$started") s"
before_t=$(count)
sleep 1
t=$(psql -XAtq "$url" -c "SELECT to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')")
sleep 1
psql -XAtq "$url" -c "DELETE FROM user_favorites" >/dev/null
echo "favorites before T ($t): $before_t; after the accident: $(count)"
bench_stop_server
"$server" backups | tail -4

started=$(date +%s.%N)
"$server" restore --to "$t" | tail -1
restore_t=$(seconds "$started")
bench_start_server 18090 --rate-limits off
echo "restore to T: $restore_t s, to serving again: $(seconds "$started") s; favorites: $(count) (expected $before_t)"
[[ $(count) == "$before_t" ]] || { echo "FAILED: favorites differ from before T" >&2; exit 1; }

# More acknowledged writes on the restored database; then the disk is lost.
psql -XAtq "$DATABASE_URL_BENCH" -c "INSERT INTO user_favorites (user_id, quote_id) SELECT u.id, q.id FROM (SELECT id, row_number() OVER (ORDER BY id) AS n FROM users WHERE email LIKE 'drill%') u JOIN (SELECT id, row_number() OVER (ORDER BY id) AS n FROM quotes) q ON q.n = 95000 + u.n" >/dev/null
acknowledged=$(count)
bench_stop_server
rm -rf "$BENCH_DATA"
started=$(date +%s.%N)
"$server" restore --latest | tail -1
restore_latest=$(seconds "$started")
bench_start_server 18090 --rate-limits off
echo "restore --latest after losing the data directory: $restore_latest s, to serving again: $(seconds "$started") s; favorites: $(count) (acknowledged $acknowledged)"
[[ $(count) == "$acknowledged" ]] || { echo "FAILED: acknowledged writes missing" >&2; exit 1; }
echo "repository: $(du -sh "$BACKUP_REPO" | cut -f1) ($(du -sh "$BACKUP_REPO/archive" | cut -f1) of WAL)"
echo "drill passed"
