#!/bin/sh
# Runs libFuzzer targets one after another, each for SECONDS, and prints for
# each its executions and coverage (libFuzzer's final "#N DONE cov: ... ft: ..."
# line). Usage: tests/fuzz/run.sh BUILD_DIR SECONDS TARGET...
#
# Each target starts from a scratch copy of its seed corpus,
# BUILD_DIR/corpus/TARGET, refreshed from tests/fuzz/corpus/TARGET on every
# run; new inputs are written there, never into tests/fuzz/corpus. A crash,
# leak, timeout or sanitizer report leaves its input in
# BUILD_DIR/artifacts/TARGET/ and fails the run (exit 1). One process per
# target (no -jobs/-workers: a single fuzzing process in the foreground), so
# at most one core is busy. FUZZ_ARGS adds libFuzzer flags.
set -u
build=${1:?usage: run.sh BUILD_DIR SECONDS TARGET...}
seconds=${2:?usage: run.sh BUILD_DIR SECONDS TARGET...}
shift 2
here=$(dirname "$0")
failed=""
summary=""
for target in "$@"; do
  bin="$build/$target"
  [ -x "$bin" ] || { echo "run.sh: $bin is not built" >&2; exit 2; }
  corpus="$build/corpus/$target"
  artifacts="$build/artifacts/$target"
  log="$build/$target.log"
  rm -rf "$corpus"
  mkdir -p "$corpus" "$artifacts"
  [ -d "$here/corpus/$target" ] && cp "$here/corpus/$target"/* "$corpus"/ 2>/dev/null
  dict=""
  [ -f "$here/$target.dict" ] && dict="-dict=$here/$target.dict"
  echo "== $target: ${seconds}s, corpus $(ls "$corpus" | wc -l) seeds"
  # shellcheck disable=SC2086
  "$bin" -max_total_time="$seconds" -timeout=25 -rss_limit_mb=4096 -print_final_stats=1 \
    -artifact_prefix="$artifacts/" $dict ${FUZZ_ARGS:-} "$corpus" > "$log" 2>&1
  rc=$?
  done_line=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -n 1)
  if [ $rc -ne 0 ]; then
    failed="$failed $target"
    echo "$target: FAILED (exit $rc); log $log, inputs in $artifacts/"
    grep -E 'ERROR: |SUMMARY: |runtime error|==[0-9]+==' "$log" | head -n 20
    summary="$summary$target: FAILED
"
  else
    echo "$target: $done_line"
    summary="$summary$target: $done_line
"
  fi
done
echo "fuzz summary (${seconds}s each):"
printf '%s' "$summary"
if [ -n "$failed" ]; then
  echo "fuzz: failed:$failed"
  exit 1
fi
exit 0
