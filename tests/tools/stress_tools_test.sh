#!/usr/bin/env bash
# stress_tools_test.sh CASE LETHE_STRESS LETHE_PRESSURE — runs the issue-8 tools for real:
#   stress-ci-run                    lethe-stress at CI size; checks the CSV, SVG, traces, figures
#   stress-heap-targets              the heap targets on a short run (exit 77, skipped, where the
#                                    build's malloc keeps no heap statistic)
#   stress-bad-input                 bad flags and paths: a clear message and exit 2
#   pressure-against-serving-engine  lethe-stress --serve as the engine, lethe-pressure against it
#   pressure-bad-input               bad flags, no socket: a clear message and exit 2
set -u
case_name=$1
stress=$2
pressure=$3
work=$(mktemp -d)
server_pid=
cleanup() {
  if [ -n "$server_pid" ]; then kill -TERM "$server_pid" 2>/dev/null; wait "$server_pid" 2>/dev/null; fi
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# expect_exit STATUS TEXT COMMAND... : the command exits STATUS and prints TEXT (stdout or stderr).
expect_exit() {
  local want=$1 text=$2
  shift 2
  local out status
  out=$("$@" 2>&1)
  status=$?
  [ "$status" = "$want" ] || fail "'$*' exited $status, want $want: $out"
  case "$out" in *"$text"*) ;; *) fail "'$*' did not say '$text': $out" ;; esac
}

contains() {  # contains FILE TEXT
  grep -qF -- "$2" "$1" || fail "$1 lacks '$2':
$(cat "$1")"
}

case "$case_name" in
stress-ci-run)
  out=$work/out
  # The outputs at CI size (also under the sanitizers); the heap targets are stress-heap-targets'.
  "$stress" --page-count 5 --windows 5 --cycles 3 --idle 60 --out "$out" --no-progress \
    >"$work/stdout" 2>"$work/stderr" || fail "lethe-stress exited $?: $(cat "$work/stdout" "$work/stderr")"
  if ! grep -q "^heap: not measured in this build" "$work/stdout"; then
    contains "$work/stdout" "heap: peak vs baseline peak: "
  fi
  # Regret, per cache and in total. This run decodes again surfaces it discarded moments before
  # (five windows over five pages: a page comes back some 13 s after it was shown, just after its
  # surfaces expired), so the surface cache's figures are not zero and the total adds both caches.
  awk '/^regret: surface cache: / { s = $4; sb = $(NF-5) + 0; sms = $(NF-3) + 0 }
       /^regret: image cache: / { i = $4 }
       /^regret: total over both caches: / { t = $6 }
       END { if (s == "" || i == "" || t == "" || s + 0 <= 0 || sb <= 0 || sms <= 0 || t != s + i) {
               print "surface " s " (" sb " MiB, " sms " ms), image " i ", total " t; exit 1 } }' \
    "$work/stdout" || fail "regret figures missing or trivial: $(grep '^regret' "$work/stdout")"
  contains "$work/stdout" "5 pages x 3 cycles = 15 loads through 5 windows"
  contains "$work/stdout" "baseline: peak RSS"
  contains "$work/stdout" "lethe:    peak RSS"
  contains "$work/stdout" "terminal reduction: "
  contains "$work/stdout" "peak vs baseline terminal: "
  contains "$work/stdout" "slope of lethe's RSS over cycles 2 to 3: "
  contains "$work/stdout" "(target >= 60%"
  contains "$work/stdout" "heap targets: "
  # Each run's memory report at its end (what holds the heap there).
  for run in baseline lethe; do
    gzip -dc "$out/memory-report-$run.json.gz" | grep -qF '"explicit/engine/framebuffer"' ||
      fail "memory-report-$run.json.gz is not the engine's memory report"
  done
  # Where the bundled allocator exists, the baseline ran on the system's and Lethe's on its own.
  if grep -qF "lethe_* on lethe" "$work/stdout"; then
    contains "$work/stdout" "lethe_* on system, malloc the system's"
  fi
  header="run,phase,load,cycle,time_s,windows,rss_bytes,resident_unique_bytes,heap_allocated_bytes,surface_cache_bytes,image_cache_bytes,bf_cache_bytes,font_cache_bytes,shaped_word_cache_bytes,surface_regret_count,surface_regret_bytes,surface_regret_decode_ns,image_regret_count,image_regret_bytes,regret_count,regret_bytes"
  [ "$(head -1 "$out/stress.csv")" = "$header" ] || fail "CSV header: $(head -1 "$out/stress.csv")"
  for run in baseline lethe; do
    loads=$(grep -c "^$run,load," "$out/stress.csv")
    [ "$loads" = 16 ] || fail "$run has $loads load samples, want 16 (0..15)"
    grep -q "^$run,close,15,3," "$out/stress.csv" || fail "$run has no close sample"
    idles=$(grep -c "^$run,idle," "$out/stress.csv")
    [ "$idles" = 6 ] || fail "$run has $idles idle samples, want 6 (60 s every 10 s)"
    contains "$out/trace-$run.json" '"traceEvents"'
  done
  # Every row has 21 columns and a non-zero RSS.
  awk -F, 'NR > 1 && (NF != 21 || $7 <= 0) { print "bad row " NR ": " $0; exit 1 }' "$out/stress.csv" ||
    fail "malformed CSV rows"
  [ "$(head -c 4 "$out/stress.svg")" = "<svg" ] || fail "stress.svg is not an SVG"
  contains "$out/stress.svg" "all windows but one closed"
  contains "$out/stress.svg" "page loads"
  ;;
