# cmake -P: records `lethe-alloc-workload pairs 1000` and `reallocs 3000` (WORKLOAD) with the trace
# shim (SHIM), compiles the raw traces and replays them; then the failure paths: a file that is not
# a raw trace, one that is not a compiled trace, a truncated one, and one whose operations
# contradict each other; the replay's statistics (ALLOC_WORKLOAD_STATS) and its settled RSS
# (SETTLE_MS), and bad SETTLE_MS values. DIR is a scratch folder.
file(REMOVE_RECURSE ${DIR})
file(MAKE_DIRECTORY ${DIR}/raw)
include(${CMAKE_CURRENT_LIST_DIR}/run_expecting.cmake)

run(0 ${CMAKE_COMMAND} -E env LETHE_ALLOC_TRACE_DIR=${DIR}/raw LD_PRELOAD=${SHIM} ${WORKLOAD} pairs 1000)
file(GLOB raws ${DIR}/raw/*.raw)
list(LENGTH raws raw_count)
if(NOT raw_count EQUAL 1)
  message(FATAL_ERROR "expected one raw trace, found: ${raws}")
endif()
run(0 ${WORKLOAD} compile-trace ${DIR}/pairs.trace ${raws})
# 1000 pairs over 64 live slots: at least 2000 operations, at most 64 + a few slots, nothing dropped.
if(NOT out MATCHES "^ops=([0-9]+) slots=([0-9]+) dropped=0 threads=1\n$")
  message(FATAL_ERROR "unexpected compile line: ${out}")
endif()
set(ops ${CMAKE_MATCH_1})
if(ops LESS 2000 OR CMAKE_MATCH_2 LESS 64 OR CMAKE_MATCH_2 GREATER 200)
  message(FATAL_ERROR "the trace misses the pairs: ${out}")
endif()
run(0 ${WORKLOAD} replay ${DIR}/pairs.trace)
if(NOT out MATCHES "^ms=[0-9.]+ exit_rss_kb=[0-9]+ exit_anon_kb=[0-9]+ peak_kb=[0-9]+ minflt=-?[0-9]+ ops=${ops} slots=")
  message(FATAL_ERROR "unexpected replay line: ${out}")
endif()
# ALLOC_WORKLOAD_STATS=1: the same line, then the allocator's own view (malloc_stats, on stderr).
execute_process(COMMAND ${CMAKE_COMMAND} -E env ALLOC_WORKLOAD_STATS=1 ${WORKLOAD} replay ${DIR}/pairs.trace
                RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT status EQUAL 0 OR NOT out MATCHES "^ms=[0-9.]+ exit_rss_kb=" OR err STREQUAL "")
  message(FATAL_ERROR "replay with ALLOC_WORKLOAD_STATS=1: exit ${status}\n${out}${err}")
endif()

# With SETTLE_MS: the same line, then the RSS read again after that long. A SETTLE_MS that is not
# 1..60000 is a usage error.
run(0 ${WORKLOAD} replay ${DIR}/pairs.trace 20)
if(NOT out MATCHES "^ms=[0-9.]+ exit_rss_kb=[0-9]+ .*\nsettled_rss_kb=[1-9][0-9]* settled_anon_kb=[0-9]+\n$")
  message(FATAL_ERROR "replay with SETTLE_MS 20: ${out}")
endif()
foreach(bad 0 60001 20ms -5)
  run(2 ${WORKLOAD} replay ${DIR}/pairs.trace ${bad})
  if(NOT out MATCHES "usage: .*replay TRACE \\[SETTLE_MS\\]")
    message(FATAL_ERROR "replay with SETTLE_MS ${bad}: ${out}")
  endif()
endforeach()

# A trace with reallocs (moving and in place), callocs and frees: it compiles with nothing dropped,
# and the replay's own check accepts it (every allocation into a free slot, every free and realloc
# on a live one). Compiled with a slot left free behind a realloc, it fails that check.
file(MAKE_DIRECTORY ${DIR}/raw-reallocs)
run(0 ${CMAKE_COMMAND} -E env LETHE_ALLOC_TRACE_DIR=${DIR}/raw-reallocs LD_PRELOAD=${SHIM} ${WORKLOAD} reallocs 3000)
file(GLOB realloc_raws ${DIR}/raw-reallocs/*.raw)
run(0 ${WORKLOAD} compile-trace ${DIR}/reallocs.trace ${realloc_raws})
if(NOT out MATCHES "^ops=([0-9]+) slots=([0-9]+) dropped=0 threads=1\n$" OR CMAKE_MATCH_1 LESS 3000
   OR CMAKE_MATCH_2 LESS 32 OR CMAKE_MATCH_2 GREATER 64)
  message(FATAL_ERROR "the reallocs trace: ${out}")
endif()
run(0 ${WORKLOAD} replay ${DIR}/reallocs.trace)

# Failure paths: each names the file and exits 1, and a failed compile leaves no output file.
run(1 ${WORKLOAD} compile-trace ${DIR}/bad.trace ${DIR}/pairs.trace)
if(NOT out MATCHES "is not a raw allocation trace" OR EXISTS ${DIR}/bad.trace)
  message(FATAL_ERROR "compiling a compiled trace: ${out}")
endif()
# replay_fails(FILE PATTERN): replaying FILE exits 1 with a message matching PATTERN.
function(replay_fails file pattern)
  run(1 ${WORKLOAD} replay ${file})
  if(NOT out MATCHES "${pattern}")
    message(FATAL_ERROR "replaying ${file}: expected '${pattern}', got: ${out}")
  endif()
endfunction()
replay_fails(${raws} "is not a compiled trace")
file(SIZE ${DIR}/pairs.trace size)
math(EXPR cut "${size} - 10")
execute_process(COMMAND head -c ${cut} ${DIR}/pairs.trace OUTPUT_FILE ${DIR}/cut.trace)
replay_fails(${DIR}/cut.trace "truncated or corrupt")
replay_fails(${DIR}/missing.trace "cannot open .*missing.trace")
# The pairs trace with its first operation (a malloc into slot 0) repeated in place of its last:
# a well-formed file whose second operation allocates into a live slot.
math(EXPR body "${size} - 64")
execute_process(COMMAND head -c 64 ${DIR}/pairs.trace OUTPUT_FILE ${DIR}/head.part)
execute_process(COMMAND tail -c +41 ${DIR}/pairs.trace COMMAND head -c ${body}
                OUTPUT_FILE ${DIR}/body.part)
execute_process(COMMAND cat ${DIR}/head.part ${DIR}/body.part OUTPUT_FILE ${DIR}/twice.trace)
replay_fails(${DIR}/twice.trace "is corrupt: operation 1 \\(slot 0\\) allocates into a slot whose block is live")
