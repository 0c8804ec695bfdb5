// disk_cache_test_util.h — helpers shared by the DiskCache tests: a temporary directory that
// removes itself, and deterministic payloads.
#ifndef LETHE_TESTS_CACHE_DISK_CACHE_TEST_UTIL_H_
#define LETHE_TESTS_CACHE_DISK_CACHE_TEST_UTIL_H_

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace lethe::cache::testing {

class TempDir {
 public:
  // Under `base` (default: the system temporary directory).
  explicit TempDir(std::filesystem::path base = std::filesystem::temp_directory_path()) {
    std::string pattern = (base / "lethe-disk-XXXXXX").string();
    path_ = ::mkdtemp(pattern.data()) != nullptr ? pattern : std::string();
  }
  ~TempDir() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// `size` bytes that depend on `seed` (xorshift), so that a reader can recompute what was written.
inline std::vector<std::uint8_t> Payload(std::uint64_t seed, std::size_t size) {
  std::vector<std::uint8_t> bytes(size);
  std::uint64_t state = seed * 0x9E3779B97F4A7C15ull + 1;
  for (std::size_t i = 0; i < size; ++i) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    bytes[i] = static_cast<std::uint8_t>(state >> 32);
  }
  return bytes;
}

}  // namespace lethe::cache::testing

#endif  // LETHE_TESTS_CACHE_DISK_CACHE_TEST_UTIL_H_
