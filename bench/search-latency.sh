#!/usr/bin/env bash
# One search at a time inside PostgreSQL: for each term, the statements the server runs for a first page of 20 once
# its "more than 1,000 matches" memory is warm (the walk alone for common terms; the index of words, else the
# trigram count, for the others), timed by pgbench (-M prepared, one client, DUR s). No answer cache is involved.
# usage: bench/search-latency.sh DATABASE_URL   env: DUR (3), TERMS (field:term,... instead of the list below)
set -euo pipefail
# The search functions are in the schema `search` (schema/); before, in public: either is found.
export PGOPTIONS="${PGOPTIONS:-} -c search_path=public,search"
URL=$1; DUR=${DUR:-3}
PGBENCH=${PGBENCH:-/usr/lib/postgresql/15/bin/pgbench}
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
words_call() { # field column query: the index-of-words call (0013's, or 0009's before it)
  if [ "$NEW" = t ]; then
    printf "quote_search_words_%s('%s', %s, NULL, 21, 0)" "$2" "$3" "$(patterns "$3")"
  else
    printf "quote_search_words('%s'::\"char\", '%s', NULL, 21, 0)" "$1" "$3"
  fi
}
patterns() { # query -> contains whole prefix (ASCII word characters and spaces only)
  printf "'%%%s%%', '\\\\m%s\\\\M', '\\\\m%s'" "$1" "$1" "$1"
}
NEW=$(psql -X -At "$URL" -c "SELECT to_regproc('quote_search_words_text') IS NOT NULL")
printf '%-8s %-14s %8s %10s\n' field term total 'ms/query'
specs=(keyword:love keyword:river keyword:zenith keyword:velmir keyword:torquarin keyword:xylophone
       keyword:"the river" keyword:"ephemeral fjord"
       author:smith author:lee author:curie author:ada author:tzu author:nobody
       author:"ada lovelace" author:"lao tzu" author:"nobody here")
[ -z "${TERMS:-}" ] || IFS=, read -r -a specs <<<"$TERMS"
for spec in "${specs[@]}"; do
  field=${spec%%:*}; term=${spec#*:}; column=$([ "$field" = keyword ] && echo text || echo author)
  f=$([ "$field" = keyword ] && echo t || echo a)
  total=$(psql -X -At "$URL" -c "SELECT total FROM $(words_call "$f" "$column" "$term")" | head -1)
  if [ -z "$total" ]; then
    total=$(psql -X -At "$URL" \
      -c "SELECT total FROM quote_search_ranked_$column($(patterns "$term"), NULL, 21, 0) LIMIT 1")
    sql="SELECT * FROM quote_search_ranked_$column($(patterns "$term"), NULL, 21, 0);"
  else
    sql="SELECT * FROM $(words_call "$f" "$column" "$term");"
  fi
  if [ "$total" -gt 1000 ]; then
    sql="SELECT * FROM quote_search_walk_$column($(patterns "$term"), '$term', NULL, 21);"
  fi
  # with the version read, as the server's statements do
  echo "$sql" >"$dir/q.sql"
  ms=$($PGBENCH -n -M prepared -c1 -T"$DUR" -f "$dir/q.sql" "$URL" 2>/dev/null | awk '/latency average/ {print $4}')
  printf '%-8s %-14s %8s %10s\n' "$field" "$term" "$total" "$ms"
done
