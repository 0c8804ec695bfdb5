#!/usr/bin/env bash
# Runs every libFuzzer target of a fuzz build: run_fuzzers.sh BUILD_DIR [SECONDS]
#
# Seeds come from lethe_fuzz_seeds (images made by the encoders); each target runs SECONDS
# (default 20) with -timeout=5 -rss_limit_mb=2048, two at a time. Fails (exit 1) when any target
# reports a crash, leak, timeout or out-of-memory; the reproducer stays in BUILD_DIR/fuzz-runs/.
set -euo pipefail

usage() { echo "usage: tools/run_fuzzers.sh BUILD_DIR [SECONDS]" >&2; exit 2; }
[ $# -ge 1 ] && [ $# -le 2 ] || usage
build=$1
seconds=${2:-20}
[[ "$seconds" =~ ^[0-9]+$ ]] || usage
fuzz_dir="$build/tests/fuzz"
[ -x "$fuzz_dir/lethe_fuzz_seeds" ] || { echo "run_fuzzers: no fuzz build in $build" >&2; exit 1; }

runs="$build/fuzz-runs"
rm -rf "$runs"
mkdir -p "$runs"
"$fuzz_dir/lethe_fuzz_seeds" "$runs/seeds"

targets=()
for binary in "$fuzz_dir"/fuzz_*; do
  [ -x "$binary" ] && targets+=("$(basename "$binary")")
done
[ ${#targets[@]} -gt 0 ] || { echo "run_fuzzers: no targets in $fuzz_dir" >&2; exit 1; }

run_one() {  # run_one TARGET: fuzz it; the log goes to $runs/TARGET.log
  local target=$1
  mkdir -p "$runs/$target/corpus" "$runs/$target/artifacts" "$runs/seeds/$target"
  "$fuzz_dir/$target" -max_total_time="$seconds" -timeout=5 -rss_limit_mb=2048 \
    -artifact_prefix="$runs/$target/artifacts/" -print_final_stats=1 \
    "$runs/$target/corpus" "$runs/seeds/$target" >"$runs/$target.log" 2>&1
}

failed=0
pids=()
names=()
wait_batch() {
  for i in "${!pids[@]}"; do
    if wait "${pids[$i]}"; then
      runs_done=$(grep -Eo 'stat::number_of_executed_units: *[0-9]+' "$runs/${names[$i]}.log" | grep -Eo '[0-9]+$' || echo '?')
      echo "  ${names[$i]}: ok ($runs_done runs)"
    else
      echo "  ${names[$i]}: FAILED (see $runs/${names[$i]}.log)"
      grep -E 'ERROR:|SUMMARY:' "$runs/${names[$i]}.log" | head -n 5 | sed 's/^/    /'
      failed=1
    fi
  done
  pids=()
  names=()
}

echo "fuzzing ${#targets[@]} targets for ${seconds}s each, two at a time"
for target in "${targets[@]}"; do
  run_one "$target" &
  pids+=($!)
  names+=("$target")
  [ ${#pids[@]} -lt 2 ] || wait_batch
done
[ ${#pids[@]} -eq 0 ] || wait_batch
exit "$failed"
