#!/bin/sh
# A Patroni node of the compose "cluster" profile: the passwords generated once (service "secrets") into Patroni's
# environment, patroni.yml.in rendered for the container, then Patroni as the postgres user.
# `post-bootstrap CONNINFO`: Patroni's hook on the node that bootstraps the cluster, which creates the application's
# database (unless restored with it); `take-restored`, below. `render TEMPLATE`: the template with each @NAME@
# replaced by $NAME (a placeholder alone on its line takes a block of lines, or goes when empty); scripts/cluster
# renders with it too.
set -eu
if [ "${1:-}" = post-bootstrap ]; then
  [ "$(psql -XAtq "$2" -c "SELECT 1 FROM pg_database WHERE datname = 'quotevault'")" = 1 ] && exit 0
  exec psql -XAtq "$2" -c "CREATE DATABASE quotevault"
fi
if [ "${1:-}" = take-restored ]; then
  # Patroni's custom bootstrap (scripts/cluster restore): `take-restored DIR --scope=S --datadir=D` makes DIR, a
  # data directory already restored and recovered, the new cluster's D.
  restored=$2
  shift 2
  for argument; do case $argument in --datadir=*) datadir=${argument#--datadir=} ;; esac; done
  rmdir "$datadir" 2>/dev/null || true
  exec mv "$restored" "$datadir"
fi
if [ "${1:-}" = render ]; then
  exec python3 -c '
import os, re, sys
text = open(sys.argv[1]).read()
def value(name):
    if name not in os.environ:
        sys.exit("render: %s has @%s@ but %s is not set" % (sys.argv[1], name, name))
    return os.environ[name]
def block(match):
    lines = value(match.group(2)).splitlines()
    return "".join(match.group(1) + line + "\n" for line in lines)
text = re.sub(r"(?m)^([ \t]*)@([A-Z0-9_]+)@[ \t]*\n", block, text)
sys.stdout.write(re.sub(r"@([A-Z0-9_]+)@", lambda m: value(m.group(1)), text))' "$2"
fi
PATRONI_SUPERUSER_PASSWORD=$(cat /run/quotevault/db-password)
PATRONI_REPLICATION_PASSWORD=$(cat /run/quotevault/replication-password)
PATRONI_REWIND_PASSWORD=$PATRONI_SUPERUSER_PASSWORD
export PATRONI_SUPERUSER_PASSWORD PATRONI_REPLICATION_PASSWORD PATRONI_REWIND_PASSWORD
# The container's values; PATRONI_NAME, the connect addresses and the etcd hosts come from the compose file.
export NAME="$PATRONI_NAME" RESTAPI_LISTEN=0.0.0.0:8008 RESTAPI_CONNECT="$PATRONI_RESTAPI_CONNECT_ADDRESS" \
  ETCD_HOSTS="$PATRONI_ETCD3_HOSTS" MAXIMUM_LAG_ON_FAILOVER=1048576 \
  SYNCHRONOUS_MODE_STRICT="${SYNCHRONOUS_MODE_STRICT:-true}" HBA_CLIENTS=all HBA_METHOD=scram-sha-256 \
  POST_BOOTSTRAP="/usr/local/bin/patroni-start.sh post-bootstrap" BOOTSTRAP_METHOD="" PG_LISTEN=0.0.0.0:5432 \
  PG_CONNECT="$PATRONI_POSTGRESQL_CONNECT_ADDRESS" DATA_DIR=/var/lib/postgresql/data/patroni \
  BIN_DIR=/usr/lib/postgresql/15/bin PGPASS=/tmp/pgpass SOCKET_DIR=/var/run/postgresql ARCHIVE_MODE=off \
  ARCHIVE_COMMAND=""
sh "$0" render /etc/patroni/patroni.yml.in >/tmp/patroni.yml
mkdir -p /var/lib/postgresql/data /var/run/postgresql
chown postgres:postgres /var/lib/postgresql/data /var/run/postgresql
chmod 0700 /var/lib/postgresql/data
exec setpriv --reuid=postgres --regid=postgres --init-groups -- patroni /tmp/patroni.yml
