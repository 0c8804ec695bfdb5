# Warnings for Lethe's own targets (not for consumers). lethe_warnings(target)
set(LETHE_WARNING_FLAGS
  -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Woverloaded-virtual -Wcast-align
  -Wunused -Wformat=2 -Wimplicit-fallthrough -Wmissing-declarations -Wundef -Wvla)
set(LETHE_C_WARNING_FLAGS -Wall -Wextra -Wpedantic -Wshadow -Wformat=2)

function(lethe_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:${LETHE_WARNING_FLAGS}>
    $<$<COMPILE_LANGUAGE:C>:${LETHE_C_WARNING_FLAGS}>
    $<$<BOOL:${LETHE_WERROR}>:-Werror>)
endfunction()
