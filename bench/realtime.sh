#!/usr/bin/env bash
# Realtime (/realtime/v1/websocket, issue 46): SUBSCRIBERS idle WebSocket subscribers (default 10,000) from ADDRESSES
# loopback addresses (default 200: 127.0.0.2, ...; 50 sockets each, under the 64 an address may hold) on one
# instance, RSS added per subscriber; wrk on GET /v1/quotes?page=1 and a search in ROUNDS interleaved rounds without
# and with the subscribers (held by bench/realtime-holder.c, a small C program, so that the client's CPU is small and
# measured), with the server's CPU per request; the delay from a committed write to its delivery for USERS users'
# own favorites (one socket each) and for a quote insert fanned out to FANOUT anon sockets, p50/p99. See
# bench/realtime.py.
# For the run: HTTP_MAX_CONNECTIONS is raised to SUBSCRIBERS + 1024 (upgraded sockets stay in the connection
# table), `ulimit -n` to its hard limit, rate limits are off (wrk from one address), and SCRYPT_LN=10 makes
# signing up USERS accounts quick (it only changes how new passwords are hashed). Run by hand, not in CI.
# Usage: bench/realtime.sh   (BENCH_SKIP_BUILD=1 reuses the release build)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
trap bench_stop_server EXIT
export BENCH_DATA=${BENCH_DATA:-$BENCH_OUT/realtime-data}
export SUBSCRIBERS=${SUBSCRIBERS:-10000} USERS=${USERS:-1000} FANOUT=${FANOUT:-1000} ADDRESSES=${ADDRESSES:-200}

ulimit -n "$(ulimit -Hn)"
if (( $(ulimit -n) < SUBSCRIBERS + 1024 )); then
  echo "ulimit -n is $(ulimit -n): too few file descriptors for $SUBSCRIBERS subscribers" >&2
  exit 1
fi
bench_build
gcc -O2 -o "$BENCH_OUT/realtime-holder" "$BENCH_ROOT/bench/realtime-holder.c"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
export HTTP_MAX_CONNECTIONS=$(( SUBSCRIBERS + 1024 )) SCRYPT_LN=10
bench_start_server "$port" --rate-limits off
bench_seed
anon=$("$BENCH_ROOT/.build/release/quote-server" anon-key)
service=$("$BENCH_ROOT/.build/release/quote-server" service-role-key)
quote=$(psql -XAtq "$DATABASE_URL_BENCH" -c "
  INSERT INTO quotes (text, author, category) VALUES ('Realtime bench quote', 'Bench Author', 'wisdom')
  ON CONFLICT DO NOTHING;
  DELETE FROM quotes WHERE text LIKE 'Realtime bench quote %';
  SELECT id FROM quotes WHERE text = 'Realtime bench quote'")
# An earlier run's favorites would make its first PUTs change nothing (and send no change).
psql -XAtq "$DATABASE_URL_BENCH" -c "DELETE FROM user_favorites WHERE quote_id = '$quote'" >/dev/null
tokens="$BENCH_OUT/realtime-tokens.txt"
# One account a user (signed up, or logged in when a previous run made it), four at a time.
python3 - "$port" "$USERS" >"$tokens" <<'PY'
import concurrent.futures, http.client, json, sys
port, users = int(sys.argv[1]), int(sys.argv[2])
def token(index):
    body = json.dumps({"email": f"realtime{index}@bench.local", "password": "correct horse battery"})
    for route in ("signup", "login"):
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        connection.request("POST", f"/v1/auth/{route}", body, {"Content-Type": "application/json"})
        answer = connection.getresponse()
        if answer.status < 300:
            return json.load(answer)["access_token"]
    raise RuntimeError(f"no token for user {index}: {answer.status}")
with concurrent.futures.ThreadPoolExecutor(4) as pool:
    print("\n".join(pool.map(token, range(users))))
PY
echo "users: $(wc -l <"$tokens"), quotes: $(psql -XAtq "$DATABASE_URL_BENCH" -c 'SELECT count(*) FROM quotes'), ulimit -n: $(ulimit -n)"
HOLDER="$BENCH_OUT/realtime-holder" timeout 1800 python3 "$BENCH_ROOT/bench/realtime.py" "$port" "$SERVER_PID" "$anon" "$service" "$tokens" "$quote"
psql -XAtq "$DATABASE_URL_BENCH" -c "DELETE FROM quotes WHERE text LIKE 'Realtime bench quote %'" >/dev/null
