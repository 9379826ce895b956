#!/usr/bin/env bash
# The cluster of scripts/cluster (three PostgreSQL nodes under Patroni over etcd, three instances, HAProxy; all on
# 127.0.0.1), measured and put through its faults. Bounded: about ten minutes with DURATION=5.
#  1. Throughput through HAProxy with 3 instances and with 1 (the others in maintenance), alternated ROUNDS times:
#     requests/s and CPU per request (every process of the cluster: instances, HAProxy, both PostgreSQL servers).
#     Then 256 connections to one instance, and 64 that close after each request: none may fail (HAProxy's
#     maxconn queues what the instance's per-address connection limit would refuse).
#  2. DB_PREPARED_STATEMENTS=off beside on: two extra instances on the primary, alternated.
#  3. The proofs of bench/cluster.py: same answers, sessions and throttles, password reset, rolling restart, SIGKILL of
#     an instance; then under one load two failovers in a row (each old primary rejoining on its own), the
#     synchronous standby stopped, a lagging replica, switchover, rolling restart (503s, 500s and time to recover
#     per phase; acknowledged writes lost); then strict mode with both standbys stopped.
# PROOFS_ONLY=1 skips 1 and 2, THROUGHPUT_ONLY=1 skips 3, HA_ONLY=1 runs only the Patroni proofs (ha, strict).
# Ports: see scripts/cluster (CLUSTER_PG_PORT 25432-25441, CLUSTER_HTTP_PORT 25480-25486, ...).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
ROUNDS=${ROUNDS:-3}
cluster="$BENCH_ROOT/scripts/cluster"
extra_pids=()
cleanup() {
  for pid in "${extra_pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  "$cluster" down
}
trap cleanup EXIT

bench_build
"$cluster" down
QUOTE_SERVER="$BENCH_ROOT/.build/release/quote-server" CLUSTER_LOG_LEVEL=warning "$cluster" up
eval "$("$cluster" env)"
instances="$((HTTP_PORT + 1)),$((HTTP_PORT + 2)),$((HTTP_PORT + 3))"

# CPU ticks (1/100 s) used so far by the cluster's processes: "instances+haproxy postgres".
cluster_ticks() {
  local app=() db=() pid
  for file in "$DIR"/instance-*.pid "$DIR/haproxy.pid"; do app+=("$(cat "$file")"); done
  for node in pg1 pg2 pg3; do
    pid=$(head -1 "$DIR/pg/$node/postmaster.pid" 2>/dev/null) || continue
    db+=("$pid" $(ps -o pid= --ppid "$pid"))
  done
  ticks() { for pid in "$@"; do awk '{print $14 + $15}' "/proc/$pid/stat" 2>/dev/null || true; done | awk '{s += $1} END {print s + 0}'; }
  echo "$(ticks "${app[@]}") $(ticks "${db[@]}")"
}

