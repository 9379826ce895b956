#!/bin/sh
# The compose default profile's PostgreSQL (Debian's postgresql-15, image deploy/ha.Dockerfile). On the first start
# an empty data directory becomes the cluster the official postgres image would make (POSTGRES_USER with the
# password in POSTGRES_PASSWORD_FILE, the database POSTGRES_DB, en_US.UTF-8, scram-sha-256 over the network), so a
# volume made by that image works as well; then PostgreSQL runs as postgres in the foreground.
set -eu
PGDATA=${PGDATA:-/var/lib/postgresql/data}
bin=/usr/lib/postgresql/15/bin
as_postgres() { setpriv --reuid=postgres --regid=postgres --init-groups -- "$@"; }
mkdir -p "$PGDATA" /var/run/postgresql
chown postgres:postgres "$PGDATA" /var/run/postgresql
chmod 0700 "$PGDATA"
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  as_postgres "$bin/initdb" -D "$PGDATA" --username="$POSTGRES_USER" --pwfile="$POSTGRES_PASSWORD_FILE" \
    --auth-local=trust --auth-host=scram-sha-256 --encoding=UTF8 --locale=en_US.UTF-8 >/dev/null
  echo "host all all all scram-sha-256" >>"$PGDATA/pg_hba.conf"
  # The database is created on the Unix socket only: nobody connects before it exists.
  as_postgres "$bin/pg_ctl" -D "$PGDATA" -w -o "-c listen_addresses=''" start >/dev/null
  as_postgres "$bin/psql" -XAtq -U "$POSTGRES_USER" -d postgres -c "CREATE DATABASE \"$POSTGRES_DB\""
  as_postgres "$bin/pg_ctl" -D "$PGDATA" -m fast -w stop >/dev/null
fi
exec setpriv --reuid=postgres --regid=postgres --init-groups -- "$bin/postgres" -D "$PGDATA" -c listen_addresses='*'
