# cmake -P: runs COMMAND (a ;-list: a program, or an interpreter and a script) with --help, which
# must print a usage on stdout and exit 0, then with a flag no tool has, which must exit 2 and say
# "usage" (on either stream).
function(expect_usage flag want_exit where)
  execute_process(COMMAND ${COMMAND} ${flag} RESULT_VARIABLE status OUTPUT_VARIABLE out
    ERROR_VARIABLE err)
  if(NOT status STREQUAL want_exit)
    message(FATAL_ERROR "${flag}: exit ${status}, want ${want_exit}\n${out}${err}")
  endif()
  set(text "${out}")
  if(where STREQUAL "any")
    set(text "${out}${err}")
  endif()
  string(TOLOWER "${text}" text)
  string(FIND "${text}" "usage" found)
  if(found EQUAL -1)
    message(FATAL_ERROR "${flag} printed no usage (${where}):\n${out}${err}")
  endif()
endfunction()

expect_usage(--help 0 stdout)
expect_usage(--no-such-flag 2 any)