# wrk through URL; prints "requests/s total=appN+dbN" (CPU ms per request: instances and HAProxy, PostgreSQL).
measured_rate() {
  local before after result requests
  before=$(cluster_ticks)
  result=$(wrk_rate "$1")
  after=$(cluster_ticks)
  requests=$(awk '/requests in/ {print $1}' "$BENCH_OUT/wrk.txt")
  awk -v r="${result% *}" -v n="$requests" -v a=$((${after% *} - ${before% *})) -v d=$((${after#* } - ${before#* })) \
    'BEGIN { if (n == 0) n = 1; printf "%.0f %.3f=app%.3f+db%.3f\n", r, (a + d) * 10 / n, a * 10 / n, d * 10 / n }'
}

if [[ -z ${PROOFS_ONLY:-}${HA_ONLY:-} ]]; then
echo "== 1. one instance and three behind HAProxy (GET /v1/quotes?limit=20, $CONNECTIONS connections, ${DURATION}s, $ROUNDS rounds)"
page="http://127.0.0.1:$HTTP_PORT/v1/quotes?limit=20"
for round in $(seq 1 "$ROUNDS"); do
  "$cluster" haproxy "set server quote_servers/s2 state maint" >/dev/null
  "$cluster" haproxy "set server quote_servers/s3 state maint" >/dev/null
  one=$(measured_rate "$page")
  "$cluster" haproxy "set server quote_servers/s2 state ready" >/dev/null
  "$cluster" haproxy "set server quote_servers/s3 state ready" >/dev/null
  sleep 1
  three=$(measured_rate "$page")
  echo "  round $round: 1 instance ${one% *} req/s (${one#* } ms CPU/request), 3 instances ${three% *} req/s (${three#* } ms CPU/request), ratio $(ratio "${three% *}" "${one% *}")"
done

# Every connection to an instance comes from HAProxy's one address: more client connections than the instance's
# HTTP_CONNECTIONS_PER_ADDRESS (128) must wait in HAProxy's queue (maxconn 100 per server), not fail.
echo "== 1b. 256 connections to one instance through HAProxy (${DURATION}s), then 64 connections closed after each request"
"$cluster" haproxy "set server quote_servers/s2 state maint" >/dev/null
"$cluster" haproxy "set server quote_servers/s3 state maint" >/dev/null
for headers in "" "Connection: close"; do
  wrk -t2 -c$([[ -z $headers ]] && echo 256 || echo 64) -d"${DURATION}s" ${headers:+-H "$headers"} "$page" >"$BENCH_OUT/wrk.txt" 2>&1
  echo "  ${headers:-keep-alive}: $(awk '/requests in/ {print $1}' "$BENCH_OUT/wrk.txt") requests," \
    "non-2xx $(awk '/Non-2xx/ {print $NF}' "$BENCH_OUT/wrk.txt" | grep . || echo 0)," \
    "socket errors: $(awk -F'errors: ' '/Socket errors/ {print $2}' "$BENCH_OUT/wrk.txt" | grep . || echo none)"
done
"$cluster" haproxy "set server quote_servers/s2 state ready" >/dev/null
"$cluster" haproxy "set server quote_servers/s3 state ready" >/dev/null

echo "== 2. DB_PREPARED_STATEMENTS=off beside on (one extra instance each, on the primary, ${DURATION}s, $ROUNDS rounds)"
for setting in on off; do
  port=$((HTTP_PORT + $([[ $setting == on ]] && echo 5 || echo 6)))
  DATABASE_URL="$WRITE_URL" JWT_SECRET=$(cat "$DIR/jwt-secret") PORT=$port DB_PREPARED_STATEMENTS=$setting LOG_LEVEL=warning \
    "$BENCH_ROOT/.build/release/quote-server" serve >"$BENCH_OUT/cluster-prepared-$setting.log" 2>&1 &
  extra_pids+=($!)
  for _ in $(seq 1 100); do curl -fs -o /dev/null "http://127.0.0.1:$port/ready" && break; sleep 0.1; done
done
quote=$(psql -XAtq "$WRITE_URL" -c "SELECT id FROM quotes ORDER BY id LIMIT 1")
for route in "/v1/quotes?limit=20" "/v1/quotes/$quote"; do
  for round in $(seq 1 "$ROUNDS"); do
    on=$(wrk_rate "http://127.0.0.1:$((HTTP_PORT + 5))$route")
    off=$(wrk_rate "http://127.0.0.1:$((HTTP_PORT + 6))$route")
    echo "  $route round $round: named ${on% *} req/s, unnamed ${off% *} req/s, unnamed/named $(ratio "${off% *}" "${on% *}")"
  done
done
for pid in "${extra_pids[@]}"; do kill -TERM "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true; done
extra_pids=()
fi

[[ -n ${THROUGHPUT_ONLY:-} ]] && exit 0
echo "== 3. proofs"
psql -XAtq "$WRITE_URL" -c "SELECT id FROM quotes ORDER BY random()" >"$BENCH_OUT/cluster-quote-ids.txt"
scenarios=(same-answers sessions reset rolling kill ha strict)
[[ -n ${HA_ONLY:-} ]] && scenarios=(ha strict)
python3 "$BENCH_ROOT/bench/cluster.py" "${scenarios[@]}" \
  --port "$HTTP_PORT" --instances "$instances" --write-url "$WRITE_URL" --quote-ids "$BENCH_OUT/cluster-quote-ids.txt"
