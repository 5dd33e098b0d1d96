#!/bin/sh
# Ping and single-search throughput of animserver next to Redis PING, measured
# in the same run on the same machine (loopback, 50 connections, pipelining 1
# and 16). Starts and stops its own redis-server and animserver. Each
# animserver row ends with its ratio to the Redis row just above it (the
# issue's targets at pipeline 16: ping >= 1.0x, search >= 0.5x).
# Beside the wall-clock figures, each server's CPU per request (user plus
# system time of its process, /proc/<pid>/stat, over the requests it
# answered), and its ratio to Redis's CPU per PING_INLINE in the same run:
# issue 35's targets (pipeline 16: ping at most 1x, search k=1 at most 2x),
# which a machine shared with other work does not move as it moves the
# wall-clock rates.
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

# CPU seconds (user + system) of process $1 so far.
cpu_s() {
  awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); print ($12 + $13) / hz }' "/proc/$1/stat"
}
# Microseconds of CPU per request: $1, $2 CPU seconds before and after, $3 requests.
cpu_us() { awk -v a="$1" -v b="$2" -v n="$3" 'BEGIN { if (n > 0) printf "%.3f", (b - a) * 1e6 / n }'; }

redis_rps() { # $1 = pipeline; about SECONDS of it at this machine's rates, as the animserver rows run
  if [ "$1" -eq 1 ]; then requests=$((SECONDS_PER_RUN * 150000)); else requests=$((SECONDS_PER_RUN * 1600000)); fi
  before=$(cpu_s "$redis_pid")
  rps=$(redis-benchmark -p "$redis_port" -t ping_inline -c 50 -P "$1" -n "$requests" -q 2>/dev/null |
    sed -n 's/.*: \([0-9.]*\) requests per second.*/\1/p' | tail -1)
  echo "$rps $(cpu_us "$before" "$(cpu_s "$redis_pid")" "$requests")"
}
number='\([0-9.]*\)'
latencies="\"p50_us\":$number,\"p99_us\":$number,\"p999_us\":$number"
anim_fields="s/.*\"requests\":\([0-9]*\).*\"requests_per_s\":$number.*$latencies.*/\\2 \\3 \\4 \\5 \\1/p"
anim_rps() { # $1 = pipeline, $2 = mix: requests/s, p50, p99, p99.9, CPU us a request
  before=$(cpu_s "$anim_pid")
  set -- $("$BUILD/animctl" --port "$anim_port" --json load --connections 50 --pipeline "$1" \
    --duration "$SECONDS_PER_RUN" --mix "$2" | sed -n "$anim_fields")
  echo "$1 $2 $3 $4 $(cpu_us "$before" "$(cpu_s "$anim_pid")" "$5")"
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2fx", a / b }'; }

printf '%-34s %12s %10s %10s %10s %8s %9s %8s\n' "workload (50 connections)" "requests/s" "p50 us" "p99 us" "p99.9 us" \
  "/redis" "CPU us/rq" "/redis"
for p in 1 16; do
  set -- $(redis_rps $p)
  redis=$1 redis_cpu=$2
  printf '%-34s %12s %10s %10s %10s %8s %9s\n' "redis PING_INLINE, pipeline $p" "$redis" "" "" "" "" "$redis_cpu"
  for mix in ping search; do
    set -- $(anim_rps $p $mix)
    name="animserver $mix, pipeline $p"
    [ "$mix" = search ] && name="animserver search k=1, pipeline $p"
    printf '%-34s %12s %10s %10s %10s %8s %9s %8s\n' "$name" "$1" "$2" "$3" "$4" "$(ratio "$1" "$redis")" "$5" \
      "$(ratio "$5" "$redis_cpu")"
  done
done
