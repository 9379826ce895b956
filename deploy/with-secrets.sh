#!/bin/sh
# The compose services' entrypoint for quote-server: the JWT secret and the database password from the secrets
# generated once (service "secrets"), in the environment only (libpq reads PGPASSWORD), then quote-server itself.
# TRUSTED_PROXY_HOSTS: host names (HAProxy's service) whose addresses are added to TRUSTED_PROXIES, so the network
# needs no fixed subnet; the names are resolved when the server starts.
set -eu
JWT_SECRET=$(cat /run/quotevault/jwt-secret)
PGPASSWORD=$(cat /run/quotevault/db-password)
export JWT_SECRET PGPASSWORD
for host in $(echo "${TRUSTED_PROXY_HOSTS:-}" | tr ',' ' '); do
  addresses=$(getent ahosts "$host" | awk '{print $1}' | sort -u | paste -sd, -)
  [ -n "$addresses" ] || {
    echo "with-secrets.sh: the trusted proxy $host has no address" >&2
    exit 1
  }
  TRUSTED_PROXIES=${TRUSTED_PROXIES:+$TRUSTED_PROXIES,}$addresses
done
[ -z "${TRUSTED_PROXIES:-}" ] || export TRUSTED_PROXIES
exec quote-server "$@"
