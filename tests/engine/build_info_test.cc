#include "lethe/build_info.h"

#include <gtest/gtest.h>

#include "lethe/alloc.h"

namespace lethe {
namespace {

TEST(BuildInfo, NamesTheAllocatorInUse) {
  BuildInfo info = GetBuildInfo();
  EXPECT_STREQ(info.allocator, lethe_allocator_name());
  EXPECT_NE(DescribeBuild().find(info.allocator), std::string::npos);
  EXPECT_EQ(DescribeBuild().rfind("lethe 0.", 0), 0u) << DescribeBuild();
}

}  // namespace
}  // namespace lethe
