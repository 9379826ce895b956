#!/usr/bin/env bash
# Hostile traffic (bench/fairuse.py: issue 42's shapes and crowds, and issue 30's) beside a legitimate client mix, on
# the real quote corpus grown to 100,000 quotes, with RATE_LIMITS=on and TRUSTED_PROXIES unset: each attack from
# several loopback source addresses (127.0.0.2, ...), the legitimate clients on 127.0.0.1. Prints the legitimate
# clients' p50/p99 alone and under each attack, the share of their searches answered 2xx and their slowest login,
# sign-up or write, and whether the goal holds: p50 <= max(10 x alone, 50 ms), p99 <= max(5 x alone, 500 ms), no 5xx
# and nothing over 5 s for logins, sign-ups and writes, at least 80 % of searches 2xx. Run by hand, not in CI.
# Usage: bench/fairuse.sh   (DURATION=seconds measured per phase, default 8; ATTACKS="rest-or search ..."; SCALE=3
# runs every attack from 3 times the addresses)
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
