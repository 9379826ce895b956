#!/usr/bin/env bash
# The backend's CPU time per search, for two databases side by side: for each term, the statement
# bench/search-latency.sh times, called in a loop for SECS s in one session per side (ROUNDS rounds, alternated);
# CPU = user + system time of that session's backend (/proc/PID/stat), which other processes' load does not
# inflate as it does wall time. PostgreSQL must run on this machine (its /proc is read), as root or its user.
# usage: bench/search-cpu.sh URL_BEFORE URL_AFTER   env: ROUNDS (2) SECS (2) TERMS ("field:term ...", _ for a space)
set -euo pipefail
# The search functions are in the schema `search` (schema/); before, in public: either is found.
export PGOPTIONS="${PGOPTIONS:-} -c search_path=public,search"
A=$1; B=$2; ROUNDS=${ROUNDS:-2}; SECS=${SECS:-2}
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
patterns() { printf "'%%%s%%', '\\\\m%s\\\\M', '\\\\m%s'" "$1" "$1" "$1"; }
cpu_per_call() { # url call -> ms of CPU per call
  cat >"$dir/s.sql" <<SQL
SELECT pg_backend_pid() AS pid \gset
\setenv PID :pid
\o /dev/null
SELECT * FROM $2; SELECT * FROM $2; SELECT * FROM $2;
\o
\! awk '{print \$14 + \$15}' /proc/\$PID/stat > $dir/c0
DO \$\$ DECLARE t0 timestamptz := clock_timestamp(); n int := 0;
BEGIN WHILE clock_timestamp() - t0 < interval '$SECS s' LOOP PERFORM * FROM $2; n := n + 1; END LOOP;
RAISE NOTICE 'calls=%', n; END \$\$;
\! awk '{print \$14 + \$15}' /proc/\$PID/stat > $dir/c1
SQL
  n=$(psql -X -q "$1" -f "$dir/s.sql" 2>&1 | sed -n 's/.*calls=\([0-9]*\).*/\1/p')
  awk -v a="$(cat "$dir/c0")" -v b="$(cat "$dir/c1")" -v n="$n" -v hz="$(getconf CLK_TCK)" \
    'BEGIN {printf "%.3f", (b - a) * 1000 / hz / n}'
}
printf '%-8s %-16s %6s | %-14s | %-14s\n' field term total 'before ms CPU' 'after ms CPU'
for spec in ${TERMS:-keyword:love keyword:river keyword:zenith keyword:velmir keyword:torquarin keyword:xylophone \
            keyword:the_river keyword:ephemeral_fjord author:smith author:lee author:curie author:ada author:tzu \
            author:nobody author:ada_lovelace author:lao_tzu author:nobody_here}; do
  field=${spec%%:*}; term=${spec#*:}; term=${term//_/ }; column=$([ "$field" = keyword ] && echo text || echo author)
  # as search-latency.sh: the index of words, else the trigram count; the walk alone past 1,000 matches
  call="quote_search_words_$column('$term', $(patterns "$term"), NULL, 21, 0)"
  total=$(psql -X -At "$A" -c "SELECT total FROM $call" | head -1)
  if [ -z "$total" ]; then
    call="quote_search_ranked_$column($(patterns "$term"), NULL, 21, 0)"
    total=$(psql -X -At "$A" -c "SELECT total FROM $call LIMIT 1")
  fi
  [ "$total" -gt 1000 ] && call="quote_search_walk_$column($(patterns "$term"), '$term', NULL, 21)"
  ra=(); rb=()
  for _ in $(seq "$ROUNDS"); do ra+=("$(cpu_per_call "$A" "$call")"); rb+=("$(cpu_per_call "$B" "$call")"); done
  printf '%-8s %-16s %6s | %-14s | %-14s\n' "$field" "$term" "$total" "${ra[*]}" "${rb[*]}"
done
