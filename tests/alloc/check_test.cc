#include "lethe/check.h"

#include <gtest/gtest.h>

namespace {

int CountingCondition(int* evaluations) {
  ++*evaluations;
  return 1;
}

TEST(Check, PassingCheckDoesNothing) {
  int evaluations = 0;
  LETHE_CHECK(CountingCondition(&evaluations) == 1, "never printed");
  LETHE_CHECK(evaluations == 1);
  EXPECT_EQ(evaluations, 1);
}

TEST(CheckDeathTest, FailingCheckPrintsConditionMessageFileAndLine) {
  EXPECT_DEATH(LETHE_CHECK(1 + 1 == 3, "arithmetic is broken"),
               "lethe: CHECK failed: 1 \\+ 1 == 3: arithmetic is broken \\(.*check_test.cc:[0-9]+\\)");
}

TEST(CheckDeathTest, FailingCheckWithoutMessage) {
  int value = 0;
  EXPECT_DEATH(LETHE_CHECK(value != 0), "lethe: CHECK failed: value != 0 \\(.*check_test.cc");
}

TEST(CheckDeathTest, FatalPointerPrintsHexAddress) {
  EXPECT_DEATH(lethe_fatal_pointer("free(): invalid pointer ", reinterpret_cast<void*>(0x7f12ab),
                                   ""),
               "lethe: free\\(\\): invalid pointer 0x7f12ab");
}

#if LETHE_DCHECK_IS_ON
TEST(CheckDeathTest, DcheckAbortsInDebugBuilds) {
  EXPECT_DEATH(LETHE_DCHECK(false, "debug only"), "CHECK failed: false: debug only");
}
#else
TEST(Check, DcheckDoesNotEvaluateItsConditionInReleaseBuilds) {
  int evaluations = 0;
  LETHE_DCHECK(CountingCondition(&evaluations) == 0, "not evaluated");
  EXPECT_EQ(evaluations, 0);
}
#endif

}  // namespace
