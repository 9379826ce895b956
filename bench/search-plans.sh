#!/usr/bin/env bash
# The plans of every statement the search functions run (auto_explain, nested statements, with row counts), for the
# same calls on two databases holding the same quotes: e.g. one migrated before a change of schema/ and one after.
# Prints the plans' shapes side by side (nodes, indexes, conditions; no costs or counts) and whether they differ.
# The functions are found in the schema `search` or, before it, in public.
# usage: bench/search-plans.sh URL_A URL_B   (ANALYZE both first: a plan may follow the sampled statistics)
set -euo pipefail
A=$1; B=$2
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
texts=(love river zenith velmir xylophone "the river" "ephemeral fjord" w)
authors=(smith lee ada tzu nobody "ada lovelace" "lao tzu")
calls() { # column term...
  local column=$1; shift
  for t in "$@"; do
    p="'%$t%', '\\m$t\\M', '\\m$t'"
    echo "SELECT count(*) FROM quote_search_words_$column('$t', $p, NULL, 21, 0);"
    echo "SELECT count(*) FROM quote_search_ranked_$column($p, NULL, 21, 0);"
    echo "SELECT count(*) FROM quote_search_walk_$column($p, '$t', NULL, 21);"
  done
}
shapes() { # url -> the plans' node, index and condition lines
  { echo "LOAD 'auto_explain'; SET auto_explain.log_min_duration = 0; SET auto_explain.log_nested_statements = on;"
    echo "SET auto_explain.log_analyze = on; SET auto_explain.log_timing = off; SET client_min_messages = log;"
    echo "SET search_path = public, search;"
    calls text "${texts[@]}"; calls author "${authors[@]}"; } | psql -X -q -v ON_ERROR_STOP=1 "$1" 2>&1 \
    | grep -E '^\s*->|\(actual rows|Cond:|Filter:|Sort Key|InitPlan|SubPlan' \
    | sed -E "s/\(cost=[^)]*\)//; s/\(actual rows=[0-9]+ loops=[0-9]+\)//; s/'[0-9]+'::oid/OID/; s/\b(public|search)\.//g;
              s/Rows Removed by [A-Za-z ]+: [0-9]+//; s/\s+$//" | grep -v '^\s*$'
}
shapes "$A" > "$dir/a"; shapes "$B" > "$dir/b"
echo "A: $(wc -l < "$dir/a") plan lines, $(grep -c Scan "$dir/a") scans; B: $(wc -l < "$dir/b") plan lines, $(grep -c Scan "$dir/b") scans"
diff "$dir/a" "$dir/b" && echo "same plans"
