// lethe-bench-syscall — system calls per cached image load: DiskCache (one SQLite file) against a
// naive cache with one file per entry (stat, open, read, close), measured side by side in one run.
//
// How it measures:
//   1. N cached images (the acceptance corpus's files, cycled; random bytes when it is missing) are
//      written to both caches. N is checked to be at least 4x what SQLite's page cache holds, in
//      pages and in bytes, so that the loads cannot be served from SQLite's own cache.
//   2. Each cache is read by a child process (this binary, --child) under `strace -f -c`: a fresh
//      connection / a cold process, loading every image once in a random order, verifying sizes.
//      The same child with 0 loads gives the fixed cost (exec, open, close), which is subtracted:
//      per load = (calls with N loads - calls with 0 loads) / N. The DiskCache figure includes the
//      batched LRU writes and the close.
//   3. It prints both figures, the calls per load by system call, and `ratio: X` (DiskCache over
//      naive; the target is at most 0.5).
//
// Usage: lethe-bench-syscall [--count N] [--dir DIR] [--corpus DIR] [--seed S] [--mmap-bytes B]
//   --mmap-bytes 0 reads the database with pread instead of the memory map (for comparison).
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "lethe/disk_cache.h"

namespace {

namespace fs = std::filesystem;
using lethe::cache::DiskCache;
using lethe::cache::DiskCacheOptions;

struct Args {
  int count = 2000;
  std::string dir;
  std::string corpus = LETHE_DEFAULT_CORPUS_DIR;
  unsigned seed = 1;
  long long mmap_bytes = -1;  // -1: DiskCacheOptions' default
  // child mode
  std::string child_mode;  // "disk" or "naive"
  int loads = 0;
  bool help = false;  // --help: the usage went to stdout
};

bool ParseArgs(int argc, char** argv, Args* args) {
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    auto value = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    const char* v = nullptr;
    if (flag == "--count" && (v = value())) args->count = std::atoi(v);
    else if (flag == "--dir" && (v = value())) args->dir = v;
    else if (flag == "--corpus" && (v = value())) args->corpus = v;
    else if (flag == "--seed" && (v = value())) args->seed = static_cast<unsigned>(std::atoi(v));
    else if (flag == "--child" && (v = value())) args->child_mode = v;
    else if (flag == "--loads" && (v = value())) args->loads = std::atoi(v);
    else if (flag == "--mmap-bytes" && (v = value())) args->mmap_bytes = std::atoll(v);
    else {
      args->help = flag == "--help" || flag == "-h";
      std::fprintf(args->help ? stdout : stderr,
                   "usage: %s [--count N] [--dir DIR] [--corpus DIR] [--seed S] [--mmap-bytes B]\n"
                   "  loads N cached images through DiskCache and through one file per entry,\n"
                   "  counts system calls per load with strace -f -c, prints `ratio: X`\n",
                   argv[0]);
      return false;
    }
  }
  return args->count > 0;
}

// DiskCache settings shared by the writer and the reading child.
DiskCacheOptions BenchOptions(const Args& args) {
  DiskCacheOptions options;
  if (args.mmap_bytes >= 0) options.mmap_bytes = static_cast<std::uint64_t>(args.mmap_bytes);
  options.capacity_bytes = std::uint64_t{4} << 30;
  options.max_entry_bytes = std::uint64_t{64} << 20;
  return options;
}

std::string NaivePath(const std::string& dir, const std::string& url) {
  std::uint64_t hash = 1469598103934665603ull;  // FNV-1a: a stable file name per URL
  for (unsigned char c : url) hash = (hash ^ c) * 1099511628211ull;
  char name[32];
  std::snprintf(name, sizeof(name), "%016" PRIx64, hash);
  return dir + "/naive/" + name;
}

std::string ManifestPath(const std::string& dir) { return dir + "/manifest.tsv"; }

struct Image {
  std::string url;
  std::vector<std::uint8_t> bytes;
};

