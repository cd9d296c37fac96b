#!/bin/bash
# variant.sh SRC OUT NAME=VALUE ...: SRC with the tunables' #define lines set (the search's own way of tuning).
set -eu
SRC=$1 OUT=$2; shift 2; cp "$SRC" "$OUT"
for kv in "$@"; do
  k=${kv%%=*} v=${kv#*=}
  grep -qE "^#define $k [0-9]+ " "$OUT" || { echo "no tunable $k in $SRC" >&2; exit 1; }
  sed -i -E "s/^#define $k [0-9]+( +\/\/ sparseditto:tunable)/#define $k $v\1/" "$OUT"
done
