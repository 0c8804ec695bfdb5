// The malloc family and operator new/delete as exported by lethe_malloc_static (linked into this
// test, so every allocation of the process, GoogleTest's included, is served by Lethe), and fork
// safety with other threads allocating.
#include <errno.h>
#include <gtest/gtest.h>
#include <malloc.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "lethe/alloc.h"

namespace {

// Volatile sizes keep the compiler from folding calls whose result it thinks it knows.
volatile size_t g_huge_count = SIZE_MAX / 2;

TEST(MallocExports, TheProcessMallocIsLethe) {
  void* block = std::malloc(100);
  ASSERT_NE(block, nullptr);
  std::memset(block, 0, 100);  // GCC warns about passing uninitialised memory as const void*
  // lethe_usable_size would abort on a pointer it does not own.
  EXPECT_EQ(lethe_usable_size(block), 112u);
  EXPECT_EQ(malloc_usable_size(block), 112u);
  std::free(block);
  std::string text(1000, 'x');  // libstdc++ allocates through operator new -> Lethe
  EXPECT_EQ(lethe_usable_size(text.data()), lethe_good_size(1001));
}

TEST(MallocExports, FreeKeepsErrno) {
  void* block = std::malloc(70000);
  errno = 4242;
  std::free(block);
  std::free(nullptr);
  EXPECT_EQ(errno, 4242);
}

TEST(MallocExports, CallocOverflowAndReallocarrayOverflowFailWithEnomem) {
  errno = 0;
  EXPECT_EQ(std::calloc(g_huge_count, 3), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  errno = 0;
  EXPECT_EQ(reallocarray(nullptr, g_huge_count, 5), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  void* block = reallocarray(nullptr, 10, 10);
  EXPECT_GE(malloc_usable_size(block), 100u);
  std::free(block);
}

TEST(MallocExports, ReallocToZeroFreesAndReturnsNullLikeGlibc) {
  void* block = std::malloc(50);
  volatile size_t zero = 0;
  EXPECT_EQ(std::realloc(block, zero), nullptr);
  void* fresh = std::realloc(nullptr, 30);
  EXPECT_NE(fresh, nullptr);
  std::free(fresh);
}

TEST(MallocExports, AlignmentFunctionsHonourTheirContracts) {
  void* block = nullptr;
  EXPECT_EQ(posix_memalign(&block, 24, 100), EINVAL);
  EXPECT_EQ(posix_memalign(&block, 2, 100), EINVAL);  // not a multiple of sizeof(void*)
  ASSERT_EQ(posix_memalign(&block, 256, 100), 0);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(block) % 256, 0u);
  std::free(block);
  volatile size_t bad_alignment = 48;
  errno = 0;
  EXPECT_EQ(aligned_alloc(bad_alignment, 96), nullptr);
  EXPECT_EQ(errno, EINVAL);
  block = aligned_alloc(4096, 4096);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(block) % 4096, 0u);
  std::free(block);
  block = memalign(96, 10);  // rounded up to 128, as glibc does
  EXPECT_EQ(reinterpret_cast<uintptr_t>(block) % 128, 0u);
  std::free(block);
  long page = sysconf(_SC_PAGESIZE);
  block = valloc(10);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(block) % page, 0u);
  std::free(block);
  block = pvalloc(10);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(block) % page, 0u);
  EXPECT_GE(malloc_usable_size(block), static_cast<size_t>(page));
  std::free(block);
}

struct alignas(128) Wide {
  char bytes[128];
};

TEST(MallocExports, EveryOperatorNewAndDeleteForm) {
  auto* one = new int(7);
  delete one;
  auto* many = new int[100];
  delete[] many;
  auto* nothrow = new (std::nothrow) char[64];
  EXPECT_NE(nothrow, nullptr);
  delete[] nothrow;
  auto* wide = new Wide;
  EXPECT_EQ(reinterpret_cast<uintptr_t>(wide) % 128, 0u);
  delete wide;  // sized + aligned delete
  auto* wides = new Wide[3];
  EXPECT_EQ(reinterpret_cast<uintptr_t>(wides) % 128, 0u);
  delete[] wides;
  void* raw = ::operator new(1000, std::align_val_t{512}, std::nothrow);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(raw) % 512, 0u);
  ::operator delete(raw, std::align_val_t{512}, std::nothrow);
  raw = ::operator new(300);
  ::operator delete(raw, 300);
}

TEST(MallocExports, OperatorNewThrowsBadAllocAndNothrowReturnsNull) {
  EXPECT_THROW((void)::operator new(g_huge_count), std::bad_alloc);
  EXPECT_EQ(::operator new(g_huge_count, std::nothrow), nullptr);
}

