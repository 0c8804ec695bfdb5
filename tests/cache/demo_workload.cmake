# cmake -P: runs lethe-demo (DEMO) on the sample site into OUT, the workload whose memory report
# demo_report_test checks, and checks what it prints about the HTML pages: each of the 29 pages'
# decoded bytes, their mean near the site's design figure (about 7.5 MB a page: decoding at the
# natural size, or images failing to show, would leave the band), and the browsed pages' phases.
execute_process(COMMAND ${DEMO} --out ${OUT} RESULT_VARIABLE status OUTPUT_VARIABLE out
  ERROR_VARIABLE err)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "lethe-demo exited ${status}\n${out}${err}")
endif()
foreach(text "lethe-demo: HTML pages from" "Decoded bytes per HTML page" "page-01 " "page-29 "
        "end of page-01" "end of page-03" "end of scroll up" "Regret in total")
  string(FIND "${out}" "${text}" found)
  if(found EQUAL -1)
    message(FATAL_ERROR "lethe-demo's output lacks '${text}':\n${out}")
  endif()
endforeach()
if(NOT out MATCHES "mean ([0-9]+)\\.([0-9]+) MB over 29 pages")
  message(FATAL_ERROR "no mean decoded bytes per page over 29 pages:\n${out}")
endif()
if(CMAKE_MATCH_1 LESS 5 OR CMAKE_MATCH_1 GREATER_EQUAL 10)
  message(FATAL_ERROR "decoded bytes per page ${CMAKE_MATCH_1}.${CMAKE_MATCH_2} MB: want 5 to 10 "
    "(the sample site is made for about 7.5)\n${out}")
endif()
