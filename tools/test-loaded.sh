#!/bin/sh
# The whole suite, then the whole suite under the sanitizers, ROUNDS times,
# with every core kept busy by another process (a loaded machine is where
# deadlines that assume an idle one and races show). Usage:
#   tools/test-loaded.sh [ROUNDS]      (make test-loaded ROUNDS=3)
set -u
rounds=${1:-1}
cores=$(nproc 2>/dev/null || echo 2)
busy=""
stop_busy() { [ -n "$busy" ] && kill $busy 2>/dev/null; busy=""; }
trap stop_busy EXIT INT TERM
i=0
while [ "$i" -lt "$cores" ]; do
  sh -c 'while :; do :; done' &
  busy="$busy $!"
  i=$((i + 1))
done
echo "test-loaded: $cores busy loops (pids$busy), $rounds round(s)"
round=1
while [ "$round" -le "$rounds" ]; do
  echo "== test-loaded round $round: make test"
  make --no-print-directory test || exit 1
  echo "== test-loaded round $round: make sanitize"
  make --no-print-directory sanitize || exit 1
  round=$((round + 1))
done
echo "test-loaded: $rounds round(s) passed under load"
