#!/bin/sh
# Runs every test program in $BUILD/tests (cmocka binaries) and every
# tests/interop/*.py against the real server; prints each one's output and a
# closing line "tests: N passed, N failed, N skipped" (counted per test case).
# Exit status 1 when anything failed.
set -u
BUILD=${BUILD:-build}
SHARED_DIR=${SHARED_DIR:-../shared}
export ANIM_BUILD_DIR="$BUILD"
export ANIM_SHARED_DIR="$SHARED_DIR"
passed=0 failed=0 skipped=0 broken=""
log="$BUILD/tests/last-run.log"
mkdir -p "$BUILD/tests"
: > "$log"

count() { # $1 = label regex; sums N over "[  LABEL ] N test(s)" lines of $2
  sed -n "s/^\[  *$1  *\] \([0-9][0-9]*\) test(s).*/\1/p" "$2" | awk '{s += $1} END {print s + 0}'
}

for t in "$BUILD"/tests/test_*; do
  [ -x "$t" ] || continue
  case "$t" in *.log|*.d|*.o) continue ;; esac
  out="$t.out"
  echo "== $(basename "$t")"
  "$t" > "$out" 2>&1
  rc=$?
  cat "$out"; cat "$out" >> "$log"
  p=$(count PASSED "$out"); f=$(count FAILED "$out"); s=$(count SKIPPED "$out")
  passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + s))
  if [ $rc -ne 0 ] && [ "$f" -eq 0 ]; then
    failed=$((failed + 1)); broken="$broken $(basename "$t")(exit $rc)"
  fi
done

for py in tests/interop/*.py; do
  [ -f "$py" ] || continue
  echo "== $py"
  if /usr/bin/python3 "$py"; then passed=$((passed + 1)); else failed=$((failed + 1)); broken="$broken $py"; fi
done

[ -n "$broken" ] && echo "crashed or failed outside cmocka:$broken"
echo "tests: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
