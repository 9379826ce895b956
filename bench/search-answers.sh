#!/usr/bin/env bash
# One search answer at a time over HTTP, as a user waits for it: two running servers (e.g. one on 100,000 quotes and
# one on 1,000,000, both started with ANSWER_CACHE_BYTES=0), each term's first page of 20 by one client (wrk -t1
# -c1, DUR s), the two sides alternated ROUNDS times; prints the median average latency of each side and B / A.
# Each term is asked once first, so a common term's "more than 1,000 matches" memory is warm, as in use.
# usage: bench/search-answers.sh BASE_URL_A BASE_URL_B   env: DUR (3), ROUNDS (3), TERMS (field:term,... as below)
# Loopback servers only; every load is bounded by DUR.
set -euo pipefail
A=$1; B=$2; DUR=${DUR:-3}; ROUNDS=${ROUNDS:-3}
for url in "$A" "$B"; do
  case $url in http://127.*|http://localhost*) ;; *) echo "loopback servers only: $url" >&2; exit 2;; esac
done
specs=(keyword:love keyword:river keyword:zenith keyword:velmir keyword:torquarin keyword:xylophone
       keyword:"the river" keyword:"ephemeral fjord"
       author:smith author:lee author:curie author:ada author:tzu author:nobody
       author:"ada lovelace" author:"lao tzu" author:"nobody here")
[ -z "${TERMS:-}" ] || IFS=, read -r -a specs <<<"$TERMS"
script=$(mktemp); trap 'rm -f "$script"' EXIT
echo 'request = function() return wrk.format("GET", os.getenv("SEARCH_PATH")) end' >"$script"
mean_ms() { # base path -> average latency in ms
  SEARCH_PATH=$2 wrk -t1 -c1 -d"${DUR}s" --latency -s "$script" "$1" | awk '
    /Non-2xx/ {bad = 1}
    /^ +Latency +[0-9]/ {v = $2; if (v ~ /us$/) v = v / 1000; else if (v ~ /ms$/) v = v + 0; else v = v * 1000}
    END {if (bad) print "failed"; else printf "%.3f", v}'
}
median() { sort -n | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
printf '%-8s %-16s %10s %10s %8s\n' field term 'A ms' 'B ms' 'B / A'
for spec in "${specs[@]}"; do
  field=${spec%%:*}; term=${spec#*:}
  path="/v1/quotes/search?type=$field&page_size=20&q=${term// /%20}"
  for url in "$A" "$B"; do curl -fsS -o /dev/null "$url$path"; done
  as=(); bs=()
  for _ in $(seq 1 "$ROUNDS"); do as+=("$(mean_ms "$A" "$path")"); bs+=("$(mean_ms "$B" "$path")"); done
  case " ${as[*]} ${bs[*]} " in *" failed "*) echo "$field '$term': a non-2xx answer" >&2; exit 1;; esac
  a=$(printf '%s\n' "${as[@]}" | median); b=$(printf '%s\n' "${bs[@]}" | median)
  printf '%-8s %-16s %10.3f %10.3f %8.2f\n' "$field" "$term" "$a" "$b" "$(awk -v a="$a" -v b="$b" 'BEGIN {print b / a}')"
done
