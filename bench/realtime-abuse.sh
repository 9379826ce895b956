#!/usr/bin/env bash
# Attacks on the Realtime door beside legitimate traffic (issue 46): USERS legitimate subscribers (own-change delay)
# and a paced GET /v1/quotes?page=1 client (p50/p99), first alone, then beside each attack family (socket floods
# from many addresses, join floods, message floods, oversized frames, slow readers, half-open upgrades), PHASE
# seconds each. See bench/realtime-abuse.py. Loopback only, every loop bounded; run by hand, not in CI.
# HTTP_MAX_CONNECTIONS is 1024 (the socket flood goes past it: 20 addresses x 80), rate limits are off for the
# sign-ups, SCRYPT_LN=10 makes them quick.
# Usage: bench/realtime-abuse.sh [phase ...]   (BENCH_SKIP_BUILD=1 reuses the release build)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
trap bench_stop_server EXIT
export BENCH_DATA=${BENCH_DATA:-$BENCH_OUT/realtime-abuse-data}
USERS=${USERS:-20}

ulimit -n "$(ulimit -Hn)"
bench_build
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
export HTTP_MAX_CONNECTIONS=${HTTP_MAX_CONNECTIONS:-1024} SCRYPT_LN=10
bench_start_server "$port" --rate-limits off
bench_seed
anon=$("$BENCH_ROOT/.build/release/quote-server" anon-key)
quote=$(psql -XAtq "$DATABASE_URL_BENCH" -c "SELECT id FROM quotes ORDER BY id LIMIT 1")
psql -XAtq "$DATABASE_URL_BENCH" -c "DELETE FROM user_favorites WHERE quote_id = '$quote'" >/dev/null
tokens="$BENCH_OUT/realtime-abuse-tokens.txt"
for index in $(seq 1 "$USERS"); do bench_token "realtime-abuse$index@bench.local"; done >"$tokens"
timeout 900 python3 "$BENCH_ROOT/bench/realtime-abuse.py" "$port" "$anon" "$tokens" "$quote" "$@"
