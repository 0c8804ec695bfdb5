// lethe-stress's target on the real Engine (engine_target.cc), on a page of the sample site the
// build generates, in simulated time: the regret it reports counts both caches' discards undone
// when a run decodes again what it has just discarded, and adds them up.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>

#include "stress_samples.h"
#include "stress_target.h"

namespace lethe::stress {
namespace {

using std::chrono::seconds;

constexpr size_t kSurfaces = 0;  // kCacheNames order
constexpr size_t kImages = 1;

const std::string kPage = std::string(LETHE_SAMPLE_SITE_DIR) + "/pages/page-01.html";

std::unique_ptr<StressTarget> LetheTarget() {
  TargetOptions options;
  options.expiration_enabled = true;
  options.simulated_time = true;
  std::string error;
  std::unique_ptr<StressTarget> target = CreateStressTarget(options, &error);
  EXPECT_NE(target, nullptr) << error;
  return target;
}

// Scrolls window `id` from the top to the bottom and back, drawing at each step (each draw waits
// for its decodes), so that every image of the page has been decoded.
void ScrollThrough(StressTarget& target, int id) {
  const int bottom = target.PageHeight(id);
  for (int y = 0; y <= bottom; y += 400) {
    target.ScrollTo(id, y);
    target.DrawFrame();
  }
  target.ScrollTo(id, 0);
  target.DrawFrame();
}

// Runs the engine a second at a time until cache `which` holds fewer bytes than now (something was
// discarded); false when nothing went within `limit`.
bool RunUntilDiscard(StressTarget& target, size_t which, seconds limit) {
  const uint64_t before = target.Caches()[which];
  for (seconds waited{0}; waited < limit; waited += seconds(1)) {
    target.RunFor(seconds(1));
    if (target.Caches()[which] < before) return true;
  }
  return false;
}

TEST(StressEngineTarget, SurfacesDecodedAgainRightAfterTheirExpiryAreRegret) {
  std::unique_ptr<StressTarget> target = LetheTarget();
  ASSERT_NE(target, nullptr);
  const int id = target->OpenWindow();
  ASSERT_EQ(target->Navigate(id, kPage), "");
  ScrollThrough(*target, id);
  EXPECT_EQ(target->Regret(), RegretCounts{});
  // The images below the viewport are unlocked: they expire within two 10 s generations.
  ASSERT_TRUE(RunUntilDiscard(*target, kSurfaces, seconds(60)));
  ScrollThrough(*target, id);  // within a second of the discard: decoded again
  const RegretCounts regret = target->Regret();
  EXPECT_GT(regret[kSurfaceRegretCount], 0u);
  EXPECT_GT(regret[kSurfaceRegretBytes], 0u);
  EXPECT_GT(regret[kSurfaceRegretDecodeNs], 0u);
  EXPECT_EQ(regret[kTotalRegretCount], regret[kSurfaceRegretCount] + regret[kImageRegretCount]);
  EXPECT_EQ(regret[kTotalRegretBytes], regret[kSurfaceRegretBytes] + regret[kImageRegretBytes]);
}

TEST(StressEngineTarget, CompressedBytesReadAgainRightAfterTheirDropAreImageRegret) {
  std::unique_ptr<StressTarget> target = LetheTarget();
  ASSERT_NE(target, nullptr);
  const int first = target->OpenWindow();
  ASSERT_EQ(target->Navigate(first, kPage), "");
  target->DrawFrame();
  target->CloseWindow(first);  // its compressed bytes are referenced by no document now
  // Unreferenced compressed bytes expire within two 60 s generations.
  ASSERT_TRUE(RunUntilDiscard(*target, kImages, seconds(300)));
  const RegretCounts before = target->Regret();
  EXPECT_EQ(before[kImageRegretCount], 0u);
  const int second = target->OpenWindow();
  ASSERT_EQ(target->Navigate(second, kPage), "");  // the same images, read again at once
  const RegretCounts regret = target->Regret();
  EXPECT_GT(regret[kImageRegretCount], 0u);
  EXPECT_GT(regret[kImageRegretBytes], 0u);
  EXPECT_EQ(regret[kTotalRegretCount], regret[kSurfaceRegretCount] + regret[kImageRegretCount]);
  EXPECT_EQ(regret[kTotalRegretBytes], regret[kSurfaceRegretBytes] + regret[kImageRegretBytes]);
  EXPECT_GE(regret[kTotalRegretCount], regret[kImageRegretCount]);
}

}  // namespace
}  // namespace lethe::stress
