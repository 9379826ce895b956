#!/usr/bin/env bash
# The embedded lost-disk drill, soon after a start: a server started once (its first backup), stopped, started
# again; writes WRITE_AFTER s (10) after that start; the machine lost CRASH_AFTER s (60) after the writes (the server
# and its PostgreSQL SIGKILLed, no clean stop); the data directory deleted; `backups` and `restore --latest` as the
# README orders them; started again, the writes counted. Prints when the writes reached the archive.
# Usage: bench/lost-disk-drill.sh   (QUOTE_SERVER: the binary, default the release build; BENCH_DRILL_DIR)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
server=${QUOTE_SERVER:-$ROOT/.build/release/quote-server}
[[ -n ${QUOTE_SERVER:-} ]] || (cd "$ROOT" && swift build -c release --product quote-server >/dev/null)
drill=${BENCH_DRILL_DIR:-$ROOT/bench/out/lost-disk}
rm -rf "$drill" && mkdir -p "$drill" && chmod 755 "$drill"
export QUOTEVAULT_DATA="$drill/data" BACKUP_REPO="$drill/backups" LOG_FORMAT=text PORT=${PORT:-18093}
pid=""
trap '[[ -n $pid ]] && kill -TERM "$pid" 2>/dev/null; wait' EXIT
serve() {
  "$server" serve >>"$drill/server.log" 2>&1 &
  pid=$!
  for _ in $(seq 1 300); do curl -fs "http://127.0.0.1:$PORT/ready" >/dev/null 2>&1 && return 0; sleep 0.2; done
  echo "the server did not become ready; see $drill/server.log" >&2
  return 1
}
url() {
  echo "postgresql://quotevault:$(tr -d '\n' <"$QUOTEVAULT_DATA/postgres/embedded.secret")@127.0.0.1:$(cat "$QUOTEVAULT_DATA/postgres/embedded.port")/quotevault"
}
sql() { psql -XAtq "$(url)" -c "$1"; }

serve
for _ in $(seq 1 600); do
  curl -fs "http://127.0.0.1:$PORT/metrics" | grep -q '^backup_last_success_timestamp_seconds' && break
  sleep 0.5
done
kill -TERM "$pid" && wait "$pid" || true
BACKUP_SCHEDULE=off serve
started=$(date +%s)
sleep "${WRITE_AFTER:-10}"
sql "INSERT INTO quotes (text, author, category) SELECT 'Lost disk ' || n, 'Lost disk drill', 'wisdom'
     FROM generate_series(1, 100) AS n" >/dev/null
written=$(date +%s)
segment=$(sql "SELECT pg_walfile_name(pg_current_wal_lsn())")
archived_after=""
for _ in $(seq 1 "$((${CRASH_AFTER:-60} * 2))"); do
  if [[ -z $archived_after && $(sql "SELECT coalesce(last_archived_wal, '') >= '$segment' FROM pg_stat_archiver") == t ]]; then
    archived_after=$(($(date +%s) - written))
  fi
  sleep 0.5
done
echo "100 quotes written $((written - started)) s after the start; their WAL segment archived after ${archived_after:-more than ${CRASH_AFTER:-60}} s"
postmaster=$(head -1 "$QUOTEVAULT_DATA/postgres/postmaster.pid")
kill -KILL "$pid" "$postmaster"
wait "$pid" 2>/dev/null || true
pid=""
sleep 1
echo "crashed $(($(date +%s) - written)) s after the writes; the data directory deleted"
rm -rf "$QUOTEVAULT_DATA"
"$server" backups 2>&1 | tail -1
begun=$(date +%s.%N)
"$server" restore --latest 2>&1 | tail -1
echo "restore --latest: $(awk -v s="$begun" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }') s"
serve
present=$(sql "SELECT count(*) FROM quotes WHERE author = 'Lost disk drill'")
echo "present after the restore: $present of 100"
[[ $present == 100 ]] || { echo "FAILED: acknowledged writes lost" >&2; exit 1; }
echo "lost-disk drill passed"
