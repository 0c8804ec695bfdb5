// The contract of lethe/alloc.h that holds whichever allocator serves it (bundled or system).
#include "lethe/alloc.h"

#include <errno.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

namespace {

TEST(AllocApi, MallocGivesAtLeastTheRequestedUsableSize) {
  for (size_t size : {1u, 7u, 16u, 100u, 4096u, 100000u, 3u << 20}) {
    void* block = lethe_malloc(size);
    ASSERT_NE(block, nullptr) << size;
    EXPECT_GE(lethe_usable_size(block), size);
    std::memset(block, 0xab, lethe_usable_size(block));
    lethe_free(block);
  }
}

TEST(AllocApi, GoodSizeIsAtLeastTheRequest) {
  for (size_t size = 1; size < 70000; size = size * 3 / 2 + 1) EXPECT_GE(lethe_good_size(size), size);
}

TEST(AllocApi, CallocOverflowFailsWithEnomem) {
  errno = 0;
  EXPECT_EQ(lethe_calloc(SIZE_MAX / 2, 3), nullptr);
  EXPECT_EQ(errno, ENOMEM);
}

TEST(AllocApi, CallocZeroes) {
  auto* bytes = static_cast<unsigned char*>(lethe_calloc(1000, 3));
  ASSERT_NE(bytes, nullptr);
  for (size_t i = 0; i < 3000; ++i) ASSERT_EQ(bytes[i], 0) << i;
  lethe_free(bytes);
}

TEST(AllocApi, ReallocKeepsContents) {
  auto* bytes = static_cast<unsigned char*>(lethe_malloc(100));
  ASSERT_NE(bytes, nullptr);
  for (int i = 0; i < 100; ++i) bytes[i] = static_cast<unsigned char>(i);
  bytes = static_cast<unsigned char*>(lethe_realloc(bytes, 1 << 20));
  ASSERT_NE(bytes, nullptr);
  for (int i = 0; i < 100; ++i) ASSERT_EQ(bytes[i], i);
  lethe_free(bytes);
}

TEST(AllocApi, AlignedAllocHonoursAlignment) {
  for (size_t alignment : {8u, 64u, 4096u, 65536u}) {
    void* block = lethe_aligned_alloc(alignment, 100);
    ASSERT_NE(block, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(block) % alignment, 0u);
    lethe_free(block);
  }
}

TEST(AllocApi, FailAfterFailsExactlyTheNthAllocationOnce) {
  lethe_fail_after(3);
  void* first = lethe_malloc(10);
  void* second = lethe_malloc(10);
  errno = 0;
  void* third = lethe_malloc(10);
  EXPECT_EQ(errno, ENOMEM);
  void* fourth = lethe_malloc(10);
  EXPECT_NE(first, nullptr);
  EXPECT_NE(second, nullptr);
  EXPECT_EQ(third, nullptr);
  EXPECT_NE(fourth, nullptr);
  lethe_free(first);
  lethe_free(second);
  lethe_free(fourth);
}

TEST(AllocApi, StatsCountLiveBytes) {
  lethe_stats_t before;
  lethe_stats(&before);
  void* block = lethe_malloc(1 << 16);
  ASSERT_NE(block, nullptr);
  lethe_stats_t during;
  lethe_stats(&during);
  EXPECT_GE(during.allocated_bytes, before.allocated_bytes + lethe_usable_size(block));
  EXPECT_GT(during.allocation_count, before.allocation_count);
  lethe_free(block);
  lethe_stats_t after;
  lethe_stats(&after);
  EXPECT_GT(after.free_count, during.free_count);
}

TEST(AllocApi, FreeNullIsANoOpAndKeepsErrno) {
  errno = 1234;
  lethe_free(nullptr);
  EXPECT_EQ(errno, 1234);
}

TEST(AllocApi, AllocatorNameIsKnown) {
  std::string name = lethe_allocator_name();
  EXPECT_TRUE(name == "lethe" || name == "system") << name;
}

}  // namespace
