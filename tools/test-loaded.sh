#!/bin/sh
# The whole suite, then the whole suite under the sanitizers, ROUNDS times,
# with more busy processes than cores (BUSY, twice the cores by default): a
# loaded machine is where deadlines that assume an idle one and races show,
# and a suite that passes only on a quiet machine fails its users' CI.
# SANITIZE=0 runs only make test each round (a round then takes a few
# minutes instead of about half an hour on two cores). Usage:
#   tools/test-loaded.sh [ROUNDS]      (make test-loaded ROUNDS=3 [BUSY=N] [SANITIZE=0])
set -u
rounds=${1:-1}
sanitize=${SANITIZE:-1}
cores=$(nproc 2>/dev/null || echo 2)
loops=${BUSY:-$((cores * 2))}
busy=""
stop_busy() { [ -n "$busy" ] && kill $busy 2>/dev/null; busy=""; }
trap stop_busy EXIT INT TERM
i=0
while [ "$i" -lt "$loops" ]; do
  sh -c 'while :; do :; done' &
  busy="$busy $!"
  i=$((i + 1))
done
echo "test-loaded: $loops busy loops on $cores cores (pids$busy), $rounds round(s), sanitize=$sanitize"
round=1
while [ "$round" -le "$rounds" ]; do
  echo "== test-loaded round $round: make test"
  make --no-print-directory test || exit 1
  if [ "$sanitize" != 0 ]; then
    echo "== test-loaded round $round: make sanitize"
    make --no-print-directory sanitize || exit 1
  fi
  round=$((round + 1))
done
echo "test-loaded: $rounds round(s) passed under load"
