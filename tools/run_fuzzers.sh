#!/usr/bin/env bash
# Runs every libFuzzer target of a fuzz build, in one of two modes:
#
#   run_fuzzers.sh BUILD_DIR [SECONDS]          the CI run (tools/test.sh): SECONDS (default 20) per
#                                               target, seeds from lethe_fuzz_seeds (images made by
#                                               the encoders), a fresh BUILD_DIR/fuzz-runs/ each time.
#   run_fuzzers.sh --campaign SECONDS [BUILD_DIR]  a long campaign: SECONDS per target, seeded also
#                                               from the shared corpus of real images (../shared/corpus
#                                               beside the checkout, or --corpus DIR); the corpus each
#                                               target grows is kept in BUILD_DIR/fuzz-campaign/ so that
#                                               the next campaign resumes from it. BUILD_DIR defaults
#                                               to build/fuzz. The targets' pixel cap is 64 Kpx there
#                                               (--max-pixels; 1 Mpx in CI): see tests/fuzz/fuzz_limits.h.
#
# Every target runs with -rss_limit_mb=2048 and a time limit per input (-timeout, wall clock: 5 s,
# or 30 s in a campaign, which may run niced on a shared machine where 1 s of CPU can take 6), two at
# a time (--parallel). The executions of each target are printed as it ends. Exits 1 when any target reports a crash, leak, timeout or out-of-memory;
# the reproducer stays in the target's artifacts/ folder and its log beside it.
set -euo pipefail

checkout=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

usage() {
  cat <<USAGE
usage: tools/run_fuzzers.sh BUILD_DIR [SECONDS]
       tools/run_fuzzers.sh --campaign SECONDS [--corpus DIR] [--targets T1,T2] [--max-len BYTES]
                            [--max-pixels N] [--runs N] [--parallel N]
                            [BUILD_DIR]
  BUILD_DIR       a fuzz build (cmake --preset fuzz; default for --campaign: build/fuzz)
  SECONDS         seconds per target (default 20)
  --campaign S    run every target S seconds, seeded from the shared corpus too, keeping the corpus
                  each target grows in BUILD_DIR/fuzz-campaign/ for the next campaign
  --corpus DIR    the shared corpus (default: ../shared/corpus beside the checkout)
  --targets LIST  only these targets (comma-separated, e.g. fuzz_png,fuzz_gif)
  --max-len N     longest input libFuzzer makes, in bytes (campaign default 65536: real files are
                  larger, and a campaign wants executions; longer seeds are read truncated)
  --timeout S     wall-clock seconds one input may take (default 5; campaign 30)
  --max-pixels N  the targets' largest image, in pixels (256 to 1048576; default 1048576, campaign
                  65536: a campaign's corpus grows inputs that compose a megapixel canvas twenty
                  times in a few KiB, each as slow as a thousand small ones)
  --runs N        stop a target after N executions (or its SECONDS, whichever comes first)
  --parallel N    targets fuzzed at once (default 2)
USAGE
}
bad_usage() { echo "run_fuzzers: $1" >&2; usage >&2; exit 2; }

campaign=0
seconds=20
build=""
corpus="$checkout/../shared/corpus"
only=""
max_len=""
timeout=""
max_pixels=""
runs_limit=""
parallel=2
positional=()
while [ $# -gt 0 ]; do
  case "$1" in
    -h|--help) usage; exit 0 ;;
    --campaign)
      [ $# -ge 2 ] && [[ "$2" =~ ^[0-9]+$ ]] || bad_usage "--campaign needs SECONDS"
      campaign=1; seconds=$2; shift ;;
    --corpus) [ $# -ge 2 ] || bad_usage "--corpus needs a folder"; corpus=$2; shift ;;
    --targets) [ $# -ge 2 ] || bad_usage "--targets needs a list"; only=",$2,"; shift ;;
    --max-len)
      [ $# -ge 2 ] && [[ "$2" =~ ^[0-9]+$ ]] || bad_usage "--max-len needs BYTES"
      max_len=$2; shift ;;
    --timeout)
      [ $# -ge 2 ] && [[ "$2" =~ ^[1-9][0-9]*$ ]] || bad_usage "--timeout needs SECONDS"
      timeout=$2; shift ;;
    --max-pixels)
      [ $# -ge 2 ] && [[ "$2" =~ ^[0-9]+$ ]] && [ "$2" -ge 256 ] && [ "$2" -le 1048576 ] \
        || bad_usage "--max-pixels needs a count from 256 to 1048576"
      max_pixels=$2; shift ;;
    --runs)
      [ $# -ge 2 ] && [[ "$2" =~ ^[1-9][0-9]*$ ]] || bad_usage "--runs needs a count"
      runs_limit=$2; shift ;;
    --parallel)
      [ $# -ge 2 ] && [[ "$2" =~ ^[1-9]$ ]] || bad_usage "--parallel needs 1 to 9"
      parallel=$2; shift ;;
    -*) bad_usage "unknown flag '$1'" ;;
    *) positional+=("$1") ;;
  esac
  shift
done

