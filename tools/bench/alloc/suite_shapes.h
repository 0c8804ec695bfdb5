// Shapes of other allocator benchmark suites (mimalloc-bench, glibc's benchtests, larson,
// alloc-test), re-expressed as workloads of lethe-alloc-workload: "suite SHAPE". Each one is a
// way of using malloc that Lethe's own workloads do not cover; all check the bytes they wrote.
#ifndef LETHE_TOOLS_BENCH_ALLOC_SUITE_SHAPES_H_
#define LETHE_TOOLS_BENCH_ALLOC_SUITE_SHAPES_H_

namespace lethe::bench {

// "grow-small|aligned-small|...": the shape names, for the usage line.
const char* SuiteShapeNames();

// Runs the shape `name` and prints its "key=value" figures. `divisor` > 1 divides its step
// counts (the tests' quick runs). Returns 0, 1 when a check of the written bytes failed, 2 when
// the name is unknown.
int RunSuiteShape(const char* name, long divisor);

}  // namespace lethe::bench

#endif  // LETHE_TOOLS_BENCH_ALLOC_SUITE_SHAPES_H_
