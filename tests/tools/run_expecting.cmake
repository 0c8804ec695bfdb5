# Included by the cmake -P checks: run(STATUS COMMAND...) runs COMMAND, fails the check unless it
# exits with STATUS, and leaves its stdout and stderr, joined, in `out`.
function(run expect_status)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT status EQUAL expect_status)
    message(FATAL_ERROR "${ARGN}: exit ${status}, expected ${expect_status}\n${out}${err}")
  endif()
  set(out "${out}${err}" PARENT_SCOPE)
endfunction()
