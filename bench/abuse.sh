#!/usr/bin/env bash
# Hostile traffic beside legitimate traffic (issue 16). For each attack, from 127.0.0.2: legitimate traffic from
# 127.0.0.1 alone, then the same traffic during the attack, then again right after it stopped (recovery). The
# legitimate traffic is two wrk runs side by side: quote pages and favorite writes (16 connections) and logins of
# ten users in turn (2 connections, real scrypt cost). Reports per attack: each one's rate and p99 against the
# same traffic alone, the legitimate requests that failed (non-2xx or socket errors), the server's peak RSS.
# Usage: bench/abuse.sh   (DURATION=seconds of legitimate traffic per measurement, default 5; ATTACKS="slowloris ...")
# Everything is on loopback; every attack is bounded by time and by a fixed number of sockets or workers.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
trap 'bench_stop_server; [[ -n "${sampler:-}" ]] && kill "$sampler" 2>/dev/null || true' EXIT

bench_build
bench_start_server 18080
bench_seed
token=$(bench_token legit@bench.local)
for index in $(seq 0 9); do bench_token "legit$index@bench.local" >/dev/null; done
attacker_token=$(bench_token attacker@bench.local)
export ANON_KEY=$("$BENCH_ROOT/.build/release/quote-server" anon-key)
ids=$(curl -fs "http://127.0.0.1:18080/v1/quotes?page_size=20" | python3 -c "import json,sys; print(' '.join(q['id'] for q in json.load(sys.stdin)['items']))")

# The end of a wrk script: counts answers by status in every thread; prints the failed ones (those matching the Lua
# condition $1) and any 5xx.
status_report() {
  cat <<LUA
local threads = {}
setup = function(thread) table.insert(threads, thread) end
init = function() statuses = {} end
response = function(status) statuses[status] = (statuses[status] or 0) + 1 end
done = function()
  local failed = 0
  for _, thread in ipairs(threads) do
    for status, count in pairs(thread:get("statuses")) do
      if $1 then failed = failed + count end
      if status >= 500 then io.write("5xx ", status, " ", count, "\\n") end
    end
  end
  io.write("FAILED ", failed, "\\n")
end
LUA
}

