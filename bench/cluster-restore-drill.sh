#!/usr/bin/env bash
# The restore drill on the Patroni cluster of scripts/cluster, every node archiving to one pgBackRest repository:
# a full backup (taken from a standby); more writes up to T; the accident (DELETE FROM user_favorites); a new
# cluster bootstrapped from the repository to T, checked; more writes; a new cluster bootstrapped with everything
# archived (`restore latest`), every acknowledged write counted. Prints the backup and bootstrap times.
# Usage: bench/cluster-restore-drill.sh   (scripts/cluster's CLUSTER_* settings apply; USERS, default 1000)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cluster="$ROOT/scripts/cluster"
users=${USERS:-1000}
write_url=$("$cluster" env | sed -n 's/^WRITE_URL=\([^ ]*\).*/\1/p')
cluster_dir=$("$cluster" env | sed -n 's/^DIR=//p')
repo=${CLUSTER_BACKUP_REPO:-$cluster_dir-backups}

seconds() { awk -v s="$1" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }'; }
sql() { psql -XAtq "$write_url" -c "$1"; }
count() { sql "SELECT count(*) FROM user_favorites"; }
favorite_more() {  # one more favorite per drill user, at quote offset $1
  sql "INSERT INTO user_favorites (user_id, quote_id) SELECT u.id, q.id
       FROM (SELECT id, row_number() OVER (ORDER BY id) AS n FROM users WHERE email LIKE 'drill%') u
       JOIN (SELECT id, row_number() OVER (ORDER BY id) AS n FROM quotes) q ON q.n = $1 + u.n % 5000 ON CONFLICT DO NOTHING" >/dev/null
}

"$cluster" down
rm -rf "$repo"
"$cluster" up >/dev/null
sql "INSERT INTO quotes (text, author, category) SELECT 'Cluster drill quote ' || n || ' ' || md5(n::text), 'Drill',
     'wisdom' FROM generate_series(1, 20000) AS n ON CONFLICT DO NOTHING" >/dev/null
sql "INSERT INTO users (email, password_hash) SELECT 'drill' || n || '@bench.local', '\$scrypt\$ln=4,r=1,p=1\$c2FsdA\$aGFzaA'
     FROM generate_series(1, $users) AS n" >/dev/null
for offset in $(seq 0 1000 19000); do favorite_more "$offset"; done
echo "loaded: $(sql "SELECT count(*) FROM quotes") quotes, $users drill users, $(count) favorites"

started=$(date +%s.%N)
"$cluster" backup full | grep -E "full backup|backup set size"
echo "full backup from a standby: $(seconds "$started") s"
favorite_more 5500
before_t=$(count)
sleep 1
t=$(sql "SELECT to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US') || '+00'")
sleep 1
sql "DELETE FROM user_favorites" >/dev/null
echo "favorites before T ($t): $before_t; after the accident: $(count)"

started=$(date +%s.%N)
"$cluster" restore "$t" >/dev/null
echo "new cluster bootstrapped from the repository to T, serving: $(seconds "$started") s; favorites: $(count) (expected $before_t)"
[[ $(count) == "$before_t" ]] || { echo "FAILED: favorites differ from before T" >&2; exit 1; }

favorite_more 6500
acknowledged=$(count)
started=$(date +%s.%N)
"$cluster" restore latest >/dev/null
echo "new cluster bootstrapped with everything archived, serving: $(seconds "$started") s; favorites: $(count) (acknowledged $acknowledged)"
[[ $(count) == "$acknowledged" ]] || { echo "FAILED: acknowledged writes missing" >&2; exit 1; }
"$cluster" patronictl list
echo "repository: $(du -sh "$repo" | cut -f1)"
echo "cluster drill passed"
