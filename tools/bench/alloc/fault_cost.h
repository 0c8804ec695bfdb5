// What a page costs to fault in on this machine: one exception per page (first write) against
// madvise(MADV_POPULATE_WRITE) over runs of pages, the system call Lethe's allocator faults fresh
// small runs in with (alloc/bin.h FreshPages). A diagnosis of the machine, not of an allocator:
// "lethe-alloc-workload faultcost".
#ifndef LETHE_TOOLS_BENCH_ALLOC_FAULT_COST_H_
#define LETHE_TOOLS_BENCH_ALLOC_FAULT_COST_H_

namespace lethe::bench {

// Prints "fault_us_per_page=... populateN_us_per_page=..." for N = 1, 2, 4, 8 and 64 pages a call
// (medians of 3 rounds over 64 MiB). Returns 0, or 1 with a message on stderr when the kernel
// refuses a mapping or the advice.
int RunFaultCost();

}  // namespace lethe::bench

#endif  // LETHE_TOOLS_BENCH_ALLOC_FAULT_COST_H_
