#!/bin/sh
# Ping and single-search throughput of animserver next to Redis PING, measured
# in the same run on the same machine (loopback, 50 connections, pipelining 1
# and 16). Starts and stops its own redis-server and animserver. Each
# animserver row ends with its ratio to the Redis row just above it (the
# issue's targets at pipeline 16: ping >= 1.0x, search >= 0.5x).
#   bench/compare_redis.sh [BUILD_DIR] [SECONDS]
set -eu
BUILD=${1:-build}
SECONDS_PER_RUN=${2:-5}
tmp=$(mktemp -d)
trap 'kill $redis_pid $anim_pid 2>/dev/null || true; rm -rf "$tmp"' EXIT INT TERM

free_port() {
  /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

redis_port=$(free_port)
redis-server --port "$redis_port" --bind 127.0.0.1 --save '' --appendonly no --daemonize no >"$tmp/redis.log" 2>&1 &
redis_pid=$!
"$BUILD/animserver" --port 0 >"$tmp/anim.out" 2>"$tmp/anim.log" &
anim_pid=$!
for i in $(seq 50); do
  [ -s "$tmp/anim.out" ] && redis-cli -p "$redis_port" ping >/dev/null 2>&1 && break
  sleep 0.1
done
anim_port=$(sed -n 's/^listening on .*:\([0-9]*\)$/\1/p' "$tmp/anim.out")

redis_rps() { # $1 = pipeline; about SECONDS of it at this machine's rates, as the animserver rows run
  if [ "$1" -eq 1 ]; then requests=$((SECONDS_PER_RUN * 150000)); else requests=$((SECONDS_PER_RUN * 1600000)); fi
  redis-benchmark -p "$redis_port" -t ping_inline -c 50 -P "$1" -n "$requests" -q 2>/dev/null |
    sed -n 's/.*: \([0-9.]*\) requests per second.*/\1/p' | tail -1
}
number='\([0-9.]*\)'
latencies="\"p50_us\":$number,\"p99_us\":$number,\"p999_us\":$number"
anim_fields="s/.*\"requests_per_s\":$number.*$latencies.*/\\1 \\2 \\3 \\4/p"
anim_rps() { # $1 = pipeline, $2 = mix
  "$BUILD/animctl" --port "$anim_port" --json load --connections 50 --pipeline "$1" \
    --duration "$SECONDS_PER_RUN" --mix "$2" | sed -n "$anim_fields"
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2fx", a / b }'; }

printf '%-34s %12s %10s %10s %10s %8s\n' "workload (50 connections)" "requests/s" "p50 us" "p99 us" "p99.9 us" "/redis"
for p in 1 16; do
  redis=$(redis_rps $p)
  printf '%-34s %12s\n' "redis PING_INLINE, pipeline $p" "$redis"
  set -- $(anim_rps $p ping)
  printf '%-34s %12s %10s %10s %10s %8s\n' "animserver ping, pipeline $p" "$1" "$2" "$3" "$4" "$(ratio "$1" "$redis")"
  set -- $(anim_rps $p search)
  printf '%-34s %12s %10s %10s %10s %8s\n' "animserver search k=1, pipeline $p" "$1" "$2" "$3" "$4" \
    "$(ratio "$1" "$redis")"
done
