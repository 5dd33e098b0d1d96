#!/bin/sh
# bench/compare_search.sh OLD_ANIMBENCH NEW_ANIMBENCH [SHARED_DIR]
#
# Two builds of `animbench search` one after the other in the same run: the
# default schema at every size, then the wide schema (6k, 30k, 300k); JSON
# per build and schema in build/compare-search-{old,new}-{default,wide}.json.
# The old build needs this harness (--schema): build an older core with the
# current bench/bench_search.c, as README's before/after table did.
# METHODS=brute,boxes,kdtree runs only those (default: every method).
set -e
old=${1:?usage: bench/compare_search.sh OLD_ANIMBENCH NEW_ANIMBENCH [SHARED_DIR]}
new=${2:?usage: bench/compare_search.sh OLD_ANIMBENCH NEW_ANIMBENCH [SHARED_DIR]}
shared=${3:-../shared}
mkdir -p build
for schema in default wide; do
  sizes=6k,30k,300k,3m
  [ "$schema" = wide ] && sizes=6k,30k,300k
  for which in old new; do
    if [ "$which" = old ]; then bin=$old; else bin=$new; fi
    echo "=== $which ($bin), $schema schema"
    "$bin" search --shared "$shared" --schema "$schema" --sizes "$sizes" ${METHODS:+--methods "$METHODS"} \
      --json "build/compare-search-$which-$schema.json"
  done
done