TEST(MallocExports, AlignedFormsFailCleanlyWhenMemoryCannotBeHad) {
  void* block = &block;
  EXPECT_EQ(posix_memalign(&block, 64, g_huge_count), ENOMEM);
  EXPECT_EQ(block, &block) << "posix_memalign must not touch *out on failure";
  errno = 0;
  EXPECT_EQ(aligned_alloc(64, g_huge_count), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  errno = 0;
  EXPECT_EQ(memalign(4096, g_huge_count), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  errno = 0;
  EXPECT_EQ(pvalloc(SIZE_MAX - 10), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  EXPECT_THROW((void)::operator new(g_huge_count, std::align_val_t{256}), std::bad_alloc);
  EXPECT_EQ(::operator new[](g_huge_count, std::align_val_t{256}, std::nothrow), nullptr);
}

TEST(MallocExports, OperatorNewCallsTheNewHandlerBeforeThrowing) {
  static int calls = 0;
  std::set_new_handler([] {
    ++calls;
    std::set_new_handler(nullptr);
  });
  EXPECT_THROW((void)::operator new(g_huge_count), std::bad_alloc);
  EXPECT_EQ(calls, 1);
}

// A new-handler that returns is the promise of memory: operator new tries again, and the block
// it then gets is returned (here the failure is injected once, so the second try succeeds).
TEST(MallocExports, OperatorNewRetriesAfterTheNewHandlerAndReturnsTheBlock) {
  static int calls = 0;
  calls = 0;
  std::set_new_handler([] { ++calls; });
  lethe_fail_after(1);
  void* block = ::operator new(64);
  std::set_new_handler(nullptr);
  ASSERT_NE(block, nullptr);
  EXPECT_EQ(calls, 1);
  EXPECT_GE(lethe_usable_size(block), 64u);
  ::operator delete(block);
  // Without a failure the handler is not called, from the cache or past it.
  void* small = ::operator new(64);
  void* large = ::operator new(100000);
  EXPECT_EQ(calls, 1);
  ::operator delete(small);
  ::operator delete(large);
}

TEST(MallocExports, IntrospectionComesFromLetheStatistics) {
  std::vector<void*> blocks;
  for (int i = 0; i < 100; ++i) blocks.push_back(std::malloc(1000));
  struct mallinfo2 info = mallinfo2();
  lethe_stats_t stats;
  lethe_stats(&stats);
  EXPECT_GE(info.uordblks, 100u * 1024);
  EXPECT_LE(info.uordblks, stats.active_bytes);
  for (void* block : blocks) std::free(block);
  EXPECT_EQ(malloc_trim(0), 1);
  lethe_stats(&stats);
  EXPECT_EQ(stats.dirty_bytes, 0u);
}

// Small, large and huge blocks, replaced at random until `stop`: keeps the arena, huge-table and
// thread-cache locks busy so that a fork() is likely to land while one of them is held.
void Churn(unsigned seed, const std::atomic<bool>* stop) {
  std::vector<void*> held(64, nullptr);
  uint64_t state = seed;
  while (!stop->load(std::memory_order_relaxed)) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    size_t slot = (state >> 33) % held.size();
    std::free(held[slot]);
    size_t kind = (state >> 40) % 64;
    size_t size = kind == 0 ? (2u << 20) : kind < 16 ? 20000 + (state >> 20) % 200000
                                                     : 16 + (state >> 24) % 2000;
    held[slot] = std::malloc(size);
    if (held[slot] != nullptr) static_cast<char*>(held[slot])[0] = 1;
  }
  for (void* block : held) std::free(block);
}

// In the child: every kind of allocation, a purge and the statistics must work. 0 when they do.
int ChildWork() {
  std::vector<void*> blocks;
  for (size_t size : {24u, 700u, 9000u, 50000u, 600000u, 3u << 20}) {
    void* block = std::malloc(size);
    if (block == nullptr) return 1;
    std::memset(block, 0x5a, size);
    blocks.push_back(block);
  }
  blocks[0] = std::realloc(blocks[0], 100000);
  std::string text(5000, 'c');
  for (void* block : blocks) std::free(block);
  lethe_purge();
  lethe_stats_t stats;
  lethe_stats(&stats);
  return stats.allocation_count > 0 && text.size() == 5000 ? 0 : 2;
}

// The pthread_atfork handlers take every allocator lock around fork(), so a child forked while
// other threads are inside malloc/free finds them all free. Without them the child would, now and
// then, block for ever on a lock held by a thread that does not exist in it (SIGALRM ends it).
TEST(MallocExports, ForkWhileOtherThreadsAllocateLeavesAWorkingHeapInTheChild) {
  std::atomic<bool> stop{false};
  std::thread first(Churn, 1u, &stop);
  std::thread second(Churn, 2u, &stop);
  int failures = 0;
  for (int round = 0; round < 16 && failures == 0; ++round) {
    pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      alarm(5);
      _exit(ChildWork());
    }
    int status = 0;
    waitpid(child, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failures;
  }
  stop.store(true);
  first.join();
  second.join();
  EXPECT_EQ(failures, 0);
}

TEST(MallocExports, MallocAndNewWhileAnArenaIsBoundComeFromIt) {
  lethe_arena_t arena = lethe_arena_create();
  ASSERT_NE(arena, LETHE_ARENA_NONE);
  void* block = nullptr;
  int* numbers = nullptr;
  std::string* text = nullptr;
  {
    lethe::ArenaScope scope(arena);
    block = std::malloc(100);
    numbers = new int[1000];
    text = new std::string(5000, 'x');
  }
  uint64_t expected = lethe_usable_size(block) + lethe_usable_size(numbers) +
                      lethe_usable_size(text) + lethe_usable_size(text->data());
  lethe_arena_stats_t stats{};
  ASSERT_EQ(lethe_arena_stats(arena, &stats), 0);
  EXPECT_EQ(stats.allocated_bytes, expected);
  EXPECT_EQ(stats.allocation_count, 4u);
  std::free(block);
  delete[] numbers;
  uint64_t left = 0;
  ASSERT_EQ(lethe_arena_destroy(arena, &left), 0);
  EXPECT_EQ(left, lethe_usable_size(text) + lethe_usable_size(text->data()));
  delete text;  // the ghost's last blocks: it is released
  EXPECT_EQ(lethe_arena_stats(arena, &stats), ENOENT);
}

}  // namespace
