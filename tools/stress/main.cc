// lethe-stress: the page-cycling memory test (see stress_run.h and stress_options.h). This binary
// runs on Lethe's allocator (malloc replaced); lethe-stress-baseline (baseline_main.cc) is the same
// program on the system allocator and runs the baseline configuration.
#include "stress_run.h"

#ifndef LETHE_STRESS_MALLOC_REPLACED
#define LETHE_STRESS_MALLOC_REPLACED 0
#endif

int main(int argc, char** argv) {
  return lethe::stress::StressMain(argc, argv, LETHE_STRESS_MALLOC_REPLACED != 0);
}
