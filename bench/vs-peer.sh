#!/usr/bin/env bash
# quote-server beside a typical Swift server (bench-peer: Hummingbird 2 + PostgresNIO answering the same /v1 quote
# routes the plain way) on one database of 100,000 synthetic quotes, then what its summary cannot show:
#   1. BENCH_PEER_DIR/vs-peer.sh on this checkout, left running (KEEP=1): every quote route alternated with the
#      peer, /health beside the libmicrohttpd C floor, RSS; its table is printed as it is;
#   2. search measured without the answer caches (which hold a repeated search's answer): a second product
#      instance on the same database with ANSWER_CACHE_BYTES=0, the kit's search lists against the peer; then each
#      search term alone (the peer's lists: very common to absent), product, uncached product and peer alternated,
#      req/s and p50 side by side, with the product's total and total_is_exact;
#   3. bytes on the wire for a page of 20 and a search page, without and with gzip, and what gzip costs in rate
#      (identity and the app's Accept-Encoding alternated on the same server).
# usage: BENCH_PEER_DIR=/path/to/bench-peer bench/vs-peer.sh   (the peer kit is not part of this repository and
#        lives wherever it was checked out; CI does not run this)
# env:   as BENCH_PEER_DIR/vs-peer.sh (ROUNDS, DUR, CONNS, WORK: a new temporary directory unless set, PRODUCT_BIN);
#        TERM_DUR (3) seconds per term and side.
# Everything listens on 127.0.0.1 and every load is bounded by its duration. Needs root, as the peer script does.
set -euo pipefail
if [ -z "${BENCH_PEER_DIR:-}" ]; then
  echo "bench/vs-peer.sh: set BENCH_PEER_DIR to the bench-peer kit's directory (Hummingbird 2 + PostgresNIO; not part" >&2
  echo "of this repository), e.g. BENCH_PEER_DIR=/path/to/bench-peer bench/vs-peer.sh" >&2
  exit 2
fi
PEER=$(cd "$BENCH_PEER_DIR" && pwd)
CHECKOUT=$(cd "$(dirname "$0")/.." && pwd)
if [ -z "${WORK:-}" ]; then
  WORK=$(mktemp -d -t qvpeer.XXXXXX)
  chmod 755 "$WORK"  # the peer script runs PostgreSQL as the postgres user under it
fi
export WORK
TERM_DUR=${TERM_DUR:-3}; CONNS=${CONNS:-32}; ROUNDS=${ROUNDS:-3}
PRODUCT=http://127.0.0.1:18301; PEER_URL=http://127.0.0.1:18302
APP_ENCODINGS='Accept-Encoding: deflate, gzip, br, zstd'

