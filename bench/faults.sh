#!/usr/bin/env bash
# Fault tests, one command, bounded (about two minutes):
#  1. PostgreSQL stopped for 8 s and started again while favorites are written: 503 problem+json during the
#     outage, service back by itself after the restart, no acknowledged write lost.
#  2. The SMTP server down while 20 password resets are requested: every mail delivered once it is up, once.
# Uses its own embedded cluster (bench/out/faults-data) and ports 18085/18086, loopback only.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
trap bench_stop_server EXIT
export BENCH_DATA="$BENCH_OUT/faults-data"
cluster="$BENCH_DATA/postgres"
bindir=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)

# pg_ctl runs as the cluster's owner (PostgreSQL refuses root; the server runs it as an unprivileged user).
pg_ctl_as_owner() {
  if [[ $(id -u) == 0 ]]; then
    setpriv --reuid="$(stat -c %u "$cluster")" --regid="$(stat -c %g "$cluster")" --init-groups -- "$bindir/pg_ctl" "$@"
  else
    "$bindir/pg_ctl" "$@"
  fi
}
export -f pg_ctl_as_owner
export cluster bindir

bench_build
status=0

echo "== 1. PostgreSQL stopped and restarted under load"
bench_start_server 18085 --rate-limits off
bench_seed
psql -XAtq "$DATABASE_URL_BENCH" -c "SELECT id FROM quotes ORDER BY random() LIMIT 5000" >"$BENCH_OUT/faults-quote-ids.txt"
python3 "$BENCH_ROOT/bench/faults.py" database --port 18085 --quote-ids "$BENCH_OUT/faults-quote-ids.txt" \
  --stop-command 'pg_ctl_as_owner -D "$cluster" stop -m fast -w' \
  --start-command 'pg_ctl_as_owner -D "$cluster" -l "$cluster/server.log" start -w' || status=1
bench_stop_server

echo "== 2. SMTP server down while password resets are requested"
SMTP_URL=smtp://127.0.0.1:18086 bench_start_server 18085 --rate-limits off
python3 "$BENCH_ROOT/bench/faults.py" mail --port 18085 --smtp-port 18086 --mails 20 --down 8 || status=1
exit "$status"
