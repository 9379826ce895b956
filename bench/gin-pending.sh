#!/usr/bin/env bash
# Issue 31: what the pending lists of GIN indexes cost searches, and what keeping them short costs writes. On a
# database of quotes (a copy: it is written to): the searches of bench/search-latency.sh with every pending list
# flushed; then `quote-server import --defer-indexes never FILE` into the non-empty table (timed; every row goes
# through the indexes, as an import into a table in use does) and the searches again; then INSERTS quotes one
# statement each, as the console adds one (latency per insert: average, median, 99th percentile, max), and the
# searches again. After each step, the pending pages of each GIN index searches read (pgstattuple). Autovacuum is
# turned off on the copy's quotes, vocabulary and authors, so the lists are emptied only by the writes themselves:
# at 1,000,000 quotes autoanalyze (which empties them too) comes after 100,000 changed quotes.
# usage: bench/gin-pending.sh DATABASE_URL QUOTE_SERVER FILE   env: DUR (3), INSERTS (3000), TERMS, MIGRATIONS_DIR
set -euo pipefail
URL=$1; SERVER=$2; FILE=$3; INSERTS=${INSERTS:-3000}
PGBENCH=${PGBENCH:-/usr/lib/postgresql/15/bin/pgbench}
export TERMS=${TERMS:-"keyword:love,keyword:torquarin,keyword:ephemeral fjord,keyword:xylophone,\
author:ada lovelace,author:nobody"}
export DATABASE_URL=$URL JWT_SECRET=${JWT_SECRET:-$(openssl rand -hex 32)}
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
sql() { psql -X -q -At -v ON_ERROR_STOP=1 "$URL" -c "$1"; }
# the GIN indexes searches read: those of quotes, of the vocabulary (every keyword search probes it) and of authors
gin="FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am a ON a.oid = c.relam
     WHERE i.indrelid IN ('quotes'::regclass, 'quote_vocabulary'::regclass, to_regclass('quote_authors'))
       AND a.amname = 'gin'"
pending() {
  echo "pending pages ($1): $(sql "SELECT sum(p) || ' = ' || string_agg(n || ' ' || p, ', ' ORDER BY n) FROM (
    SELECT regexp_replace(c.relname, '^quotes?_', '') AS n, (pgstatginindex(c.oid)).pending_pages AS p $gin) s")"
}
searches() { echo "== searches, $1"; "$here/search-latency.sh" "$URL"; }

sql "SET client_min_messages = warning; CREATE EXTENSION IF NOT EXISTS pgstattuple"
for table in quotes quote_vocabulary quote_authors; do
  sql "ALTER TABLE IF EXISTS $table SET (autovacuum_enabled = off)"
done
echo "quotes: $(sql "SELECT count(*) FROM quotes"); GIN options: $(sql "SELECT coalesce(string_agg(DISTINCT
  array_to_string(c.reloptions, ' '), '; '), 'defaults') $gin")"
sql "SELECT sum(gin_clean_pending_list(c.oid)) $gin" >/dev/null
pending "flushed"
searches "pending lists flushed"

start=$(date +%s.%N)
"$SERVER" import --defer-indexes never "$FILE" >"$dir/import.log" 2>&1 || { cat "$dir/import.log"; exit 1; }
echo "import of $FILE: $(echo "$(date +%s.%N) - $start" | bc) s wall; $(grep -a 'quotes imported' "$dir/import.log")"
pending "after the import"
searches "after the import"

sql "CREATE TABLE gin_bench_source AS SELECT row_number() OVER () AS n, text, author, category FROM quotes;
     ALTER TABLE gin_bench_source ADD PRIMARY KEY (n)"
rows=$(sql "SELECT count(*) FROM gin_bench_source")
cat >"$dir/insert.sql" <<EOF
\\set n random(1, $rows)
\\set r random(1, 1000000000)
INSERT INTO quotes (text, author, category)
SELECT s.text || ' ' || :r, s.author, s.category FROM gin_bench_source s WHERE s.n = :n;
EOF
(cd "$dir" && $PGBENCH -n -M prepared -c1 -t"$INSERTS" -l --log-prefix=ins -f insert.sql "$URL" >/dev/null)
cat "$dir"/ins.* | awk '{print $3}' | sort -n | awk -v n="$INSERTS" \
  '{v[NR]=$1; s+=$1} END {printf "%d single inserts: average %.2f ms, median %.2f, p99 %.2f, max %.1f\n",
    NR, s/NR/1000, v[int(NR*0.5)]/1000, v[int(NR*0.99)]/1000, v[NR]/1000}'
pending "after the single inserts"
searches "after the single inserts"
sql "DROP TABLE gin_bench_source"
echo "autovacuum/autoanalyze runs on quotes: $(sql "SELECT autovacuum_count || '/' || autoanalyze_count
  FROM pg_stat_user_tables WHERE relid = 'quotes'::regclass")"