// The corpus files (every regular file but the notes), or random images when it is missing.
std::vector<std::vector<std::uint8_t>> SourceImages(const std::string& corpus, unsigned seed) {
  std::vector<std::vector<std::uint8_t>> images;
  std::error_code error;
  if (fs::is_directory(corpus, error)) {
    std::vector<fs::path> paths;
    for (const auto& entry : fs::recursive_directory_iterator(corpus, error)) {
      if (!entry.is_regular_file()) continue;
      std::string ext = entry.path().extension().string();
      if (ext == ".tsv" || ext == ".md" || entry.file_size() > (8u << 20)) continue;
      paths.push_back(entry.path());
    }
    std::sort(paths.begin(), paths.end());
    for (const fs::path& path : paths) {
      std::ifstream in(path, std::ios::binary);
      images.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
  }
  if (images.empty()) {
    std::mt19937 random(seed);
    for (int i = 0; i < 64; ++i) {
      std::vector<std::uint8_t> bytes(2'000 + random() % 60'000);
      for (auto& b : bytes) b = static_cast<std::uint8_t>(random());
      images.push_back(std::move(bytes));
    }
  }
  return images;
}

bool WriteAll(int fd, const std::uint8_t* data, std::size_t size) {
  while (size > 0) {
    ssize_t n = ::write(fd, data, size);
    if (n <= 0) return false;
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

// Writes N images to both caches and the manifest (url \t size). Returns total bytes, or -1.
long long Populate(const Args& args, const std::vector<std::vector<std::uint8_t>>& sources) {
  fs::create_directories(args.dir + "/naive");
  auto opened = DiskCache::Open(args.dir + "/cache.db", BenchOptions(args));
  if (!opened.ok()) {
    std::fprintf(stderr, "lethe-bench-syscall: %s\n", opened.status().ToString().c_str());
    return -1;
  }
  DiskCache& cache = *opened.value();
  std::ofstream manifest(ManifestPath(args.dir));
  long long total = 0;
  for (int i = 0; i < args.count; ++i) {
    const std::vector<std::uint8_t>& bytes = sources[static_cast<std::size_t>(i) % sources.size()];
    std::string url = "https://bench.test/images/" + std::to_string(i) + ".img";
    auto status = cache.Put(url, bytes, {"image/png", "\"" + std::to_string(i) + "\"", ""});
    if (!status.ok()) {
      std::fprintf(stderr, "lethe-bench-syscall: %s\n", status.ToString().c_str());
      return -1;
    }
    int fd = ::open(NaivePath(args.dir, url).c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || !WriteAll(fd, bytes.data(), bytes.size())) {
      std::perror("lethe-bench-syscall: writing the naive cache");
      return -1;
    }
    ::close(fd);
    manifest << url << '\t' << bytes.size() << '\n';
    total += static_cast<long long>(bytes.size());
  }
  return total;
}

// ---- the child: loads `loads` images in random order from one cache ---------------------------

// The naive cache's load: stat for the size, open, read, close.
bool NaiveLoad(const std::string& path, std::vector<std::uint8_t>* out) {
  struct stat info;
  if (::stat(path.c_str(), &info) != 0) return false;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  out->resize(static_cast<std::size_t>(info.st_size));
  std::size_t done = 0;
  while (done < out->size()) {
    ssize_t n = ::read(fd, out->data() + done, out->size() - done);
    if (n <= 0) break;
    done += static_cast<std::size_t>(n);
  }
  ::close(fd);
  return done == out->size();
}

int RunChild(const Args& args) {
  std::vector<std::pair<std::string, std::size_t>> entries;
  {
    std::ifstream manifest(ManifestPath(args.dir));
    std::string line;
    while (std::getline(manifest, line)) {
      std::size_t tab = line.find('\t');
      entries.emplace_back(line.substr(0, tab), std::stoull(line.substr(tab + 1)));
    }
  }
  std::vector<std::size_t> order(entries.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), std::mt19937(args.seed));
  order.resize(std::min<std::size_t>(order.size(), static_cast<std::size_t>(args.loads)));

  using Clock = std::chrono::steady_clock;
  std::size_t bad = 0;
  long long open_ns = 0;
  long long loads_ns = 0;
  auto nanoseconds = [](Clock::duration d) {
    return static_cast<long long>(std::chrono::duration_cast<std::chrono::nanoseconds>(d).count());
  };
  if (args.child_mode == "disk") {
    auto start = Clock::now();
    auto opened = DiskCache::Open(args.dir + "/cache.db", BenchOptions(args));
    if (!opened.ok()) {
      std::fprintf(stderr, "child: %s\n", opened.status().ToString().c_str());
      return 1;
    }
    open_ns = nanoseconds(Clock::now() - start);
    start = Clock::now();
    for (std::size_t i : order) {
      auto got = opened.value()->Get(entries[i].first);
      if (!got.ok() || got->bytes.size() != entries[i].second) ++bad;
    }
    (void)opened.value()->Flush();  // the loads' LRU touches are part of their cost
    loads_ns = nanoseconds(Clock::now() - start);
  } else {
    auto start = Clock::now();
    for (std::size_t i : order) {
      // A fresh buffer per load, as DiskCache::Get returns one that the caller owns.
      std::vector<std::uint8_t> bytes;
      if (!NaiveLoad(NaivePath(args.dir, entries[i].first), &bytes) ||
          bytes.size() != entries[i].second) {
        ++bad;
      }
    }
    loads_ns = nanoseconds(Clock::now() - start);
  }
  std::printf("%lld %lld\n", loads_ns, open_ns);
  if (bad != 0) std::fprintf(stderr, "child %s: %zu loads failed\n", args.child_mode.c_str(), bad);
  return bad == 0 ? 0 : 1;
}

// ---- the parent: counting -------------------------------------------------------------------

std::string SelfPath() {
  std::error_code error;
  fs::path self = fs::read_symlink("/proc/self/exe", error);
  return error ? std::string() : self.string();
}

// Runs `argv` and waits. Returns its exit status, or -1 when it could not run. Captures stdout.
int Run(const std::vector<std::string>& argv, std::string* out) {
  int fds[2];
  if (::pipe(fds) != 0) return -1;
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(fds[1], STDOUT_FILENO);
    ::close(fds[0]);
    ::close(fds[1]);
    std::vector<char*> raw;
    for (const std::string& arg : argv) raw.push_back(const_cast<char*>(arg.c_str()));
    raw.push_back(nullptr);
    ::execvp(raw[0], raw.data());
    std::fprintf(stderr, "lethe-bench-syscall: cannot run %s: %s\n", raw[0], std::strerror(errno));
    ::_exit(127);
  }
  ::close(fds[1]);
  char buffer[4096];
  ssize_t n;
  out->clear();
  while ((n = ::read(fds[0], buffer, sizeof(buffer))) > 0) out->append(buffer, static_cast<std::size_t>(n));
  ::close(fds[0]);
  int status = 0;
  if (pid < 0 || ::waitpid(pid, &status, 0) < 0) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Calls per system call name from `strace -c` output, and "total".
std::map<std::string, long long> ParseStraceSummary(const std::string& path) {
  std::map<std::string, long long> calls;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::vector<std::string> tokens;
    std::string token;
    while (fields >> token) tokens.push_back(token);
    // "% time seconds usecs/call calls [errors] syscall"
    if (tokens.size() < 5 || !std::isdigit(static_cast<unsigned char>(tokens[0][0]))) continue;
    calls[tokens.back()] += std::atoll(tokens[3].c_str());
  }
  return calls;
}

struct Count {
  std::map<std::string, long long> calls;
  bool ok = false;
};

Count CountChild(const Args& args, const std::string& mode, int loads) {
  Count count;
  std::string summary = args.dir + "/strace-" + mode + "-" + std::to_string(loads) + ".txt";
  std::string out;
  int status = Run({"strace", "-f", "-c", "-o", summary, SelfPath(), "--child", mode, "--dir",
                    args.dir, "--loads", std::to_string(loads), "--seed",
                    std::to_string(args.seed), "--mmap-bytes", std::to_string(args.mmap_bytes)},
                   &out);
  if (status != 0) {
    std::fprintf(stderr, "lethe-bench-syscall: the %s child under strace exited with %d%s\n",
                 mode.c_str(), status,
                 status == 127 ? " (is strace installed? apt-get install strace)" : "");
    return count;
  }
  count.calls = ParseStraceSummary(summary);
  count.ok = count.calls.count("total") != 0;
  return count;
}

// Nanoseconds per load (and for the open) from an unobserved child (no strace).
struct Timing {
  double per_load_ns = 0;
  double open_ns = 0;
};

Timing TimeLoads(const Args& args, const std::string& mode) {
  std::string out;
  Timing timing;
  if (Run({SelfPath(), "--child", mode, "--dir", args.dir, "--loads", std::to_string(args.count),
           "--seed", std::to_string(args.seed + 1), "--mmap-bytes", std::to_string(args.mmap_bytes)},
          &out) != 0) {
    return timing;
  }
  std::istringstream fields(out);
  fields >> timing.per_load_ns >> timing.open_ns;
  timing.per_load_ns /= args.count;
  return timing;
}

void PrintBreakdown(const char* name, const Count& base, const Count& loaded, int n) {
  std::printf("  %s, calls per load by system call:", name);
  std::vector<std::pair<double, std::string>> rows;
  for (const auto& [call, calls] : loaded.calls) {
    if (call == "total") continue;
    auto it = base.calls.find(call);
    long long extra = calls - (it == base.calls.end() ? 0 : it->second);
    if (extra > 0) rows.emplace_back(static_cast<double>(extra) / n, call);
  }
  std::sort(rows.rbegin(), rows.rend());
  for (std::size_t i = 0; i < rows.size() && i < 8; ++i) {
    std::printf(" %s %.3f%s", rows[i].second.c_str(), rows[i].first, i + 1 < rows.size() ? "," : "");
  }
  std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  if (!ParseArgs(argc, argv, &args)) return args.help ? 0 : 2;
  if (!args.child_mode.empty()) return RunChild(args);

  bool own_dir = args.dir.empty();
  if (own_dir) {
    std::string pattern = (fs::temp_directory_path() / "lethe-bench-syscall-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) {
      std::perror("lethe-bench-syscall: mkdtemp");
      return 1;
    }
    args.dir = pattern;
  }
  DiskCacheOptions options = BenchOptions(args);
  std::vector<std::vector<std::uint8_t>> sources = SourceImages(args.corpus, args.seed);
  long long total_bytes = Populate(args, sources);
  if (total_bytes < 0) return 1;

  // What SQLite's page cache holds: cache_size = -page_cache_kib KiB, in pages of the file's size.
  const long long cache_bytes = options.page_cache_kib * 1024;
  const long long cache_pages = cache_bytes / options.page_size_bytes;
  std::printf("DiskCache: page size %u bytes (new file), mmap_size %llu bytes\n",
              options.page_size_bytes, static_cast<unsigned long long>(options.mmap_bytes));
  std::printf("images: %d (%zu distinct sources), %.1f MiB; SQLite page cache: %lld KiB = %lld pages "
              "of %u bytes\n",
              args.count, sources.size(), static_cast<double>(total_bytes) / (1 << 20),
              cache_bytes / 1024, cache_pages, options.page_size_bytes);
  std::printf("images / page-cache pages: %.1fx; image bytes / page-cache bytes: %.1fx (need >= 4x)\n",
              static_cast<double>(args.count) / static_cast<double>(cache_pages),
              static_cast<double>(total_bytes) / static_cast<double>(cache_bytes));
  if (args.count < 4 * cache_pages || total_bytes < 4 * cache_bytes) {
    std::fprintf(stderr, "lethe-bench-syscall: N is below 4x the page cache; raise --count\n");
    return 1;
  }

  Count disk_base = CountChild(args, "disk", 0);
  Count disk_loaded = CountChild(args, "disk", args.count);
  Count naive_base = CountChild(args, "naive", 0);
  Count naive_loaded = CountChild(args, "naive", args.count);
  if (!disk_base.ok || !disk_loaded.ok || !naive_base.ok || !naive_loaded.ok) return 1;

  double disk_per_load =
      static_cast<double>(disk_loaded.calls["total"] - disk_base.calls["total"]) / args.count;
  double naive_per_load =
      static_cast<double>(naive_loaded.calls["total"] - naive_base.calls["total"]) / args.count;
  // Time is secondary here (system calls are the figure) and noisy on a shared machine: the best
  // of three alternating unobserved runs of each.
  Timing disk_time;
  Timing naive_time;
  for (int round = 0; round < 3; ++round) {
    Timing disk = TimeLoads(args, "disk");
    Timing naive = TimeLoads(args, "naive");
    if (round == 0 || disk.per_load_ns < disk_time.per_load_ns) disk_time = disk;
    if (round == 0 || naive.per_load_ns < naive_time.per_load_ns) naive_time = naive;
  }
  double disk_ns = disk_time.per_load_ns;
  double naive_ns = naive_time.per_load_ns;
  std::printf("loads: %d in random order, fresh connection / process, counted with strace -f -c\n",
              args.count);
  std::printf("DiskCache (SQLite):   %.3f system calls per load (%lld with loads, %lld without), "
              "%.1f us per load unobserved (best of 3)\n",
              disk_per_load, disk_loaded.calls["total"], disk_base.calls["total"], disk_ns / 1000);
  std::printf("naive file per entry: %.3f system calls per load (%lld with loads, %lld without), "
              "%.1f us per load unobserved (best of 3)\n",
              naive_per_load, naive_loaded.calls["total"], naive_base.calls["total"],
              naive_ns / 1000);
  std::printf("DiskCache open (fresh connection, quick_check of the whole file): %.1f ms\n",
              disk_time.open_ns / 1e6);
  PrintBreakdown("DiskCache", disk_base, disk_loaded, args.count);
  PrintBreakdown("naive", naive_base, naive_loaded, args.count);
  std::printf("ratio: %.3f\n", naive_per_load > 0 ? disk_per_load / naive_per_load : 0.0);

  if (own_dir) {
    std::error_code ignored;
    fs::remove_all(args.dir, ignored);
  }
  return 0;
}