stress-heap-targets)
  # The three targets on heap bytes, deterministic on simulated time, on a short run where the
  # comparison means something (measured: --page-count 5 --windows 5 misses them, and rightly):
  #  - 10 windows: a page's load takes about 2.7 simulated seconds, surfaces expire 10 to 20 s after
  #    they were last shown, so with 10 windows Lethe discards background windows' surfaces during
  #    the cycling (with 5, every window is shown again before its surfaces expire and Lethe holds
  #    what the baseline holds: its peak heap was above the baseline's, 48.2 vs 46.3 MiB);
  #  - 15 pages: a cycle then lasts 40.3 s, four 10 s expiry generations, so each cycle's mean
  #    samples the expiry sawtooth at the same phase (12 pages: 32 s, and the slope over two
  #    cycles read +2.6% from the sawtooth's phase alone); 4 cycles fit the slope over three;
  #  - 300 s of idle (the default): unreferenced compressed bytes expire 60 to 120 s after their
  #    last use (after 60 s Lethe's terminal heap still held them: 49% reduction at 5 pages).
  # What Lethe's terminal heap holds (memory-report-lethe.json.gz, 6.3 MiB at 5 pages): the
  # framebuffer (3.0 MiB), the open page's DOM (1.1), its visible surfaces (1.0), compressed bytes
  # (0.6) and the engine's trace (0.4); the baseline's adds the page's other surfaces and every
  # page's compressed bytes.
  # On heap bytes Lethe's peak is judged against the baseline's peak, not its terminal: at its peak
  # Lethe has every window open and the baseline's terminal has one (the peak-vs-terminal target
  # is RSS's, where the system allocator keeps the baseline's freed peak resident).
  "$stress" --page-count 1 --windows 1 --cycles 1 --idle 0 --out "$work/probe" --no-progress \
    >"$work/probe.out" 2>&1 || fail "the probe run exited $?: $(cat "$work/probe.out")"
  if grep -q "^heap: not measured in this build" "$work/probe.out"; then
    echo "heap figures not measured in this build (a sanitizer's malloc): skipped"
    exit 77
  fi
  "$stress" --page-count 15 --windows 10 --cycles 4 --idle 300 --out "$work/out" --no-progress \
    --require-heap-targets >"$work/stdout" 2>"$work/stderr" ||
    fail "lethe-stress exited $? (a heap target missed?): $(cat "$work/stdout" "$work/stderr")"
  contains "$work/stdout" "15 pages x 4 cycles = 60 loads through 10 windows"
  # Each figure read back and judged here too, so that a wrong verdict in the tool cannot pass.
  awk '/^heap: terminal reduction: / { r = $4 + 0; n++ }
       /^heap: peak vs baseline peak: / { p = $6 + 0; n++ }
       /^heap: slope of lethe.s heap over cycles 2 to 4: / { s = $11 + 0; n++ }
       END { if (n != 3 || r < 60 || p <= 0 || p >= 1 || s >= 1) {
               print "reduction " r "%, peak/baseline peak " p ", slope " s "%/cycle (" n " lines)"; exit 1 } }' \
    "$work/stdout" || fail "heap targets: $(grep '^heap' "$work/stdout")"
  contains "$work/stdout" "heap targets: all met"
  ;;
