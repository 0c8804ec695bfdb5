# cmake -P script: install the build tree at LETHE_BINARY_DIR into WORK_DIR/prefix, then build and
# run the consumer named by MODE (find_package | pkg_config). Any failure is fatal.
cmake_minimum_required(VERSION 3.25)
file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE result)
  if(NOT result EQUAL 0)
    string(REPLACE ";" " " line "${ARGN}")
    message(FATAL_ERROR "failed (${result}): ${line}")
  endif()
endfunction()

run(${CMAKE_COMMAND} --install ${LETHE_BINARY_DIR} --prefix ${prefix})
foreach(required lib/cmake/Lethe/LetheConfig.cmake lib/cmake/Lethe/LetheConfigVersion.cmake
                 lib/pkgconfig/lethe.pc include/lethe/alloc.h)
  if(NOT EXISTS ${prefix}/${required})
    message(FATAL_ERROR "install did not produce ${required}")
  endif()
endforeach()

if(MODE STREQUAL "find_package")
  run(${CMAKE_COMMAND} -S ${CONSUMER_SOURCE_DIR}/cmake -B ${WORK_DIR}/build -G Ninja
      -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_BUILD_TYPE=Release)
  run(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
  run(${WORK_DIR}/build/lethe_consumer)
elseif(MODE STREQUAL "pkg_config")
  set(ENV{PKG_CONFIG_PATH} ${prefix}/lib/pkgconfig)
  execute_process(COMMAND pkg-config --static --cflags --libs lethe
                  OUTPUT_VARIABLE flags RESULT_VARIABLE result OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "pkg-config could not resolve lethe")
  endif()
  separate_arguments(flags UNIX_COMMAND "${flags}")
  run(${CXX} -O1 ${CONSUMER_SOURCE_DIR}/main.cc -o ${WORK_DIR}/lethe_consumer ${flags})
  run(${WORK_DIR}/lethe_consumer)
else()
  message(FATAL_ERROR "MODE must be find_package or pkg_config")
endif()
