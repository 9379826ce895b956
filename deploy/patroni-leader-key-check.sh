#!/usr/bin/env bash
# Proves deploy/patroni-leader-key-fix.py against a real etcd (a throwaway member on 127.0.0.1, CHECK_ETCD_PORT,
# 23791 and +1): node a leads, its lease goes (a hang past the TTL: the lease revoked), node b takes the lead, then
# a's renewal runs with its stale view. Debian's Patroni 3.0.2 as it is must overwrite b's key (else this check no
# longer shows the bug); patched, a's renewal must fail and the key stay b's. Needs Debian's patroni and etcd-server
# (scripts/install-deps --cluster). Bounded: etcd up within 15 s, each run 60 s.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PORT=${CHECK_ETCD_PORT:-23791}
WORK=$(mktemp -d /tmp/patroni-leader-key.XXXXXX)
cleanup() {
  [[ -z ${ETCD_PID:-} ]] || { kill "$ETCD_PID" 2>/dev/null; wait "$ETCD_PID" 2>/dev/null || true; }
  rm -rf "$WORK"
}
trap cleanup EXIT

etcd --name check --data-dir "$WORK/etcd" --listen-client-urls "http://127.0.0.1:$PORT" \
  --advertise-client-urls "http://127.0.0.1:$PORT" --listen-peer-urls "http://127.0.0.1:$((PORT + 1))" \
  --initial-advertise-peer-urls "http://127.0.0.1:$((PORT + 1))" \
  --initial-cluster "check=http://127.0.0.1:$((PORT + 1))" >"$WORK/etcd.log" 2>&1 &
ETCD_PID=$!
for _ in $(seq 1 75); do
  curl -fs --max-time 1 "http://127.0.0.1:$PORT/health" 2>/dev/null | grep -q '"health":"true"' && break
  sleep 0.2
done
curl -fs --max-time 1 "http://127.0.0.1:$PORT/health" | grep -q '"health":"true"' || { tail "$WORK/etcd.log"; exit 1; }

cat >"$WORK/scenario.py" <<'EOF'
import sys
import time
from patroni.dcs.etcd3 import Etcd3

namespace = f"/leader-key-check-{time.time_ns()}/"


def node(name):
    return Etcd3({"hosts": [f"127.0.0.1:{sys.argv[1]}"], "scope": "check", "name": name, "ttl": 10,
                  "retry_timeout": 4, "loop_wait": 2, "namespace": namespace})


a, b = node("a"), node("b")
assert a.attempt_to_acquire_leader(), "a could not take the lead"
assert a.get_cluster().leader.name == "a"  # a's view, kept: a leads with its lease
a._client.call_rpc("/lease/revoke", {"ID": a._lease})  # a hung past its TTL: lease and leader key gone
assert b.attempt_to_acquire_leader(), "b could not take the lead"
renewed = a._update_leader()
holder = b.get_cluster().leader.name
print(f"a's renewal after b took the lead: {renewed}; the leader key names {holder}")
sys.exit(0 if holder == "b" and not renewed else 1)
EOF

# Patroni's own interpreter (the system's, with its etcd and urllib3 modules), a copy of its package first on the path.
mkdir -p "$WORK/lib"
cp -r /usr/lib/python3/dist-packages/patroni "$WORK/lib/"
echo "== Patroni $(dpkg-query -W -f='${Version}' patroni) as Debian ships it"
if PYTHONPATH="$WORK/lib" timeout 60 /usr/bin/python3 "$WORK/scenario.py" "$PORT"; then
  echo "the unpatched Patroni kept b's key: the bug is not there (a newer Patroni?); the fix may go" >&2
  exit 1
fi
python3 "$ROOT/deploy/patroni-leader-key-fix.py" "$WORK/lib/patroni"
echo "== patched"
PYTHONPATH="$WORK/lib" timeout 60 /usr/bin/python3 "$WORK/scenario.py" "$PORT"
echo "patroni-leader-key-check: passed"
