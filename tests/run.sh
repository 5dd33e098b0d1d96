#!/bin/sh
# Runs every test program in $BUILD/tests (cmocka binaries) and every
# tests/interop/*.py against the real server; prints each one's output and a
# closing line "tests: N passed, N failed, N skipped" (counted per test case).
# Each program's wall seconds follow its output ("-- test_x: 12 s"), and the
# ten slowest and the total come before the closing line, so where the
# suite's time goes is visible in every run (a slow test is one to look at
# for idle waits, never for a weaker check). Exit status 1 when anything
# failed.
set -u
BUILD=${BUILD:-build}
SHARED_DIR=${SHARED_DIR:-../shared}
export ANIM_BUILD_DIR="$BUILD"
export ANIM_SHARED_DIR="$SHARED_DIR"
passed=0 failed=0 skipped=0 broken=""
log="$BUILD/tests/last-run.log"
times="$BUILD/tests/last-run.times" # "seconds name" per program
mkdir -p "$BUILD/tests"
: > "$log"
: > "$times"
suite_start=$(date +%s)

took() { # $1 = name, $2 = start (s since the epoch): prints and records the wall seconds since
  s=$(($(date +%s) - $2))
  echo "-- $1: $s s"
  echo "$s $1" >> "$times"
}

count() { # $1 = label regex; sums N over "[  LABEL ] N test(s)" lines of $2
  sed -n "s/^\[  *$1  *\] \([0-9][0-9]*\) test(s).*/\1/p" "$2" | awk '{s += $1} END {print s + 0}'
}

for t in "$BUILD"/tests/test_*; do
  [ -x "$t" ] || continue
  case "$t" in *.log|*.d|*.o) continue ;; esac
  out="$t.out"
  echo "== $(basename "$t")"
  start=$(date +%s)
  "$t" > "$out" 2>&1
  rc=$?
  cat "$out"; cat "$out" >> "$log"
  took "$(basename "$t")" "$start"
  p=$(count PASSED "$out"); f=$(count FAILED "$out"); s=$(count SKIPPED "$out")
  passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + s))
  if [ $rc -ne 0 ] && [ "$f" -eq 0 ]; then
    failed=$((failed + 1)); broken="$broken $(basename "$t")(exit $rc)"
  fi
done

for py in tests/interop/*.py; do
  [ -f "$py" ] || continue
  echo "== $py"
  start=$(date +%s)
  if /usr/bin/python3 "$py"; then passed=$((passed + 1)); else failed=$((failed + 1)); broken="$broken $py"; fi
  took "$py" "$start"
done

echo "slowest (wall seconds; all in $times):"
sort -rn "$times" | head -10 | sed 's/^/  /'
echo "suite: $(($(date +%s) - suite_start)) s"

[ -n "$broken" ] && echo "crashed or failed outside cmocka:$broken"
echo "tests: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
