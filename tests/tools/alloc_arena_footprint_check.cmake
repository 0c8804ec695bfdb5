# cmake -P: a one-thread process costs the same memory whatever the arena count. Runs
# `lethe-alloc-workload pairs` on PRELOAD with LETHE_OPTIONS=arenas:1 and arenas:64 and compares
# their anonymous RSS: the arenas no thread uses must stay unwritten .bss (ArenasInit). Writing one
# pointer into each cost 4 KiB an arena, 252 KiB here; a page or two of noise is allowed.
function(anon_kb arenas out_var)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env LD_PRELOAD=${PRELOAD}
                          LETHE_OPTIONS=arenas:${arenas} ${WORKLOAD} pairs 2000
                  RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT status EQUAL 0 OR NOT out MATCHES "anon_kb=([0-9]+)")
    message(FATAL_ERROR "pairs with arenas:${arenas}: exit ${status}\n${out}${err}")
  endif()
  set(${out_var} ${CMAKE_MATCH_1} PARENT_SCOPE)
endfunction()
anon_kb(1 one)
anon_kb(64 many)
math(EXPR extra "${many} - ${one}")
message(STATUS "anonymous KiB: arenas:1 ${one}, arenas:64 ${many}")
if(extra GREATER 32)
  message(FATAL_ERROR "64 arenas cost ${extra} KiB more than one for a one-thread process")
endif()
