// Caller arenas through lethe/alloc.h: the part of the contract that holds whichever allocator
// serves lethe_* (bundled or, in the sanitizer presets, the system malloc): handles, binding and
// its restoration, the errors, the limit, the scope helper and unbinding at thread exit.
#include <errno.h>
#include <gtest/gtest.h>

#include <cstring>
#include <thread>
#include <vector>

#include "lethe/alloc.h"

namespace {

bool Bundled() { return std::strcmp(lethe_allocator_name(), "lethe") == 0; }

TEST(ArenaApi, BindReturnsThePreviousBindingSoThatAScopeCanRestoreIt) {
  lethe_arena_t a = lethe_arena_create();
  lethe_arena_t b = lethe_arena_create();
  ASSERT_NE(a, LETHE_ARENA_NONE);
  ASSERT_NE(b, LETHE_ARENA_NONE);
  EXPECT_NE(a, b);
  EXPECT_EQ(lethe_arena_bound(), LETHE_ARENA_NONE);
  lethe_arena_t previous = 99;
  ASSERT_EQ(lethe_arena_bind(a, &previous), 0);
  EXPECT_EQ(previous, LETHE_ARENA_NONE);
  ASSERT_EQ(lethe_arena_bind(b, &previous), 0);
  EXPECT_EQ(previous, a);
  EXPECT_EQ(lethe_arena_bound(), b);
  lethe_arena_stats_t stats;
  ASSERT_EQ(lethe_arena_stats(b, &stats), 0);
  EXPECT_EQ(stats.bound_threads, 1u);
  ASSERT_EQ(lethe_arena_stats(a, &stats), 0);
  EXPECT_EQ(stats.bound_threads, 0u);
  ASSERT_EQ(lethe_arena_bind(previous, &previous), 0);
  EXPECT_EQ(previous, b);
  EXPECT_EQ(lethe_arena_bound(), a);
  ASSERT_EQ(lethe_arena_bind(LETHE_ARENA_NONE, nullptr), 0);
  EXPECT_EQ(lethe_arena_bound(), LETHE_ARENA_NONE);
  EXPECT_EQ(lethe_arena_destroy(a, nullptr), 0);
  EXPECT_EQ(lethe_arena_destroy(b, nullptr), 0);
}

TEST(ArenaApi, ScopesNestAndRestore) {
  lethe_arena_t outer = lethe_arena_create();
  lethe_arena_t inner = lethe_arena_create();
  {
    lethe::ArenaScope outer_scope(outer);
    ASSERT_TRUE(outer_scope.ok());
    {
      lethe::ArenaScope inner_scope(inner);
      ASSERT_TRUE(inner_scope.ok());
      EXPECT_EQ(inner_scope.previous(), outer);
      EXPECT_EQ(lethe_arena_bound(), inner);
    }
    EXPECT_EQ(lethe_arena_bound(), outer);
    lethe::ArenaScope bad(inner + (uint64_t{1} << 40));  // a generation never handed out
    EXPECT_FALSE(bad.ok());
    EXPECT_EQ(bad.error(), EINVAL);
    EXPECT_EQ(lethe_arena_bound(), outer) << "a failed bind changes nothing";
  }
  EXPECT_EQ(lethe_arena_bound(), LETHE_ARENA_NONE);
  EXPECT_EQ(lethe_arena_destroy(outer, nullptr), 0);
  EXPECT_EQ(lethe_arena_destroy(inner, nullptr), 0);
}

TEST(ArenaApi, BadAndStaleHandlesAreRefused) {
  lethe_arena_stats_t stats;
  EXPECT_EQ(lethe_arena_bind(12345, nullptr), EINVAL);
  EXPECT_EQ(lethe_arena_bind(~uint64_t{0}, nullptr), EINVAL);
  EXPECT_EQ(lethe_arena_stats(LETHE_ARENA_NONE, &stats), EINVAL);
  EXPECT_EQ(lethe_arena_destroy(LETHE_ARENA_NONE, nullptr), EINVAL);
  EXPECT_EQ(lethe_arena_destroy(uint64_t{7} << 32 | 100000, nullptr), EINVAL);
  lethe_arena_t arena = lethe_arena_create();
  ASSERT_NE(arena, LETHE_ARENA_NONE);
  EXPECT_EQ(lethe_arena_stats(arena, nullptr), EINVAL);
  ASSERT_EQ(lethe_arena_destroy(arena, nullptr), 0);
  EXPECT_EQ(lethe_arena_bind(arena, nullptr), ENOENT);
  EXPECT_EQ(lethe_arena_stats(arena, &stats), ENOENT);
  EXPECT_EQ(lethe_arena_destroy(arena, nullptr), ENOENT);
  // The slot is reused with a new generation: the old handle stays stale.
  lethe_arena_t next = lethe_arena_create();
  ASSERT_NE(next, LETHE_ARENA_NONE);
  EXPECT_NE(next, arena);
  EXPECT_EQ(lethe_arena_bind(arena, nullptr), ENOENT);
  EXPECT_EQ(lethe_arena_destroy(next, nullptr), 0);
  EXPECT_EQ(lethe_arena_bound(), LETHE_ARENA_NONE);
}

TEST(ArenaApi, AnArenaBoundToAnyThreadCannotBeDestroyed) {
  lethe_arena_t arena = lethe_arena_create();
  ASSERT_EQ(lethe_arena_bind(arena, nullptr), 0);
  EXPECT_EQ(lethe_arena_destroy(arena, nullptr), EBUSY);
  ASSERT_EQ(lethe_arena_bind(LETHE_ARENA_NONE, nullptr), 0);
  // A thread that exits bound is unbound: the arena can then be destroyed.
  std::thread([arena] {
    ASSERT_EQ(lethe_arena_bind(arena, nullptr), 0);
    EXPECT_EQ(lethe_arena_destroy(arena, nullptr), EBUSY);
    void* block = lethe_malloc(100);
    lethe_free(block);
  }).join();
  lethe_arena_stats_t stats;
  ASSERT_EQ(lethe_arena_stats(arena, &stats), 0);
  EXPECT_EQ(stats.bound_threads, 0u);
  EXPECT_EQ(lethe_arena_destroy(arena, nullptr), 0);
}

TEST(ArenaApi, AtMostArenaMaxLiveArenas) {
  std::vector<lethe_arena_t> arenas;
  while (true) {
    errno = 0;
    lethe_arena_t arena = lethe_arena_create();
    if (arena == LETHE_ARENA_NONE) {
      EXPECT_EQ(errno, EAGAIN);
      break;
    }
    arenas.push_back(arena);
    ASSERT_LE(arenas.size(), size_t{LETHE_ARENA_MAX});
  }
  EXPECT_EQ(arenas.size(), size_t{LETHE_ARENA_MAX}) << "every other test destroys its arenas";
  ASSERT_EQ(lethe_arena_destroy(arenas.back(), nullptr), 0);
  arenas.back() = lethe_arena_create();
  EXPECT_NE(arenas.back(), LETHE_ARENA_NONE) << "a destroyed arena frees its place";
  for (lethe_arena_t arena : arenas) EXPECT_EQ(lethe_arena_destroy(arena, nullptr), 0);
}

TEST(ArenaApi, StatisticsSayWhetherTheyAreTracked) {
  lethe_arena_t arena = lethe_arena_create();
  void* block = nullptr;
  {
    lethe::ArenaScope scope(arena);
    block = lethe_malloc(1000);
  }
  lethe_arena_stats_t stats;
  ASSERT_EQ(lethe_arena_stats(arena, &stats), 0);
  if (Bundled()) {
    EXPECT_EQ(stats.flags, 0u);
    EXPECT_EQ(stats.allocated_bytes, lethe_usable_size(block));
    EXPECT_EQ(stats.allocation_count, 1u);
  } else {
    EXPECT_EQ(stats.flags, unsigned{LETHE_ARENA_UNTRACKED});
    EXPECT_EQ(stats.allocated_bytes, 0u);
    EXPECT_EQ(stats.mapped_bytes, 0u);
  }
  lethe_free(block);
  uint64_t left = 1;
  EXPECT_EQ(lethe_arena_destroy(arena, &left), 0);
  EXPECT_EQ(left, 0u);
  EXPECT_EQ(lethe_arena_stats(arena, &stats), ENOENT);
}

}  // namespace
