#!/usr/bin/env bash
# Password hashing must not starve the API: quote reads alone, then the same reads while 32 clients log in
# without pause (real scrypt parameters), in one run. Reports the reads' p50/p99 both ways and the logins'
# rate and statuses. The server runs twice: hashing threads at normal priority (HASHING_NICENESS=0, as before
# issue 16) and at the default niceness 10, side by side.
# Usage: bench/login-burst.sh   (DURATION=seconds per measurement, default 5; NICENESS="0 10" to choose)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
trap bench_stop_server EXIT

bench_build

cat >"$BENCH_OUT/login.lua" <<'LUA'
wrk.method = "POST"
wrk.body = '{"email":"burst@bench.local","password":"correct horse battery"}'
wrk.headers["Content-Type"] = "application/json"
statuses = {}
response = function(status, headers, body) statuses[status] = (statuses[status] or 0) + 1 end
LUA

reads() { wrk -t1 -c8 -d"${DURATION}s" --latency "http://127.0.0.1:18080/v1/quotes?page_size=10" >"$BENCH_OUT/$1.txt"; }
percentile() { awk -v p="$2" '$1 == p {print $2}' "$BENCH_OUT/$1.txt"; }

printf '\n%-10s %-28s %10s %10s %10s %14s\n' "niceness" "quote reads" "req/s" "p50" "p99" "logins/s"
for nice in ${NICENESS:-0 10}; do
  export HASHING_NICENESS=$nice
  bench_start_server 18080 --rate-limits off
  bench_seed
  bench_token burst@bench.local >/dev/null
  reads "alone-$nice"
  wrk -t1 -c32 --timeout 10s -d"$((DURATION + 2))s" -s "$BENCH_OUT/login.lua" http://127.0.0.1:18080/v1/auth/login >"$BENCH_OUT/logins-$nice.txt" &
  login_pid=$!
  sleep 1
  reads "burst-$nice"
  wait "$login_pid"
  bench_stop_server
  printf '%-10s %-28s %10s %10s %10s\n' "$nice" "alone" "$(awk '/Requests\/sec/ {print $2}' "$BENCH_OUT/alone-$nice.txt")" \
    "$(percentile "alone-$nice" 50%)" "$(percentile "alone-$nice" 99%)"
  printf '%-10s %-28s %10s %10s %10s %14s\n' "$nice" "during 32-client login burst" "$(awk '/Requests\/sec/ {print $2}' "$BENCH_OUT/burst-$nice.txt")" \
    "$(percentile "burst-$nice" 50%)" "$(percentile "burst-$nice" 99%)" "$(awk '/Requests\/sec/ {print $2}' "$BENCH_OUT/logins-$nice.txt")"
  grep -E 'Non-2xx|Socket errors' "$BENCH_OUT/logins-$nice.txt" || true
done