stress-bad-input)
  expect_exit 2 "unknown flag '--bogus'" "$stress" --bogus
  expect_exit 2 "--windows needs a whole number" "$stress" --windows none
  expect_exit 2 "is not a directory" "$stress" --pages "$work/missing"
  mkdir "$work/empty"
  expect_exit 2 "no pages" "$stress" --pages "$work/empty" --out "$work/o"
  expect_exit 2 "control socket" "$stress" --serve "$work/no/such/dir/engine.sock" --page-count 1
  echo '{"title": "bad", "items": 3}' >"$work/empty/bad.json"
  expect_exit 2 "bad.json" "$stress" --pages "$work/empty" --page-count 1 --windows 1 --cycles 1 \
    --idle 0 --out "$work/o" --no-progress
  ;;
pressure-against-serving-engine)
  sock=$work/engine.sock
  mkfifo "$work/ready"
  "$stress" --serve "$sock" --page-count 5 --windows 5 --churn-ms 3000 --pressure-ongoing-ms 100 \
    >"$work/ready" 2>"$work/serve.err" &
  server_pid=$!
  # Blocks until the engine says it serves (or exits: then the read fails).
  read -r line <"$work/ready" || fail "the engine did not start: $(cat "$work/serve.err")"
  case "$line" in "serving $sock"*) ;; *) fail "unexpected first line: $line" ;; esac
  "$pressure" --socket "$sock" --trials 2 --interval-ms 200 >"$work/p.out" 2>&1 ||
    fail "lethe-pressure exited $?: $(cat "$work/p.out")"
  contains "$work/p.out" "engine pid $server_pid on $sock"
  contains "$work/p.out" "trial 2:"
  contains "$work/p.out" "median of 2"
  # The first trial found the background windows' surfaces unlocked and measured what came back.
  contains "$work/p.out" "returned share of unlocked bytes: "
  if grep -q "returned share of unlocked bytes: n/a" "$work/p.out"; then fail "nothing was unlocked: $(cat "$work/p.out")"; fi
  contains "$work/p.out" "median round trip"
  "$pressure" --socket "$sock" --level moderate --trials 1 >"$work/m.out" 2>&1 ||
    fail "moderate exited $?: $(cat "$work/m.out")"
  contains "$work/m.out" "1 moderate trial(s)"
  CI=true expect_exit 2 "refuses to run in CI" "$pressure" --socket "$sock" --squeeze
  kill -TERM "$server_pid"
  wait "$server_pid"
  status=$?
  server_pid=
  [ "$status" = 0 ] || fail "the engine exited $status on SIGTERM: $(cat "$work/serve.err")"
  [ ! -e "$sock" ] || fail "the engine left its socket behind"
  # Now the socket is gone: a clear message and exit 2.
  expect_exit 2 "no control socket" "$pressure" --socket "$sock"
  # An engine that dies leaves a dead socket behind: "connection refused" and exit 2.
  "$stress" --serve "$sock" --page-count 1 --windows 1 >"$work/ready" 2>"$work/serve.err" &
  server_pid=$!
  read -r line <"$work/ready" || fail "the second engine did not start: $(cat "$work/serve.err")"
  kill -KILL "$server_pid"
  wait "$server_pid" 2>/dev/null
  server_pid=
  [ -S "$sock" ] || fail "a killed engine should leave its socket file"
  expect_exit 2 "connection refused" "$pressure" --socket "$sock"
  ;;
pressure-bad-input)
  expect_exit 2 "unknown flag '--bogus'" "$pressure" --socket x --bogus 1
  expect_exit 2 "--socket PATH is required" "$pressure"
  expect_exit 2 "--trials needs a whole number" "$pressure" --socket x --trials 0
  expect_exit 2 "--level needs 'moderate' or 'critical'" "$pressure" --socket x --level high
  expect_exit 2 "no control socket at $work/none.sock" "$pressure" --socket "$work/none.sock"
  ;;
*)
  fail "unknown case $case_name"
  ;;
esac
echo "ok: $case_name"
