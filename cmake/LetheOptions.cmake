# Build options. Every option has a description; presets set them (CMakePresets.json).
option(LETHE_BUILD_TESTS "Build the GoogleTest suites and register them with CTest" ${PROJECT_IS_TOP_LEVEL})
option(LETHE_BUILD_TOOLS "Build the tools (lethe-demo, lethe-decode, benchmarks, ...)" ${PROJECT_IS_TOP_LEVEL})
option(LETHE_STATS "Keep allocator and cache statistics counters (cheap; off only to measure their cost)" ON)
option(LETHE_WERROR "Treat compiler warnings as errors (on in CI)" OFF)
set(LETHE_DEBUG_LEVEL "0" CACHE STRING
    "0: LETHE_DCHECK compiled out; 1: LETHE_DCHECK on; 2: also expensive Validate() walks of the allocator's invariants")
set_property(CACHE LETHE_DEBUG_LEVEL PROPERTY STRINGS 0 1 2)
set(LETHE_SANITIZER "" CACHE STRING
    "Instrument everything with a sanitizer: address (ASan+UBSan), undefined, thread, or empty for none")
set_property(CACHE LETHE_SANITIZER PROPERTY STRINGS "" address undefined thread)

# Under a sanitizer the lethe_* calls forward to the system malloc so that the sanitizer sees every
# buffer of the layers above; the bundled allocator is then not the one serving them.
if(LETHE_SANITIZER)
  set(_lethe_replace_default OFF)
else()
  set(_lethe_replace_default ON)
endif()
option(LETHE_REPLACE_MALLOC
  "lethe_* calls use the bundled allocator, and Lethe's own tools link lethe::malloc so the whole process runs on it (off: forward to the system malloc)"
  ${_lethe_replace_default})
# ThreadSanitizer may check the bundled allocator itself (the tsan-alloc preset): lethe_* are then
# served by it, its locks and atomics are instrumented, and malloc stays the sanitizer's (the
# malloc replacement targets are not built). ASan and UBSan need every buffer: no bundled allocator.
if(LETHE_REPLACE_MALLOC AND LETHE_SANITIZER AND NOT LETHE_SANITIZER STREQUAL "thread")
  message(FATAL_ERROR "LETHE_REPLACE_MALLOC combines only with LETHE_SANITIZER=thread: the sanitizer owns malloc")
endif()

if(LETHE_SANITIZER STREQUAL "address")
  set(LETHE_SANITIZER_FLAGS -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
elseif(LETHE_SANITIZER STREQUAL "undefined")
  set(LETHE_SANITIZER_FLAGS -fsanitize=undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
elseif(LETHE_SANITIZER STREQUAL "thread")
  set(LETHE_SANITIZER_FLAGS -fsanitize=thread -fno-omit-frame-pointer)
elseif(LETHE_SANITIZER)
  message(FATAL_ERROR "LETHE_SANITIZER must be address, undefined, thread or empty, not '${LETHE_SANITIZER}'")
endif()
if(LETHE_SANITIZER_FLAGS)
  add_compile_options(${LETHE_SANITIZER_FLAGS})
  add_link_options(${LETHE_SANITIZER_FLAGS})
endif()

# Definitions every layer sees, through lethe_build_flags (linked PUBLIC by lethe_alloc).
add_library(lethe_build_flags INTERFACE)
target_compile_definitions(lethe_build_flags INTERFACE
  $<$<BOOL:${LETHE_STATS}>:LETHE_STATS=1>
  $<$<BOOL:${LETHE_REPLACE_MALLOC}>:LETHE_REPLACE_MALLOC=1>
  $<$<BOOL:${LETHE_SANITIZER}>:LETHE_SANITIZED=1>)

option(LETHE_FUZZ "Build the libFuzzer targets (needs clang; the fuzz preset sets it)" OFF)
if(LETHE_FUZZ AND NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  message(FATAL_ERROR "LETHE_FUZZ needs clang with libFuzzer (the fuzz preset uses clang-14)")
endif()
