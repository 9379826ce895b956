#!/bin/sh
# The standby of the compose "cluster" profile: a base backup of db-primary on first start (-R writes
# primary_conninfo and standby.signal), then PostgreSQL as a hot standby named standby1 (cluster_name is its
# application_name, which the primary's synchronous_standby_names lists).
set -e
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  until pg_isready -h db-primary -U "$POSTGRES_USER" -q; do sleep 1; done
  PGPASSWORD="$POSTGRES_PASSWORD" pg_basebackup -h db-primary -U "$POSTGRES_USER" -D "$PGDATA" -R -X stream -c fast
  chmod 700 "$PGDATA"
fi
exec postgres -c cluster_name=standby1 -c hot_standby=on -c hot_standby_feedback=on
