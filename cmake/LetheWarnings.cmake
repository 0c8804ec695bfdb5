# Warnings for Lethe's own targets (not for consumers). lethe_warnings(target)
set(LETHE_WARNING_FLAGS
  -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Woverloaded-virtual -Wcast-align
  -Wunused -Wformat=2 -Wimplicit-fallthrough -Wmissing-declarations -Wundef -Wvla)
set(LETHE_C_WARNING_FLAGS -Wall -Wextra -Wpedantic -Wshadow -Wformat=2)
# GCC 12 at -O3 (the release preset) reports -Wrestrict inside libstdc++'s own
# operator+(const char*, std::string&&), a false positive (GCC bugs 105329 and 105651): warned,
# not an error, so that tools/demo.sh builds under CI=true's -Werror.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_GREATER_EQUAL 12
   AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  list(APPEND LETHE_WARNING_FLAGS -Wno-error=restrict)
endif()

function(lethe_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:${LETHE_WARNING_FLAGS}>
    $<$<COMPILE_LANGUAGE:C>:${LETHE_C_WARNING_FLAGS}>
    $<$<BOOL:${LETHE_WERROR}>:-Werror>)
endfunction()
