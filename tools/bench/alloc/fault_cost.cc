// See fault_cost.h.
#include "fault_cost.h"

#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "proc_figures.h"

namespace lethe::bench {
namespace {

constexpr size_t kPage = 4096;
constexpr size_t kBytes = size_t{64} << 20;
constexpr int kRounds = 3;

// Microseconds per page to fault [start, start + kBytes) in: by writing a byte of each page
// (`batch` 0), or by populating `batch` pages at a time and then writing them. -1 when the
// kernel refused the advice.
double MicrosecondsPerPage(char* start, size_t batch) {
  madvise(start, kBytes, MADV_DONTNEED);  // every page fresh again
  const double begin = NowMs();
  const size_t step = batch == 0 ? kBytes : batch * kPage;
  for (size_t offset = 0; offset < kBytes; offset += step) {
    if (batch != 0 && madvise(start + offset, step, MADV_POPULATE_WRITE) != 0) return -1;
    for (size_t page = offset; page < offset + step && page < kBytes; page += kPage) {
      start[page] = 1;
    }
  }
  return (NowMs() - begin) * 1000.0 / static_cast<double>(kBytes / kPage);
}

double Median(double* values) {
  std::sort(values, values + kRounds);
  return values[kRounds / 2];
}

}  // namespace

int RunFaultCost() {
  void* mapping = mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mapping == MAP_FAILED) {
    std::fprintf(stderr, "faultcost: mmap of %zu bytes failed: %s\n", kBytes, std::strerror(errno));
    return 1;
  }
  auto* start = static_cast<char*>(mapping);
  constexpr size_t kBatches[] = {0, 1, 2, 4, 8, 64};
  constexpr size_t kCount = sizeof(kBatches) / sizeof(kBatches[0]);
  double figures[kCount][kRounds];
  for (int round = 0; round < kRounds; ++round) {  // interleaved, so that noise hits all alike
    for (size_t i = 0; i < kCount; ++i) {
      figures[i][round] = MicrosecondsPerPage(start, kBatches[i]);
      if (figures[i][round] < 0) {
        std::fprintf(stderr, "faultcost: madvise(MADV_POPULATE_WRITE) refused: %s\n",
                     std::strerror(errno));
        munmap(mapping, kBytes);
        return 1;
      }
    }
  }
  munmap(mapping, kBytes);
  std::printf("fault_us_per_page=%.2f", Median(figures[0]));
  for (size_t i = 1; i < kCount; ++i) {
    std::printf(" populate%zu_us_per_page=%.2f", kBatches[i], Median(figures[i]));
  }
  std::printf("\n");
  return 0;
}

}  // namespace lethe::bench
