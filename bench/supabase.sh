#!/usr/bin/env bash
# The Supabase-compatible read path beside the /v1 route it mirrors, in one run: a category page of 20 quotes,
# newest first, through PostgREST's grammar (parsed, checked against the schema, JSON built in PostgreSQL)
# and through /v1 (JSON written in Swift).
# Usage: bench/supabase.sh   (DURATION=seconds per measurement, default 5)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
trap bench_stop_server EXIT

bench_build
bench_start_server 18080 --supabase-anon-key bench-anon-key
bench_seed

cat >"$BENCH_OUT/supabase.lua" <<'LUA'
wrk.headers["apikey"] = "bench-anon-key"
wrk.headers["Authorization"] = "Bearer bench-anon-key"
LUA
rest_url="http://127.0.0.1:18080/rest/v1/quotes?select=%2A&category=eq.love&order=created_at.desc&limit=20"
v1_url="http://127.0.0.1:18080/v1/quotes?category=love&page_size=20"
[[ $(curl -fs -H 'apikey: bench-anon-key' "$rest_url" | python3 -c "import json,sys; print(len(json.load(sys.stdin)))") == 20 ]]

read -r v1 v1_p99 < <(wrk_rate "$v1_url")
read -r rest rest_p99 < <(wrk_rate "$rest_url" -s "$BENCH_OUT/supabase.lua")
printf '\n%-44s %10s %10s\n' "route" "req/s" "p99"
printf '%-44s %10s %10s\n' "/v1/quotes?category=love&page_size=20" "$v1" "${v1_p99} ms"
printf '%-44s %10s %10s   %s of /v1\n' "/rest/v1/quotes (same page, PostgREST)" "$rest" "$rest_p99 ms" "$(ratio "$rest" "$v1")"
