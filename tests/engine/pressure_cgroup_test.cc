#include "lethe/pressure_cgroup.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "engine_test_util.h"
#include "lethe/cgroup_detect.h"

namespace lethe {
namespace {

using testing::PressureEvent;
using testing::Recorder;
using testing::TempDir;
using testing::WriteFile;

constexpr char kPureV2Mounts[] =
    "sysfs /sys sysfs rw,nosuid 0 0\n"
    "cgroup2 /sys/fs/cgroup cgroup2 rw,nosuid,nodev,noexec,relatime,nsdelegate 0 0\n";

// What a hybrid host (memory on v1, an empty v2 tree beside it) shows; taken from a CI machine.
constexpr char kHybridSelf[] =
    "9:name=systemd:/\n8:pids:/\n4:memory:/process_api/b113a49b\n1:cpu:/\n0::/\n";
constexpr char kHybridMounts[] =
    "tmpfs /sys/fs/cgroup tmpfs rw,relatime,mode=755 0 0\n"
    "cgroup /sys/fs/cgroup/cpu cgroup rw,relatime,cpu 0 0\n"
    "cgroup /sys/fs/cgroup/memory cgroup rw,relatime,memory 0 0\n"
    "cgroup2 /sys/fs/cgroup/unified cgroup2 rw,relatime 0 0\n";

TEST(CgroupDetect, FindsTheMemoryControllerOnAPureV2Host) {
  CgroupInfo info = DetectCgroup("0::/user.slice/app.service\n", kPureV2Mounts);
  EXPECT_EQ(info.memory, CgroupMemoryHierarchy::kV2);
  EXPECT_EQ(info.v2_dir, "/sys/fs/cgroup/user.slice/app.service");
  EXPECT_EQ(info.V2File("memory.events"), "/sys/fs/cgroup/user.slice/app.service/memory.events");
  EXPECT_NE(info.Describe().find("cgroup v2 at /sys/fs/cgroup/user.slice/app.service"),
            std::string::npos);
}

TEST(CgroupDetect, RootCgroupIsTheMountItself) {
  CgroupInfo info = DetectCgroup("0::/\n", kPureV2Mounts);
  EXPECT_EQ(info.v2_dir, "/sys/fs/cgroup");
  EXPECT_EQ(info.V2File("memory.pressure"), "/sys/fs/cgroup/memory.pressure");
}

TEST(CgroupDetect, SeesTheMemoryControllerOnV1OnAHybridHost) {
  CgroupInfo info = DetectCgroup(kHybridSelf, kHybridMounts);
  EXPECT_EQ(info.memory, CgroupMemoryHierarchy::kV1);
  EXPECT_EQ(info.v1_memory_dir, "/sys/fs/cgroup/memory/process_api/b113a49b");
  EXPECT_EQ(info.v2_dir, "/sys/fs/cgroup/unified");
  EXPECT_EQ(info.V2File("memory.events"), "");
  std::string description = info.Describe();
  EXPECT_NE(description.find("cgroup v1 at /sys/fs/cgroup/memory/process_api/b113a49b"),
            std::string::npos) << description;
  EXPECT_NE(description.find("no memory controller"), std::string::npos) << description;
}

TEST(CgroupDetect, UsesTheUnifiedTreeWhenNoV1HierarchyHasMemory) {
  CgroupInfo info = DetectCgroup("3:cpu,cpuacct:/\n0::/a\n",
                                 "cgroup /sys/fs/cgroup/cpu cgroup rw,cpu,cpuacct 0 0\n"
                                 "cgroup2 /sys/fs/cgroup/unified cgroup2 rw 0 0\n");
  EXPECT_EQ(info.memory, CgroupMemoryHierarchy::kV2);
  EXPECT_EQ(info.v2_dir, "/sys/fs/cgroup/unified/a");
}

TEST(CgroupDetect, DecodesEscapedMountPaths) {
  CgroupInfo info = DetectCgroup("0::/x\n", "none /mnt/my\\040cgroups cgroup2 rw 0 0\n");
  EXPECT_EQ(info.v2_dir, "/mnt/my cgroups/x");
}

TEST(CgroupDetect, ReportsNothingWithoutAnyCgroup) {
  CgroupInfo info = DetectCgroup("", "proc /proc proc rw 0 0\n");
  EXPECT_EQ(info.memory, CgroupMemoryHierarchy::kNone);
  EXPECT_EQ(info.Describe(), "no cgroup memory controller found");
  // A v2 line without a cgroup2 mount is no use either.
  EXPECT_EQ(DetectCgroup("0::/a\n", "").memory, CgroupMemoryHierarchy::kNone);
}

TEST(CgroupDetect, ReadsTheFilesAtInjectedPathsAndReportsAMissingOne) {
  TempDir dir;
  WriteFile(dir.File("cgroup"), "0::/svc\n");
  WriteFile(dir.File("mounts"), kPureV2Mounts);
  std::string error;
  CgroupInfo info = DetectCgroupFromFiles({dir.File("cgroup"), dir.File("mounts")}, &error);
  EXPECT_TRUE(error.empty()) << error;
  EXPECT_EQ(info.v2_dir, "/sys/fs/cgroup/svc");
  info = DetectCgroupFromFiles({dir.File("missing"), dir.File("mounts")}, &error);
  EXPECT_EQ(info.memory, CgroupMemoryHierarchy::kNone);
  EXPECT_NE(error.find("ENOENT"), std::string::npos) << error;
}

TEST(MemoryEvents, ParsesTheKernelsCounters) {
  auto counters = ParseMemoryEvents("low 1\nhigh 22\nmax 3\noom 0\noom_kill 0\noom_group_kill 0\n");
  ASSERT_TRUE(counters);
  EXPECT_EQ(counters->at("high"), 22u);
  EXPECT_EQ(counters->at("oom_group_kill"), 0u);
  EXPECT_FALSE(ParseMemoryEvents(""));
  EXPECT_FALSE(ParseMemoryEvents("some avg10=0.00\n"));
}

std::string Events(int high, int max, int oom = 0, int low = 0) {
  return "low " + std::to_string(low) + "\nhigh " + std::to_string(high) + "\nmax " +
         std::to_string(max) + "\noom " + std::to_string(oom) + "\noom_kill 0\n";
}

class MemoryEventsSourceTest : public ::testing::Test {
 protected:
  MemoryEventsSourceTest() : loop_(clock_, testing::NoDecayTick()) {}

