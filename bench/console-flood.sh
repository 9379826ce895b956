#!/usr/bin/env bash
# Console sign-in floods (bench/console-flood.py) beside a legitimate owner using the console and app clients using
# /v1, on the real quote corpus with RATE_LIMITS=on and TRUSTED_PROXIES=127.0.0.2 (the attacks' "proxy", so each
# request may name a new client). Prints the legitimate clients' p50/p99 and status counts without a flood and
# under each, side by side in one run. Run by hand, not in CI; loopback only, bounded by time.
# Usage: bench/console-flood.sh   (DURATION=seconds measured per phase, default 8; ATTACKS="rotating pinned codes")
set -euo pipefail
source "$(dirname "$0")/lib.sh"
trap 'bench_stop_server' EXIT
DURATION=${DURATION:-8}

bench_build
port=${BENCH_PORT:-18080}
export RATE_LIMITS=on TRUSTED_PROXIES=127.0.0.2 CONSOLE=on
bench_start_server "$port"
bench_seed
server="$BENCH_ROOT/.build/release/quote-server"
"$server" owner add legit-owner@bench.local >/dev/null
"$server" owner add victim-owner@bench.local >/dev/null
# Each run starts with no failed attempts counted (an earlier run's are within the 15-minute windows).
psql -XAtq "$DATABASE_URL_BENCH" -c "DELETE FROM console_sign_in_failures" >/dev/null
echo "quotes: $(bench_grow_quotes), cores: $(nproc), load: $(cut -d' ' -f1-3 /proc/loadavg)"
# shellcheck disable=SC2086
timeout $((DURATION * 12 + 300)) python3 "$BENCH_ROOT/bench/console-flood.py" "$port" "$DATABASE_URL_BENCH" \
  "$DURATION" ${ATTACKS:-}
echo "failed attempts stored: $(psql -XAtq "$DATABASE_URL_BENCH" -c 'SELECT count(*) FROM console_sign_in_failures')"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
