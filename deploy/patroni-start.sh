#!/bin/sh
# A Patroni node of the compose "cluster" profile: the passwords generated once (service "secrets") into Patroni's
# environment, then Patroni as the postgres user. `post-bootstrap CONNINFO`: Patroni's hook on the node that
# bootstraps the cluster, which creates the application's database.
set -eu
if [ "${1:-}" = post-bootstrap ]; then
  exec psql -XAtq "$2" -c "CREATE DATABASE quotevault"
fi
PATRONI_SUPERUSER_PASSWORD=$(cat /run/quotevault/db-password)
PATRONI_REPLICATION_PASSWORD=$(cat /run/quotevault/replication-password)
PATRONI_REWIND_PASSWORD=$PATRONI_SUPERUSER_PASSWORD
export PATRONI_SUPERUSER_PASSWORD PATRONI_REPLICATION_PASSWORD PATRONI_REWIND_PASSWORD
sed "s/@SYNCHRONOUS_MODE_STRICT@/${SYNCHRONOUS_MODE_STRICT:-true}/" /etc/patroni/patroni.yml.in >/tmp/patroni.yml
mkdir -p /var/lib/postgresql/data /var/run/postgresql
chown postgres:postgres /var/lib/postgresql/data /var/run/postgresql
chmod 0700 /var/lib/postgresql/data
exec setpriv --reuid=postgres --regid=postgres --init-groups -- patroni /tmp/patroni.yml
