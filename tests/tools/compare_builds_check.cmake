# cmake -P: compare_builds.py (PYTHON, SCRIPT) on a trace of `lethe-alloc-workload pairs 500`
# (WORKLOAD) recorded with the trace shim (SHIM), the system's malloc against Lethe's (PRELOAD):
# a row per figure with both medians, the ratio and the round count, and the geometric means.
# With --instructions, a count per build. Then the failure paths: a trace the replay refuses (exit
# 1, the failed command named), --only naming no trace, a missing library and --instructions
# without valgrind (exit 2). DIR is a scratch folder.
file(REMOVE_RECURSE ${DIR})
file(MAKE_DIRECTORY ${DIR}/raw ${DIR}/traces ${DIR}/bad)
include(${CMAKE_CURRENT_LIST_DIR}/run_expecting.cmake)

run(0 ${CMAKE_COMMAND} -E env LETHE_ALLOC_TRACE_DIR=${DIR}/raw LD_PRELOAD=${SHIM} ${WORKLOAD} pairs 500)
file(GLOB raws ${DIR}/raw/*.raw)
run(0 ${WORKLOAD} compile-trace ${DIR}/traces/pairs.trace ${raws})

set(compare ${PYTHON} ${SCRIPT} --workload ${WORKLOAD})
run(0 ${compare} --base none --new ${PRELOAD} --traces ${DIR}/traces --command "pairs 200" --runs 3)
foreach(figure ms exit_rss_kb minflt)
  if(NOT out MATCHES "\npairs +${figure} +[0-9.,e+]+ +[0-9.,e+]+ +[0-9.]+x +[0-3] / 3\n")
    message(FATAL_ERROR "no row for the trace's ${figure}:\n${out}")
  endif()
endforeach()
# `pairs N` prints its faults and anonymous KiB, not a time: faults are the figure both have.
if(NOT out MATCHES "\npairs 200 +minflt +" OR NOT out MATCHES "\ngeomean minflt +[0-9.]+x over 2 workloads\n")
  message(FATAL_ERROR "no row for the command, or no geometric mean over both:\n${out}")
endif()
if(out MATCHES "\n[^\n]+ +(ops|slots|pairs) +[0-9.,]+ +[0-9.,]+ +[0-9.]+x")
  message(FATAL_ERROR "the workload's size is no figure:\n${out}")
endif()

# --instructions: one count per build under valgrind (where it is installed), the same two runs'
# counts for every round; without valgrind (VALGRIND names one that is not there), a usage error.
find_program(VALGRIND valgrind)
if(VALGRIND)
  run(0 ${compare} --base none --new ${PRELOAD} --traces ${DIR}/traces --runs 1 --instructions)
  if(NOT out MATCHES "\npairs +instructions +[1-9][0-9,]+ +[1-9][0-9,]+ +[0-9.]+x +one run\n")
    message(FATAL_ERROR "no instruction counts:\n${out}")
  endif()
endif()
run(2 ${CMAKE_COMMAND} -E env VALGRIND=${DIR}/no-valgrind ${compare} --base none --new none
    --traces ${DIR}/traces --instructions)
if(NOT out MATCHES "--instructions needs valgrind")
  message(FATAL_ERROR "--instructions without valgrind:\n${out}")
endif()

file(WRITE ${DIR}/bad/broken.trace "not a trace")
run(1 ${compare} --base none --new ${PRELOAD} --traces ${DIR}/bad --runs 1)
if(NOT out MATCHES "replay', '[^']*broken.trace'\\] under [^ ]+ failed")
  message(FATAL_ERROR "the failed run is not named:\n${out}")
endif()
run(2 ${compare} --base none --new ${PRELOAD} --traces ${DIR}/traces --only pairs,nothing)
if(NOT out MATCHES "--only: no trace for nothing")
  message(FATAL_ERROR "--only naming no trace:\n${out}")
endif()
run(2 ${compare} --base ${DIR}/missing.so --new none --traces ${DIR}/traces)
if(NOT out MATCHES "--base: no library at")
  message(FATAL_ERROR "a missing library:\n${out}")
endif()
