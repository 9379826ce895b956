#!/bin/sh
# docker-compose's "secrets" service: on the first run, random secrets in the volume mounted at /run/quotevault;
# on every later run it keeps them (the same JWT secret, so sessions and the anon key survive restarts). Prints none.
set -eu
cd /run/quotevault
generate() {
  [ -s "$1" ] && return 0
  head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$1.new"
  mv "$1.new" "$1"
}
umask 077
generate jwt-secret
generate db-password
generate replication-password
# The server runs as uid 10001 (Dockerfile); PostgreSQL as postgres, uid and gid 999 (deploy/ha.Dockerfile).
chown 10001 jwt-secret
chown 10001:999 db-password
chmod 0400 jwt-secret replication-password
chmod 0440 db-password
