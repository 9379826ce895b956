#!/usr/bin/env bash
# Console pages' server time at scale (issue 45's goal: every page under 200 ms): 100,000+ quotes, 10,000 app
# accounts with favorites and sessions, 100,000 audit rows; each page asked REQUESTS times in turn by one signed-in
# owner (bench/console-pages.py), time to first byte on loopback; prints p50/p99 per page. Exports are timed to
# their last byte. Run by hand, not in CI; loopback only, bounded by time.
# Usage: bench/console-pages.sh   (REQUESTS per page, default 40; BENCH_SKIP_BUILD=1 to use the built server)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
trap 'bench_stop_server' EXIT

bench_build
port=${BENCH_PORT:-18080}
export RATE_LIMITS=off CONSOLE=on
bench_start_server "$port"
bench_seed
echo "quotes: $(bench_grow_quotes)"
# 10,000 accounts (placeholder password hashes: nobody signs in as them), five favorites and one session each.
psql -XAtq "$DATABASE_URL_BENCH" -v ON_ERROR_STOP=1 <<'SQL' >/dev/null
INSERT INTO users (email, password_hash)
SELECT 'bench-user-' || n || '@bench.local', '$scrypt$bench-placeholder' FROM generate_series(1, 10000) AS n
ON CONFLICT DO NOTHING;
INSERT INTO profiles (id, display_name)
SELECT id, 'Bench user ' || split_part(email, '@', 1) FROM users WHERE email LIKE 'bench-user-%'
ON CONFLICT DO NOTHING;
INSERT INTO user_favorites (user_id, quote_id)
SELECT u.id, q.id FROM (SELECT id, row_number() OVER () AS r FROM users WHERE email LIKE 'bench-user-%') u
CROSS JOIN LATERAL (SELECT id FROM quotes ORDER BY created_at DESC OFFSET (u.r * 7) % 90000 LIMIT 5) q
ON CONFLICT DO NOTHING;
INSERT INTO console_audit (owner_email, action, target, at)
SELECT 'bench@bench.local', 'bench.row', 'row ' || n, now() - n * interval '1 second'
FROM generate_series(1, 100000 - (SELECT count(*) FROM console_audit WHERE action = 'bench.row')) AS n;
VACUUM ANALYZE;  -- as autovacuum would have by then: index-only scans want the visibility map
SQL
echo "accounts: $(psql -XAtq "$DATABASE_URL_BENCH" -c 'SELECT count(*) FROM users'), favorites: $(psql -XAtq "$DATABASE_URL_BENCH" -c 'SELECT count(*) FROM user_favorites'), audit rows: $(psql -XAtq "$DATABASE_URL_BENCH" -c 'SELECT count(*) FROM console_audit')"
echo "cores: $(nproc), load: $(cut -d' ' -f1-3 /proc/loadavg)"
link=$("$BENCH_ROOT/.build/release/quote-server" owner add "bench-owner-$$@bench.local" | tail -1)
timeout 900 python3 "$BENCH_ROOT/bench/console-pages.py" "$port" "$DATABASE_URL_BENCH" "$link" "${REQUESTS:-40}"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
