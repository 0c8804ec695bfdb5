#!/usr/bin/env bash
# Builds Lethe and runs its tests: the default preset (bundled allocator, RelWithDebInfo), then the
# asan preset (ASan + UBSan, lethe_* forwarded to the system malloc; the allocator's own tests and
# the install/consumer tests are excluded there, see tests/CMakeLists.txt), then every layer's tests
# under ThreadSanitizer with the bundled allocator behind lethe_* (tsan-alloc), then the fuzzers.
# Installs missing Debian packages first (as root). Prints the seconds each stage took.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source tools/deps.sh

usage() {
  cat <<USAGE
usage: tools/test.sh [--no-asan] [--no-tsan] [--no-fuzz] [--jobs N]
  Installs missing packages (root), builds the default, asan and tsan-alloc presets, runs their
  tests and the fuzzers, and prints a summary with the seconds of each stage.
  --no-asan    skip the asan preset
  --no-tsan    skip the tsan-alloc preset (the tests under ThreadSanitizer, the bundled allocator in use)
  --no-fuzz    skip the fuzz preset
  --jobs N     parallel build and test jobs (default: number of cores)
USAGE
}

run_asan=1
run_tsan=1
run_fuzz=1
jobs=$(nproc)
while [ $# -gt 0 ]; do
  case "$1" in
    --no-asan) run_asan=0 ;;
    --no-tsan) run_tsan=0 ;;
    --no-fuzz) run_fuzz=0 ;;
    --jobs) [ $# -ge 2 ] && [[ "$2" =~ ^[0-9]+$ ]] || { usage >&2; exit 2; }; jobs=$2; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "tools/test.sh: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
  shift
done

stage_names=()
stage_seconds=()
passed_total=0
failed_total=0

stage() {  # stage NAME COMMAND...: runs and times one stage
  local name=$1; shift
  local start=$SECONDS
  echo "== $name"
  "$@"
  stage_names+=("$name")
  stage_seconds+=($((SECONDS - start)))
}

run_tests() {  # run_tests PRESET: ctest, then adds its counts to the totals
  local preset=$1 log
  log=$(mktemp)
  local status=0
  ctest --preset "$preset" -j "$jobs" 2>&1 | tee "$log" || status=$?
  local summary
  summary=$(grep -E '[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$log" | tail -n 1 || true)
  rm -f "$log"
  if [ -n "$summary" ]; then
    local failed total
    failed=$(sed -E 's/.* ([0-9]+) tests? failed out of ([0-9]+).*/\1/' <<<"$summary")
    total=$(sed -E 's/.* failed out of ([0-9]+).*/\1/' <<<"$summary")
    passed_total=$((passed_total + total - failed))
    failed_total=$((failed_total + failed))
  fi
  [ "$status" -eq 0 ] || { report; echo "tests failed in preset $preset" >&2; exit 1; }
}

report() {
  echo
  echo "== stages (seconds)"
  for i in "${!stage_names[@]}"; do printf '  %-24s %5d\n' "${stage_names[$i]}" "${stage_seconds[$i]}"; done
  printf '  %-24s %5d\n' "total" "$SECONDS"
  echo "tests: $passed_total passed, $failed_total failed"
}

stage install lethe_install_dependencies
stage "configure default" cmake --preset default >/dev/null
stage "build default" cmake --build --preset default -j "$jobs"
stage "test default" run_tests default
if [ "$run_asan" -eq 1 ]; then
  stage "configure asan" cmake --preset asan >/dev/null
  stage "build asan" cmake --build --preset asan -j "$jobs"
  stage "test asan" run_tests asan
fi
if [ "$run_tsan" -eq 1 ]; then
  stage "configure tsan-alloc" cmake --preset tsan-alloc >/dev/null
  stage "build tsan-alloc" cmake --build --preset tsan-alloc -j "$jobs"
  stage "test tsan-alloc" run_tests tsan-alloc
fi
if [ "$run_fuzz" -eq 1 ] && [ -f tests/fuzz/CMakeLists.txt ]; then
  stage "configure fuzz" cmake --preset fuzz >/dev/null
  stage "build fuzz" cmake --build --preset fuzz -j "$jobs" --target lethe_fuzz_all
  stage "run fuzzers" tools/run_fuzzers.sh build/fuzz
fi
report
