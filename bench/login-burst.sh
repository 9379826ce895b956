#!/usr/bin/env bash
# Password hashing must not starve the API: quote reads alone, then the same reads while 32 clients log in
# without pause (real scrypt parameters), in one run. Reports the reads' p50/p99 both ways and the logins'
# rate and statuses.
# Usage: bench/login-burst.sh   (DURATION=seconds per measurement, default 5)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
trap bench_stop_server EXIT

bench_build
bench_start_server 18080 --rate-limits off
bench_seed
bench_token burst@bench.local >/dev/null

cat >"$BENCH_OUT/login.lua" <<'LUA'
wrk.method = "POST"
wrk.body = '{"email":"burst@bench.local","password":"correct horse battery"}'
wrk.headers["Content-Type"] = "application/json"
statuses = {}
response = function(status, headers, body) statuses[status] = (statuses[status] or 0) + 1 end
LUA

reads() { wrk -t1 -c8 -d"${DURATION}s" --latency "http://127.0.0.1:18080/v1/quotes?page_size=10" >"$BENCH_OUT/$1.txt"; }
percentile() { awk -v p="$2" '$1 == p {print $2}' "$BENCH_OUT/$1.txt"; }

reads alone
wrk -t1 -c32 --timeout 10s -d"$((DURATION + 2))s" -s "$BENCH_OUT/login.lua" http://127.0.0.1:18080/v1/auth/login >"$BENCH_OUT/logins.txt" &
login_pid=$!
sleep 1
reads burst
wait "$login_pid"

printf '\n%-28s %10s %10s %10s\n' "quote reads" "req/s" "p50" "p99"
printf '%-28s %10s %10s %10s\n' "alone" "$(awk '/Requests\/sec/ {print $2}' "$BENCH_OUT/alone.txt")" "$(percentile alone 50%)" "$(percentile alone 99%)"
printf '%-28s %10s %10s %10s\n' "during 32-client login burst" "$(awk '/Requests\/sec/ {print $2}' "$BENCH_OUT/burst.txt")" "$(percentile burst 50%)" "$(percentile burst 99%)"
echo
echo "logins: $(awk '/Requests\/sec/ {print $2}' "$BENCH_OUT/logins.txt") req/s; $(grep -E 'Non-2xx|Socket errors' "$BENCH_OUT/logins.txt" || echo 'all 2xx')"
