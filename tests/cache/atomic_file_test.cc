#include "lethe/atomic_file.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <iterator>

namespace lethe {
namespace {

namespace fs = std::filesystem;

class AtomicFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    directory_ = fs::temp_directory_path() / ("lethe-atomic-" + std::to_string(getpid()));
    fs::create_directories(directory_);
  }
  void TearDown() override { fs::remove_all(directory_); }
  std::string Read(const fs::path& path) {
    std::ifstream file(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(file), {}};
  }
  size_t FileCount() {
    return static_cast<size_t>(std::distance(fs::directory_iterator(directory_), fs::directory_iterator()));
  }
  fs::path directory_;
};

TEST_F(AtomicFileTest, WritesAndReplacesWholeFiles) {
  std::string error;
  fs::path path = directory_ / "report.json";
  ASSERT_TRUE(WriteFileAtomically(path.string(), "first", &error)) << error;
  EXPECT_EQ(Read(path), "first");
  ASSERT_TRUE(WriteFileAtomically(path.string(), "second, longer", &error)) << error;
  EXPECT_EQ(Read(path), "second, longer");
  EXPECT_EQ(FileCount(), 1u);  // no temporary left behind
}

TEST_F(AtomicFileTest, MissingDirectoryIsAClearError) {
  std::string error;
  EXPECT_FALSE(WriteFileAtomically((directory_ / "no/such/dir/x").string(), "x", &error));
  EXPECT_NE(error.find("cannot create: No such file or directory"), std::string::npos) << error;
}

// A full disk, simulated with RLIMIT_FSIZE in a child process: the write fails part-way, the
// earlier file stays whole and no temporary is left.
TEST_F(AtomicFileTest, FullDiskKeepsTheEarlierFileAndLeavesNoTemporary) {
  fs::path path = directory_ / "trace.json";
  std::string error;
  ASSERT_TRUE(WriteFileAtomically(path.string(), "earlier", &error));
  auto write_with_small_disk = [&path] {
    std::signal(SIGXFSZ, SIG_IGN);
    rlimit limit{4096, 4096};
    setrlimit(RLIMIT_FSIZE, &limit);
    std::string child_error;
    bool ok = WriteFileAtomically(path.string(), std::string(100000, 'x'), &child_error);
    bool clear = child_error.find("write failed: File too large") != std::string::npos;
    std::_Exit(!ok && clear ? 0 : 1);
  };
  EXPECT_EXIT(write_with_small_disk(), ::testing::ExitedWithCode(0), "");
  EXPECT_EQ(Read(path), "earlier");
  EXPECT_EQ(FileCount(), 1u);
}

}  // namespace
}  // namespace lethe