# Legitimate reads and writes: 90% quote pages, 10% favorite writes (add/remove in turn).
cat >"$BENCH_OUT/legit.lua" <<LUA
local ids = {}
for id in string.gmatch("$ids", "%S+") do ids[#ids + 1] = id end
local n = 0
request = function()
  n = n + 1
  if n % 10 == 0 then
    local id = ids[(n / 10) % #ids + 1]
    local method = ((n / 10) % 2 == 0) and "PUT" or "DELETE"
    return wrk.format(method, "/v1/favorites/" .. id, {["Authorization"] = "Bearer $token"})
  end
  return wrk.format("GET", "/v1/quotes?page_size=10&page=" .. (n % 50 + 1))
end
LUA
status_report "status >= 300 and status ~= 404" >>"$BENCH_OUT/legit.lua"

cat >"$BENCH_OUT/logins.lua" <<'LUA'
local n = 0
request = function()
  n = n + 1
  local body = '{"email":"legit' .. (n % 10) .. '@bench.local","password":"correct horse battery"}'
  return wrk.format("POST", "/v1/auth/login", {["Content-Type"] = "application/json"}, body)
end
LUA
status_report "status >= 300" >>"$BENCH_OUT/logins.lua"

legit() {  # name: runs the legitimate reads/writes and logins side by side for DURATION seconds
  wrk -t1 -c2 --timeout 5s -d"${DURATION}s" --latency -s "$BENCH_OUT/logins.lua" http://127.0.0.1:18080 >"$BENCH_OUT/logins-$1.txt" 2>&1 &
  local logins=$!
  wrk -t1 -c16 --timeout 5s -d"${DURATION}s" --latency -s "$BENCH_OUT/legit.lua" http://127.0.0.1:18080 >"$BENCH_OUT/legit-$1.txt" 2>&1 || true
  wait "$logins" || true
}
rate() { awk '/Requests\/sec/ {print $2}' "$BENCH_OUT/${2:-legit}-$1.txt"; }
p99() { awk '$1 == "99%" {print $2}' "$BENCH_OUT/${2:-legit}-$1.txt"; }
failures() {
  local failed=0 sockets=0 fivexx=0 file
  for file in "$BENCH_OUT/legit-$1.txt" "$BENCH_OUT/logins-$1.txt"; do
    failed=$(( failed + $(awk '/^FAILED/ {print $2}' "$file" || echo 0) ))
    sockets=$(( sockets + $(awk '/Socket errors/ {gsub(",", ""); print $4 + $6 + $8 + $10}' "$file" | head -1 | grep . || echo 0) ))
    fivexx=$(( fivexx + $(awk '/^5xx/ {s += $3} END {print s + 0}' "$file") ))
  done
  echo "$failed (5xx $fivexx, sockets $sockets)"
}
cpu_seconds() { awk '{printf "%.1f", ($14 + $15) / 100}' "/proc/$SERVER_PID/stat"; }  # utime + stime, clock ticks of 1/100 s
rss_sampler() {  # writes the server's largest RSS seen (KiB) to the file, every 0.2 s, until killed
  local peak=0 now
  while true; do
    now=$(awk '/VmRSS/ {print $2}' "/proc/$SERVER_PID/status" 2>/dev/null || echo 0)
    (( now > peak )) && peak=$now && echo "$peak" >"$1"
    sleep 0.2
  done
}

legit alone
printf '\n%-18s %10s %9s %6s %9s %9s %6s %24s %9s %7s\n' "attack (127.0.0.2)" "reads/s" "p99" "vs" "logins/s" "p99" "vs" \
  "legit failures" "peak RSS" "after"
printf '%-18s %10s %9s %6s %9s %9s %6s %24s %9s %7s\n' "none" "$(rate alone)" "$(p99 alone)" "100%" "$(rate alone logins)" \
  "$(p99 alone logins)" "100%" "$(failures alone)" "$(( $(awk '/VmRSS/ {print $2}' "/proc/$SERVER_PID/status") / 1024 )) MiB" ""
for attack in ${ATTACKS:-slowloris stalled-uploads reset-flood signup-flood search-patterns rest-ilike amplification}; do
  echo 0 >"$BENCH_OUT/rss-$attack"
  rss_sampler "$BENCH_OUT/rss-$attack" &
  sampler=$!
  python3 "$BENCH_ROOT/bench/abuse.py" "$attack" 18080 "$((DURATION + 4))" "$attacker_token" >"$BENCH_OUT/attack-$attack.txt" 2>&1 &
  attacker=$!
  cpu_before=$(cpu_seconds)
  sleep 3
  legit "$attack"
  wait "$attacker" || true
  cpu_during=$(awk -v a="$cpu_before" -v b="$(cpu_seconds)" 'BEGIN {printf "%.1f", b - a}')
  legit "after-$attack"
  kill "$sampler" 2>/dev/null || true
  wait "$sampler" 2>/dev/null || true
  sampler=""
  printf '%-18s %10s %9s %6s %9s %9s %6s %24s %9s %7s\n' "$attack" "$(rate "$attack")" "$(p99 "$attack")" \
    "$(ratio "$(rate "$attack")" "$(rate alone)")" "$(rate "$attack" logins)" "$(p99 "$attack" logins)" \
    "$(ratio "$(rate "$attack" logins)" "$(rate alone logins)")" "$(failures "$attack")" \
    "$(( $(cat "$BENCH_OUT/rss-$attack") / 1024 )) MiB" "$(ratio "$(rate "after-$attack")" "$(rate alone)")"
  echo "    attack: $(cat "$BENCH_OUT/attack-$attack.txt" | tr '\n' ' ')"
  echo "    server CPU during the attack and the legitimate traffic: ${cpu_during} s in $((DURATION + 4)) s"
done
echo
echo "warnings logged by the server: $(grep -c '"level":"warning"\|WARNING\| warning ' "$BENCH_OUT/server.log" || true); errors: $(grep -c '"level":"error"\| ERROR \| error ' "$BENCH_OUT/server.log" || true)"