# Stops what the peer script left running (KEEP=1): the three servers it started, found by their ports, and its
# PostgreSQL cluster.
cleanup() {
  for port in 18301 18302 18303; do
    pid=$(ss -ltnpH "sport = :$port" 2>/dev/null | sed -n 's/.*pid=\([0-9]*\).*/\1/p' | head -1)
    [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
  done
  if [ -f "$WORK/pgdata/postmaster.pid" ]; then
    if [ "$(id -u)" = 0 ]; then runuser -u postgres -- /usr/lib/postgresql/15/bin/pg_ctl -D "$WORK/pgdata" -m fast -w stop >/dev/null 2>&1 || true
    else /usr/lib/postgresql/15/bin/pg_ctl -D "$WORK/pgdata" -m fast -w stop >/dev/null 2>&1 || true; fi
  fi
}
trap cleanup EXIT

echo "== bench-peer/vs-peer.sh (ROUNDS=$ROUNDS, DUR=${DUR:-5}s, c$CONNS)"
KEEP=1 ROUNDS=$ROUNDS CONNS=$CONNS "$PEER/vs-peer.sh" "$CHECKOUT"

# wrk on one URL: "req/s p50" (p50 in ms); extra arguments go to wrk (a header).
measure() {
  local url=$1; shift
  wrk -t2 -c"$CONNS" -d"${TERM_DUR}s" --latency "$@" "$url" 2>&1 | awk '
    /^Requests\/sec/ {rps = $2}
    /^ +50%/ {v = $2; if (v ~ /us$/) {sub(/us/, "", v); v /= 1000} else if (v ~ /ms$/) {sub(/ms/, "", v)} else if (v ~ /s$/) {sub(/s/, "", v); v *= 1000}; p50 = v}
    /Non-2xx/ {bad = 1}
    END {if (bad) print "0 0"; else printf "%d %.2f\n", rps, p50}'
}

# A second product instance on the same database without answer caches (ANSWER_CACHE_BYTES=0): every search
# is made afresh, so the search itself is measured, not the cache. Started as the kit started the first one.
product_pid=$(ss -ltnpH "sport = :18301" | sed -n 's/.*pid=\([0-9]*\).*/\1/p' | head -1)
env_of_product() { tr '\0' '\n' <"/proc/$product_pid/environ" | sed -n "s/^$1=//p"; }
UNCACHED=http://127.0.0.1:18304
DATABASE_URL=$(env_of_product DATABASE_URL) JWT_SECRET=$(env_of_product JWT_SECRET) PORT=18304 RATE_LIMITS=off \
  ANSWER_CACHE_BYTES=0 "$(readlink "/proc/$product_pid/exe")" serve >/dev/null 2>"$WORK/uncached.err" &
uncached_pid=$!
trap 'kill $uncached_pid 2>/dev/null || true; cleanup' EXIT
for _ in $(seq 1 100); do curl -fs "$UNCACHED/health" >/dev/null && break; sleep 0.1; done

echo
echo "== search without answer caches (a second product instance, ANSWER_CACHE_BYTES=0), the kit's term lists, alternated with the peer $ROUNDS times"
export WRK_LUA_DIR=$PEER/wrk
for script in search_keyword search_author; do
  for round in $(seq 1 "$ROUNDS"); do
    a=$(wrk -t2 -c"$CONNS" -d"${TERM_DUR}s" -s "$PEER/wrk/$script.lua" "$UNCACHED" | awk '/^Requests\/sec/ {printf "%d", $2}')
    b=$(wrk -t2 -c"$CONNS" -d"${TERM_DUR}s" -s "$PEER/wrk/$script.lua" "$PEER_URL" | awk '/^Requests\/sec/ {printf "%d", $2}')
    printf '%-16s round %d: uncached product %8s  peer %8s  (%.2f)\n' "$script" "$round" "$a" "$b" "$(awk -v a="$a" -v b="$b" 'BEGIN {print a / b}')"
  done
done

echo
echo "== search, one term at a time (wrk -t2 -c$CONNS ${TERM_DUR}s per side: product, product without caches, peer, alternated)"
printf '%-8s %-10s %-16s %10s %7s %10s %7s %10s %7s %7s %7s\n' type term "total (exact)" product p50ms uncached p50ms peer p50ms ratio "uncached ratio"
for spec in keyword:love keyword:river keyword:zenith keyword:velmir keyword:torquarin keyword:xylophone \
            author:smith author:lee author:curie author:ada author:tzu author:nobody; do
  type=${spec%%:*}; term=${spec#*:}
  path="/v1/quotes/search?type=$type&page_size=20&q=$term"
  total=$(curl -fs "$PRODUCT$path" | python3 -c 'import json,sys; d=json.load(sys.stdin); print("%s (%s)" % (d["total"], str(d["total_is_exact"]).lower()))')
  read -r a ap < <(measure "$PRODUCT$path")
  read -r u up < <(measure "$UNCACHED$path")
  read -r b bp < <(measure "$PEER_URL$path")
  printf '%-8s %-10s %-16s %10s %7s %10s %7s %10s %7s %7.2f %7.2f\n' "$type" "$term" "$total" "$a" "$ap" "$u" "$up" "$b" "$bp" \
    "$(awk -v a="$a" -v b="$b" 'BEGIN {print (b > 0) ? a / b : 0}')" "$(awk -v a="$u" -v b="$b" 'BEGIN {print (b > 0) ? a / b : 0}')"
done

echo
echo "== bytes on the wire (body; headers in parentheses)"
for path in "/v1/quotes?page=1&page_size=20" "/v1/quotes?page=50&page_size=20" "/v1/quotes/search?q=love&page_size=20"; do
  plain=$(curl -fs -o /dev/null -w '%{size_download} (%{size_header})' "$PRODUCT$path")
  gzip=$(curl -fs -o /dev/null -w '%{size_download} (%{size_header})' -H "$APP_ENCODINGS" "$PRODUCT$path")
  peer=$(curl -fs -o /dev/null -w '%{size_download} (%{size_header})' -H "$APP_ENCODINGS" "$PEER_URL$path")
  printf '%-42s identity %-14s gzip %-14s peer %s\n' "$path" "$plain" "$gzip" "$peer"
done

echo
echo "== what gzip costs in rate (same server, identity and the app's Accept-Encoding alternated $ROUNDS times)"
for script in quotes search_keyword; do
  for round in $(seq 1 "$ROUNDS"); do
    plain=$(wrk -t2 -c"$CONNS" -d"${TERM_DUR}s" -s "$PEER/wrk/$script.lua" "$PRODUCT" | awk '/^Requests\/sec/ {printf "%d", $2}')
    gzip=$(wrk -t2 -c"$CONNS" -d"${TERM_DUR}s" -s "$PEER/wrk/$script.lua" -H "$APP_ENCODINGS" "$PRODUCT" | awk '/^Requests\/sec/ {printf "%d", $2}')
    printf '%-16s round %d: identity %8s  gzip %8s  (%.2f)\n' "$script" "$round" "$plain" "$gzip" "$(awk -v a="$gzip" -v b="$plain" 'BEGIN {print a / b}')"
  done
done
echo "RSS MiB after everything: product $(awk '/VmRSS/ {printf "%d", $2 / 1024}' "/proc/$product_pid/status"), without caches $(awk '/VmRSS/ {printf "%d", $2 / 1024}' "/proc/$uncached_pid/status")"
