# Shared helpers for the benchmarks: build, start a server on an embedded database, run wrk and pgbench,
# and print figures. Everything listens on 127.0.0.1 only; every run is bounded by its duration.

BENCH_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BENCH_OUT="$BENCH_ROOT/bench/out"
DURATION=${DURATION:-5}
CONNECTIONS=${CONNECTIONS:-32}
mkdir -p "$BENCH_OUT"

# Builds the release server (BENCH_SKIP_BUILD=1: use the one already built) and the C floor.
bench_build() {
  "$BENCH_ROOT/scripts/install-deps" --bench
  [[ -n "${BENCH_SKIP_BUILD:-}" ]] || (cd "$BENCH_ROOT" && swift build -c release --product quote-server >/dev/null)
  gcc -O2 -o "$BENCH_OUT/http-floor" "$BENCH_ROOT/bench/http-floor.c" -lmicrohttpd
}

# Starts quote-server on an embedded database under bench/out (BENCH_DATA to use another directory);
# sets SERVER_PID, SERVER_PORT, DATABASE_URL_BENCH.
bench_start_server() {
  local port=$1; shift
  export QUOTEVAULT_DATA="${BENCH_DATA:-$BENCH_OUT/data}"
  "$BENCH_ROOT/.build/release/quote-server" migrate >/dev/null 2>&1
  PORT=$port "$BENCH_ROOT/.build/release/quote-server" serve "$@" 2>"$BENCH_OUT/server.log" &
  SERVER_PID=$!
  SERVER_PORT=$port
  for _ in $(seq 1 100); do
    curl -fs "http://127.0.0.1:$port/health" >/dev/null 2>&1 && break
    sleep 0.2
  done
  # The embedded cluster wants its generated password (kept with its data, mode 0600).
  DATABASE_URL_BENCH="postgresql://quotevault:$(tr -d '\n' <"$QUOTEVAULT_DATA/postgres/embedded.secret")@127.0.0.1:$(cat "$QUOTEVAULT_DATA/postgres/embedded.port")/quotevault"
}

# Loads the real quote corpus into the benchmark database (already loaded: nothing to do).
bench_seed() { "$BENCH_ROOT/.build/release/quote-server" seed >/dev/null 2>&1 || true; }

# Prints an access token for EMAIL from the server started last (port 18080 by default): signs up, or logs in when
# the account exists.
bench_token() {
  local body="{\"email\":\"$1\",\"password\":\"correct horse battery\"}" route
  for route in signup login; do
    curl -fs -X POST -H 'Content-Type: application/json' -d "$body" "http://127.0.0.1:${SERVER_PORT:-18080}/v1/auth/$route" \
      | python3 -c "import json,sys; print(json.load(sys.stdin)['access_token'])" 2>/dev/null && return 0
  done
  return 1
}

# Grows the benchmark database to 100,000+ distinct quotes by numbering copies of the real ones (same words, same
# search load); prints the count.
bench_grow_quotes() {
  local url=$DATABASE_URL_BENCH count
  count=$(psql -XAtq "$url" -c "SELECT count(*) FROM quotes")
  if (( count < 100000 )); then
    psql -XAtq "$url" -c "
      INSERT INTO quotes (text, author, category, created_at)
      SELECT left(q.text, 290) || ' #' || n, q.author, q.category, q.created_at - n * interval '1 second'
      FROM quotes q, generate_series(1, 13) AS n
      ON CONFLICT DO NOTHING;
      ANALYZE quotes;" >/dev/null
  fi
  psql -XAtq "$url" -c "SELECT count(*) FROM quotes"
}

bench_stop_server() {
  [[ -n "${SERVER_PID:-}" ]] && kill -TERM "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null || true
  SERVER_PID=""
}

# wrk against URL (more wrk arguments after it, e.g. -s script.lua); prints "requests/s p99_ms".
wrk_rate() {
  local url=$1; shift
  wrk -t1 -c"$CONNECTIONS" -d"${DURATION}s" --latency "$@" "$url" >"$BENCH_OUT/wrk.txt" 2>&1
  local rate p99
  rate=$(awk '/Requests\/sec/ {print $2}' "$BENCH_OUT/wrk.txt")
  p99=$(awk '$1 == "99%" {v=$2; if (v ~ /us$/) {sub(/us/,"",v); v=v/1000} else if (v ~ /ms$/) {sub(/ms/,"",v)} else if (v ~ /s$/) {sub(/s/,"",v); v=v*1000}; print v}' "$BENCH_OUT/wrk.txt")
  echo "$rate ${p99:-?}"
}

# pgbench running one SQL statement; prints transactions/s. MODE is pgbench's -M: `prepared` is the server's
# protocol for the statements PGPool.read/query pipeline (named prepared statements, planned once per connection),
# `extended` its protocol for statements run inside withConnection, such as the searches (parsed and planned every
# time).
pgbench_rate() {
  local url=$1 sql=$2 clients=${3:-4} mode=${4:-extended}
  printf '%s\n' "$sql" >"$BENCH_OUT/pgbench.sql"
  pgbench -n -M "$mode" -c "$clients" -j 1 -T "$DURATION" -f "$BENCH_OUT/pgbench.sql" "$url" 2>/dev/null \
    | awk '/^tps/ {print $3; exit}'
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.0f%%", 100 * a / b; else print "n/a" }'; }