if [ "$campaign" -eq 1 ]; then
  [ ${#positional[@]} -le 1 ] || bad_usage "too many arguments"
  build=${positional[0]:-$checkout/build/fuzz}
  max_len=${max_len:-65536}
  timeout=${timeout:-30}
  max_pixels=${max_pixels:-65536}
  [ -d "$corpus" ] || { echo "run_fuzzers: no shared corpus at $corpus (--corpus DIR)" >&2; exit 1; }
else
  [ ${#positional[@]} -ge 1 ] && [ ${#positional[@]} -le 2 ] || bad_usage "BUILD_DIR is required"
  build=${positional[0]}
  seconds=${positional[1]:-20}
  [[ "$seconds" =~ ^[0-9]+$ ]] || bad_usage "SECONDS must be a number"
fi
timeout=${timeout:-5}
max_pixels=${max_pixels:-1048576}
export LETHE_FUZZ_MAX_PIXELS=$max_pixels
fuzz_dir="$build/tests/fuzz"
[ -x "$fuzz_dir/lethe_fuzz_seeds" ] || { echo "run_fuzzers: no fuzz build in $build" >&2; exit 1; }

if [ "$campaign" -eq 1 ]; then
  runs="$build/fuzz-campaign"
  rm -rf "$runs/seeds" "$runs/shared"
else
  runs="$build/fuzz-runs"
  rm -rf "$runs"
fi
mkdir -p "$runs"
"$fuzz_dir/lethe_fuzz_seeds" "$runs/seeds"

targets=()
for binary in "$fuzz_dir"/fuzz_*; do
  name=$(basename "$binary")
  [ -x "$binary" ] || continue
  [ -z "$only" ] || [[ "$only" == *",$name,"* ]] || continue
  targets+=("$name")
done
[ ${#targets[@]} -gt 0 ] || { echo "run_fuzzers: no targets in $fuzz_dir" >&2; exit 1; }

# shared_folders TARGET: the shared corpus's folders that hold this target's kind of input.
shared_folders() {
  case "$1" in
    fuzz_png) echo "valid/png malformed/png" ;;
    fuzz_jpeg) echo "valid/jpeg malformed/jpeg" ;;
    fuzz_gif|fuzz_compose) echo "valid/gif malformed/gif animated/gif" ;;
    fuzz_probe) echo "valid/png valid/jpeg valid/gif malformed/png malformed/jpeg malformed/gif" ;;
    *) echo "" ;;
  esac
}

# copy_shared TARGET: copies the shared corpus's files for TARGET into $runs/shared/TARGET;
# fuzz_compose reads 8 control bytes before the GIF, so its copies get the prefix its own seeds use.
copy_shared() {
  local target=$1 out="$runs/shared/$1" folder file
  mkdir -p "$out"
  for folder in $(shared_folders "$target"); do
    [ -d "$corpus/$folder" ] || continue
    for file in "$corpus/$folder"/*; do
      [ -f "$file" ] || continue
      if [ "$target" = fuzz_compose ]; then
        { printf '\x40\x0a\x02\x00\x80\x81\x55\x00'; cat "$file"; } >"$out/$(basename "$file")"
      else
        cp "$file" "$out/"
      fi
    done
  done
}

run_one() {  # run_one TARGET: fuzz it; the log goes to $runs/TARGET.log
  local target=$1 extra=()
  mkdir -p "$runs/$target/corpus" "$runs/$target/artifacts" "$runs/seeds/$target"
  local inputs=("$runs/$target/corpus" "$runs/seeds/$target")
  if [ "$campaign" -eq 1 ]; then
    copy_shared "$target"
    inputs+=("$runs/shared/$target")
  fi
  [ -z "$max_len" ] || extra+=("-max_len=$max_len")
  [ -z "$runs_limit" ] || extra+=("-runs=$runs_limit")
  "$fuzz_dir/$target" -max_total_time="$seconds" -timeout="$timeout" -rss_limit_mb=2048 \
    -artifact_prefix="$runs/$target/artifacts/" -print_final_stats=1 "${extra[@]}" \
    "${inputs[@]}" >"$runs/$target.log" 2>&1
}

# A target whose code under test lacks coverage instrumentation loads only its own file's few
# dozen counters: it runs, but mutates blind. Below this it fails.
min_counters=500
counters() {  # counters TARGET: the inline 8-bit counters libFuzzer loaded, or 0
  grep -Eo '\(([0-9]+) inline 8-bit counters\)' "$runs/$1.log" | grep -Eo '[0-9]+' | head -n 1 \
    || echo 0
}

executions() {  # executions TARGET: the executions its log reports, or ?
  grep -Eo 'stat::number_of_executed_units: *[0-9]+' "$runs/$1.log" | grep -Eo '[0-9]+$' || echo '?'
}

failed=0
pids=()
names=()
wait_batch() {
  for i in "${!pids[@]}"; do
    local name=${names[$i]}
    if wait "${pids[$i]}"; then
      local rate edges
      rate=$(grep -Eo 'stat::average_exec_per_sec: *[0-9]+' "$runs/$name.log" | grep -Eo '[0-9]+$' \
             || echo '?')
      edges=$(counters "$name")
      if [ "$edges" -lt "$min_counters" ]; then
        echo "  $name: FAILED: only $edges coverage counters (is the code under test built with"
        echo "    -fsanitize=fuzzer-no-link?); $(executions "$name") blind runs"
        failed=1
      else
        echo "  $name: ok ($(executions "$name") runs, $rate per second, $edges counters)"
      fi
    else
      echo "  $name: FAILED after $(executions "$name") runs (see $runs/$name.log)"
      grep -E 'ERROR:|SUMMARY:|Test unit written' "$runs/$name.log" | head -n 6 | sed 's/^/    /'
      failed=1
    fi
  done
  pids=()
  names=()
}

mode=""
[ "$campaign" -eq 0 ] || mode=" (campaign, corpus kept in $runs)"
mode="$mode, images up to $max_pixels pixels"
echo "fuzzing ${#targets[@]} targets for ${seconds}s each${runs_limit:+ or $runs_limit runs}, $parallel at a time$mode"
for target in "${targets[@]}"; do
  run_one "$target" &
  pids+=($!)
  names+=("$target")
  [ ${#pids[@]} -lt "$parallel" ] || wait_batch
done
[ ${#pids[@]} -eq 0 ] || wait_batch
exit "$failed"