  std::unique_ptr<MemoryEventsPressureSource> Make(MemoryEventsOptions options) {
    return std::make_unique<MemoryEventsPressureSource>(recorder_.Context(loop_), std::move(options));
  }

  ManualClock clock_;
  EventLoop loop_;
  Recorder recorder_;
  TempDir dir_;
};

TEST_F(MemoryEventsSourceTest, HighRisingIsModerateAndMaxRisingIsCritical) {
  std::string path = dir_.File("memory.events");
  WriteFile(path, Events(0, 0));
  auto source = Make({path, {}});
  ASSERT_TRUE(source->Start()) << recorder_.AllLog();

  WriteFile(path, Events(1, 0));
  loop_.RunUntilIdle();
  WriteFile(path, Events(1, 1));
  loop_.RunUntilIdle();
  WriteFile(path, Events(2, 2, 1));  // several at once: one dispatch at the highest level
  loop_.RunUntilIdle();
  EXPECT_EQ(recorder_.events,
            (std::vector<PressureEvent>{{MemoryPressureLevel::kModerate, "cgroup"},
                                        {MemoryPressureLevel::kCritical, "cgroup"},
                                        {MemoryPressureLevel::kCritical, "cgroup"}}));
  EXPECT_EQ(source->counter("max"), 2u);
}

TEST_F(MemoryEventsSourceTest, ChangesThatAreNotPressureDispatchNothing) {
  std::string path = dir_.File("memory.events");
  WriteFile(path, Events(5, 1));
  auto source = Make({path, {}});
  ASSERT_TRUE(source->Start());
  WriteFile(path, Events(5, 1, 0, /*low=*/3));  // only "low" moved
  loop_.RunUntilIdle();
  WriteFile(path, Events(5, 1));  // rewritten, same counters
  loop_.RunUntilIdle();
  EXPECT_TRUE(recorder_.events.empty());
  EXPECT_TRUE(source->active());
}

TEST_F(MemoryEventsSourceTest, DeletedFileMeansTheSourceIsGoneReportedOnce) {
  std::string path = dir_.File("memory.events");
  WriteFile(path, Events(0, 0));
  auto source = Make({path, {}});
  ASSERT_TRUE(source->Start());
  ASSERT_EQ(std::remove(path.c_str()), 0);
  loop_.RunUntilIdle();
  EXPECT_FALSE(source->active());
  EXPECT_EQ(loop_.watch_count(), 0u);
  EXPECT_EQ(recorder_.LogCount("gone"), 1u) << recorder_.AllLog();
}

TEST_F(MemoryEventsSourceTest, FindsTheFileOfThisProcesssCgroupAndSaysWhatItUses) {
  std::string mount = dir_.File("cgroup2");
  WriteFile(dir_.File("self-cgroup"), "0::/app.slice\n");
  WriteFile(dir_.File("mounts"), "cgroup2 " + mount + " cgroup2 rw 0 0\n");
  WriteFile(mount + "/app.slice/memory.events", Events(0, 0));
  auto source = Make({"", {dir_.File("self-cgroup"), dir_.File("mounts")}});
  ASSERT_TRUE(source->Start()) << recorder_.AllLog();
  EXPECT_EQ(source->path(), mount + "/app.slice/memory.events");
  EXPECT_EQ(recorder_.LogCount("memory controller on cgroup v2 at " + mount + "/app.slice"), 1u)
      << recorder_.AllLog();
  WriteFile(source->path(), Events(1, 0));
  loop_.RunUntilIdle();
  EXPECT_EQ(recorder_.events.size(), 1u);
}

TEST_F(MemoryEventsSourceTest, CgroupV1IsReportedOnceAndTheSourceStaysOff) {
  WriteFile(dir_.File("self-cgroup"), kHybridSelf);
  WriteFile(dir_.File("mounts"), kHybridMounts);
  auto source = Make({"", {dir_.File("self-cgroup"), dir_.File("mounts")}});
  EXPECT_FALSE(source->Start());
  ASSERT_EQ(recorder_.log.size(), 1u);
  EXPECT_NE(recorder_.log[0].find("cgroup v1"), std::string::npos) << recorder_.log[0];
  EXPECT_NE(recorder_.log[0].find("source is off"), std::string::npos) << recorder_.log[0];
}

TEST_F(MemoryEventsSourceTest, UnreadableProcFilesAreReported) {
  auto source = Make({"", {dir_.File("nope"), dir_.File("nope")}});
  EXPECT_FALSE(source->Start());
  EXPECT_EQ(recorder_.LogCount("cannot read"), 1u) << recorder_.AllLog();
}

TEST_F(MemoryEventsSourceTest, MissingOrMalformedFilesAreReported) {
  auto missing = Make({dir_.File("memory.events"), {}});
  EXPECT_FALSE(missing->Start());
  EXPECT_EQ(recorder_.LogCount("ENOENT"), 1u) << recorder_.AllLog();
  WriteFile(dir_.File("bogus"), "hello world\n");
  auto malformed = Make({dir_.File("bogus"), {}});
  EXPECT_FALSE(malformed->Start());
  EXPECT_EQ(recorder_.LogCount("no 'high' or 'max'"), 1u) << recorder_.AllLog();
  EXPECT_EQ(loop_.watch_count(), 0u);
}

// This machine's own cgroup: where it has a v2 memory controller the source runs and says where;
// elsewhere it says why not in one line, and the test reports itself skipped with that line (the
// path that runs is covered on fake files above).
TEST_F(MemoryEventsSourceTest, RunsOnThisMachinesCgroupAndSaysWhatItUses) {
  auto source = Make({});
  if (!source->Start()) {
    ASSERT_EQ(recorder_.log.size(), 1u) << recorder_.AllLog();
    GTEST_SKIP() << "no usable cgroup v2 memory.events here: " << recorder_.log[0];
  }
  EXPECT_EQ(recorder_.LogCount("memory controller on cgroup v2"), 1u) << recorder_.AllLog();
  EXPECT_TRUE(source->active());
  EXPECT_EQ(loop_.watch_count(), 1u);
}

}  // namespace
}  // namespace lethe
