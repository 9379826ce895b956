#!/bin/sh
# Runs once, when the official postgres image initialises the primary (docker-entrypoint-initdb.d).
set -e
# The standby's base backup and its stream come in over the compose network.
echo "host replication $POSTGRES_USER all scram-sha-256" >> "$PGDATA/pg_hba.conf"
# Effective from the real start on: named during initialisation it would block the image's own setup commits.
psql -v ON_ERROR_STOP=1 -U "$POSTGRES_USER" -d "$POSTGRES_DB" \
  -c "ALTER SYSTEM SET synchronous_standby_names = 'FIRST 1 (standby1)'"
