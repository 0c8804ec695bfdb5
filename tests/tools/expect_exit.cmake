# cmake -P: runs COMMAND with ARGS (a ;-list), passes when it exits EXPECT_EXIT and its output
# contains EXPECT_TEXT.
execute_process(COMMAND ${COMMAND} ${ARGS} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT status STREQUAL EXPECT_EXIT)
  message(FATAL_ERROR "exit ${status}, want ${EXPECT_EXIT}\n${out}${err}")
endif()
string(FIND "${out}${err}" "${EXPECT_TEXT}" found)
if(found EQUAL -1)
  message(FATAL_ERROR "output lacks '${EXPECT_TEXT}':\n${out}${err}")
endif()
