#!/usr/bin/env bash
# Issue 30's hostile traffic (bench/fairuse.py) beside a legitimate client mix, on the real quote corpus with
# RATE_LIMITS=on and TRUSTED_PROXIES unset: each attack from several loopback source addresses (127.0.0.2, ...),
# the legitimate clients on 127.0.0.1. Prints the legitimate clients' p50/p99 alone and under each attack, and
# whether the issue's goal holds: p50 <= max(10 x alone, 50 ms), p99 <= max(5 x alone, 500 ms), no 5xx for logins,
# sign-ups and writes. Run by hand, not in CI.
# Usage: bench/fairuse.sh   (DURATION=seconds measured per phase, default 8; ATTACKS="rest-ilike search ...")
set -euo pipefail
source "$(dirname "$0")/lib.sh"
trap 'bench_stop_server' EXIT
DURATION=${DURATION:-8}

bench_build
port=${BENCH_PORT:-18080}
bench_start_server "$port"
bench_seed
anon=$("$BENCH_ROOT/.build/release/quote-server" anon-key)
echo "quotes: $(bench_grow_quotes), cores: $(nproc), load: $(cut -d' ' -f1-3 /proc/loadavg)"
# shellcheck disable=SC2086
timeout $((DURATION * 40 + 300)) python3 "$BENCH_ROOT/bench/fairuse.py" "$port" "$anon" "$DURATION" ${ATTACKS:-}
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
