# cmake -P: lethe-demo on a directory of the user's images with bad files among them. Each bad file
# is reported by name with its reason, the good one is shown, and the demo runs to the end (exit 0).
#   -DDEMO=<lethe-demo> -DSITE=<sample-site dir> -DWORK=<scratch dir>
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK}/images ${WORK}/out)
set(images ${WORK}/images)
file(COPY_FILE ${SITE}/images/page-01-chart.png ${images}/good.png)
execute_process(COMMAND head -c 4000 ${SITE}/images/page-01-hero.jpg OUTPUT_FILE ${images}/truncated.jpg)
execute_process(COMMAND head -c 40 ${SITE}/images/page-01-anim-0.gif OUTPUT_FILE ${images}/header-only.gif)
file(WRITE ${images}/not-an-image.png "this is text, not a PNG\n")
file(WRITE ${images}/empty.jpg "")

execute_process(COMMAND ${DEMO} ${images} --out ${WORK}/out
  RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "exit ${status}, want 0\n${out}${err}")
endif()
foreach(want "skipped truncated.jpg: " "skipped header-only.gif: " "skipped not-an-image.png: "
             "skipped empty.jpg: empty file" "loaded 1 images (0 animated), 4 skipped"
             "wrote ${WORK}/out/memory-report.json.gz")
  string(FIND "${out}" "${want}" found)
  if(found EQUAL -1)
    message(FATAL_ERROR "output lacks '${want}':\n${out}${err}")
  endif()
endforeach()
file(REMOVE_RECURSE ${WORK})
