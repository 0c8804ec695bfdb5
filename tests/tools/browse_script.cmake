# cmake -P: runs lethe-browse (BROWSE) through a script of actions on the sample site (SITE) on
# simulated time, then checks what it wrote into OUT: a PNG screenshot, a memory report, a trace.
file(REMOVE_RECURSE ${OUT})
file(MAKE_DIRECTORY ${OUT})
execute_process(
  COMMAND ${BROWSE} --simulated --threads 1 --viewport 800x600 --trace ${OUT}/trace.json
    --load ${SITE}/pages/page-01.html --wait-decodes --scroll-by 900 --wait-decodes
    --screenshot ${OUT}/shot-1.png --open --load ${SITE}/pages/page-02.html
    --load ${SITE}/pages/page-03.json --back --forward --tab 1 --run 30 --draw --stats
    --pressure critical --report ${OUT}/report.json --close --stats
  RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "lethe-browse exited ${status}\n${out}${err}")
endif()
foreach(needle "screenshot ${OUT}/shot-1.png" "back to " "forward to " "pressure critical: freed"
               "windows 1")
  string(FIND "${out}" "${needle}" found)
  if(found EQUAL -1)
    message(FATAL_ERROR "output lacks '${needle}':\n${out}${err}")
  endif()
endforeach()
file(READ ${OUT}/shot-1.png signature LIMIT 8 HEX)
if(NOT signature STREQUAL "89504e470d0a1a0a")
  message(FATAL_ERROR "shot-1.png is not a PNG (${signature})")
endif()
file(READ ${OUT}/report.json report)
string(FIND "${report}" "explicit/images/encoded/placeholders" found)
if(found EQUAL -1)
  message(FATAL_ERROR "report.json lacks the placeholders")
endif()
file(READ ${OUT}/trace.json trace)
string(FIND "${trace}" "\"window-close\"" found)
if(found EQUAL -1)
  message(FATAL_ERROR "trace.json lacks the window-close event")
endif()
