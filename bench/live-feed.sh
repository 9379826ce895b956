#!/usr/bin/env bash
# Live changes (GET /v1/sync/events): RSS per idle stream with STREAMS streams (default 1,000) from ADDRESSES
# loopback addresses (default 10) over USERS users (default 100), then the delay from a committed favorite write to
# its `changed` event, p50 and p99 over WRITES writes (default 300). See bench/live-feed.py.
# Usage: bench/live-feed.sh
set -euo pipefail
source "$(dirname "$0")/lib.sh"
trap bench_stop_server EXIT
export BENCH_DATA=${BENCH_DATA:-$BENCH_OUT/live-data}
USERS=${USERS:-100}
export STREAMS=${STREAMS:-1000} ADDRESSES=${ADDRESSES:-10} WRITES=${WRITES:-300}

(cd "$BENCH_ROOT" && swift build -c release --product quote-server >/dev/null)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
# Limits wide enough for the run: streams per user and per address, connections per address.
export LIVE_STREAMS_PER_USER=$(( (STREAMS + USERS - 1) / USERS )) LIVE_STREAMS_PER_ADDRESS=$STREAMS
export HTTP_CONNECTIONS_PER_ADDRESS=$(( STREAMS / ADDRESSES + 16 ))
bench_start_server "$port" --rate-limits off
quote=$(psql -XAtq "$DATABASE_URL_BENCH" -c "
  INSERT INTO quotes (text, author, category) VALUES ('Live feed bench quote', 'Bench Author', 'wisdom')
  ON CONFLICT DO NOTHING;
  SELECT id FROM quotes WHERE text = 'Live feed bench quote'")
# An earlier run's favorites would make its first PUTs change nothing (and send no event).
psql -XAtq "$DATABASE_URL_BENCH" -c "DELETE FROM user_favorites WHERE quote_id = '$quote'" >/dev/null
tokens="$BENCH_OUT/live-tokens.txt"
: >"$tokens"
for index in $(seq 1 "$USERS"); do bench_token "live$index@bench.local" >>"$tokens"; done
python3 "$BENCH_ROOT/bench/live-feed.py" "$port" "$SERVER_PID" "$tokens" "$quote"
