#!/usr/bin/env bash
# jemalloc (which quote-server links) against glibc's malloc, on the same build and the same database, with no
# WebSockets (realtime.sh measures them beside 10,000): a copy of the release binary without libjemalloc in its
# DT_NEEDED (patchelf) serves beside the real one; wrk alternates between the two ROUNDS times on each route.
# Prints each round and the median of the rounds' ratios (jemalloc / glibc), of req/s and of server CPU per request.
# Usage: bench/allocator.sh   (BENCH_SKIP_BUILD=1 reuses the release build; ROUNDS, DURATION, CONNECTIONS)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
GLIBC_PID=""
trap 'bench_stop_server; [[ -n "$GLIBC_PID" ]] && kill "$GLIBC_PID" 2>/dev/null; true' EXIT
ROUNDS=${ROUNDS:-5}
ROUTES=(/health "/v1/quotes?page=1" "/v1/quotes/search?q=courage")

bench_build
glibc_binary="$BENCH_OUT/quote-server-glibc"
cp "$BENCH_ROOT/.build/release/quote-server" "$glibc_binary"
patchelf --remove-needed libjemalloc.so.2 "$glibc_binary"
if ldd "$glibc_binary" | grep -q jemalloc; then
  echo "the copy still loads jemalloc" >&2
  exit 1
fi

bench_start_server 18421 --rate-limits off
bench_seed
jemalloc_port=18421 glibc_port=18422
DATABASE_URL=$DATABASE_URL_BENCH JWT_SECRET=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n') \
  PORT=$glibc_port "$glibc_binary" serve --rate-limits off 2>"$BENCH_OUT/server-glibc.log" &
GLIBC_PID=$!
for _ in $(seq 1 100); do
  curl -fs "http://127.0.0.1:$glibc_port/health" >/dev/null 2>&1 && break
  sleep 0.2
done
echo "cores: $(nproc), load: $(cut -d' ' -f1-3 /proc/loadavg), quotes: $(psql -XAtq "$DATABASE_URL_BENCH" -c 'SELECT count(*) FROM quotes')"

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
# One wrk run on PORT's ROUTE; prints "requests/s microseconds-of-server-CPU-per-request".
measure() {
  local pid=$1 port=$2 route=$3 before after rate requests
  before=$(cpu_ticks "$pid")
  rate=$(wrk_rate "http://127.0.0.1:$port$route" | cut -d' ' -f1)
  after=$(cpu_ticks "$pid")
  requests=$(grep -o '[0-9]* requests in' "$BENCH_OUT/wrk.txt" | cut -d' ' -f1)
  echo "$rate $(awk -v t=$((after - before)) -v n="$requests" -v hz="$(getconf CLK_TCK)" 'BEGIN {printf "%.1f", t / hz * 1e6 / n}')"
}

declare -A rate_ratios cpu_ratios
for round in $(seq 1 "$ROUNDS"); do
  for route in "${ROUTES[@]}"; do
    read -r glibc_rate glibc_cpu < <(measure "$GLIBC_PID" "$glibc_port" "$route")
    read -r jemalloc_rate jemalloc_cpu < <(measure "$SERVER_PID" "$jemalloc_port" "$route")
    echo "round $round $route: jemalloc $jemalloc_rate req/s $jemalloc_cpu us/request; glibc $glibc_rate req/s $glibc_cpu us/request; load $(cut -d' ' -f1 /proc/loadavg)"
    rate_ratios[$route]+="$(awk -v a="$jemalloc_rate" -v b="$glibc_rate" 'BEGIN {print a / b}') "
    cpu_ratios[$route]+="$(awk -v a="$jemalloc_cpu" -v b="$glibc_cpu" 'BEGIN {print a / b}') "
  done
done

median() { tr ' ' '\n' | grep . | sort -g | awk '{v[NR] = $1} END {printf "%.0f", 100 * (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2)}'; }
echo "summary (jemalloc / glibc, median of $ROUNDS rounds):"
for route in "${ROUTES[@]}"; do
  echo "  $route: requests/s $(median <<<"${rate_ratios[$route]}") %, server CPU per request $(median <<<"${cpu_ratios[$route]}") %"
done
