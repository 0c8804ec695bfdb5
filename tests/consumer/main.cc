// The consumer's program: uses one public header of every layer and checks the results, so that a
// broken install (missing header, missing archive, unresolved dependency) fails here.
#include <lethe/alloc.h>
#include <lethe/build_info.h>
#include <lethe/clock.h>
#include <lethe/image_format.h>

#include <chrono>
#include <cstdint>
#include <cstdio>

int main() {
  void* block = lethe_malloc(1000);
  if (block == nullptr || lethe_usable_size(block) < 1000) return 1;
  lethe_free(block);

  const uint8_t gif[] = {'G', 'I', 'F', '8', '9', 'a'};
  if (lethe::DetectImageFormat(gif) != lethe::ImageFormat::kGif) return 2;

  lethe::ManualClock clock;
  auto start = clock.Now();
  clock.Advance(std::chrono::seconds(5));
  if (clock.Now() - start != std::chrono::seconds(5)) return 3;

  std::printf("consumer ok: %s\n", lethe::DescribeBuild().c_str());
  return 0;
}
