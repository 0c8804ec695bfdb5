// lethe-alloc-classes — prints the size classes of Lethe's allocator: each small class with its
// run layout and worst-case waste, each large class with its worst-case waste, then the huge
// range. Usage: lethe-alloc-classes
#include <cstdio>
#include <cstring>

#include "size_classes.h"

using namespace lethe::internal;

int main(int argc, char** argv) {
  if (argc > 1) {
    const bool help = std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0;
    std::fprintf(help ? stdout : stderr, "usage: %s\n  Prints the allocator's size-class table.\n",
                 argv[0]);
    return help ? 0 : 2;
  }
  std::printf("Lethe size classes (page %zu B, chunk %zu KiB, header %zu pages)\n\n", kPageBytes,
              kChunkBytes / 1024, kChunkHeaderPages);
  std::printf("%5s %7s %9s %10s %8s %11s %10s\n", "class", "size", "requests", "run pages",
              "regions", "run waste%", "max waste%");
  size_t previous = 0;
  for (size_t klass = 0; klass < kSmallClassCount; ++klass) {
    const SmallClass& layout = kSmallClasses[klass];
    size_t run_bytes = size_t{layout.run_pages} * kPageBytes;
    double run_waste = 100.0 * static_cast<double>(run_bytes - size_t{layout.region_count} *
                                                                   layout.size_bytes) /
                       static_cast<double>(run_bytes);
    // The worst request of the class is one byte above the previous class.
    double max_waste = 100.0 * static_cast<double>(layout.size_bytes - previous - 1) /
                       static_cast<double>(layout.size_bytes);
    char range[32];
    std::snprintf(range, sizeof(range), "%zu-%u", previous + 1, layout.size_bytes);
    std::printf("%5zu %7u %9s %10u %8u %11.2f %10.2f\n", klass, layout.size_bytes, range,
                layout.run_pages, layout.region_count, run_waste, max_waste);
    previous = layout.size_bytes;
  }
  std::printf("\nlarge: 4 classes per doubling, runs inside chunks (a tail nobody writes is"
              " address space, not memory)\n");
  std::printf("%5s %9s %15s %6s %10s\n", "class", "size", "requests", "pages", "max waste%");
  size_t klass = kSmallClassCount;
  for (size_t pages = kLargeMinPages; pages <= kChunkUsablePages; ++pages) {
    if (LargeClassPages(pages) != pages) continue;
    size_t size = pages * kPageBytes;
    char range[40];
    std::snprintf(range, sizeof(range), "%zu-%zu", previous + 1, size);
    std::printf("%5zu %9zu %15s %6zu %10.2f\n", klass++, size, range, pages,
                100.0 * static_cast<double>(size - previous - 1) / static_cast<double>(size));
    previous = size;
  }
  std::printf("huge:  > %zu B, page multiples, own mapping (mmap/mremap)\n", kLargeMaxBytes);
  return 0;
}
