#!/bin/sh
# The compose services' entrypoint for quote-server: the JWT secret and the database password from the secrets
# generated once (service "secrets"), in the environment only (libpq reads PGPASSWORD), then quote-server itself.
set -eu
JWT_SECRET=$(cat /run/quotevault/jwt-secret)
PGPASSWORD=$(cat /run/quotevault/db-password)
export JWT_SECRET PGPASSWORD
exec quote-server "$@"
