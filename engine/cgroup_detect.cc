#include "lethe/cgroup_detect.h"

#include <vector>

#include "posix_util.h"

namespace lethe {

namespace {

std::vector<std::string_view> Split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  while (true) {
    size_t at = text.find(separator);
    parts.push_back(text.substr(0, at));
    if (at == std::string_view::npos) break;
    text.remove_prefix(at + 1);
  }
  return parts;
}

// /proc/mounts writes space, tab, newline and backslash in paths as \040-style octal escapes.
std::string UnescapeMountPath(std::string_view field) {
  std::string path;
  for (size_t i = 0; i < field.size(); ++i) {
    if (field[i] == '\\' && i + 3 < field.size() &&
        field[i + 1] >= '0' && field[i + 1] <= '3' && field[i + 2] >= '0' && field[i + 2] <= '7' &&
        field[i + 3] >= '0' && field[i + 3] <= '7') {
      path.push_back(static_cast<char>((field[i + 1] - '0') * 64 + (field[i + 2] - '0') * 8 +
                                       (field[i + 3] - '0')));
      i += 3;
    } else {
      path.push_back(field[i]);
    }
  }
  return path;
}

bool HasItem(std::string_view list, std::string_view item) {
  for (std::string_view part : Split(list, ',')) {
    if (part == item) return true;
  }
  return false;
}

std::string Join(const std::string& mount, std::string_view cgroup_path) {
  if (cgroup_path.empty() || cgroup_path == "/") return mount;
  if (!mount.empty() && mount.back() == '/') return mount + std::string(cgroup_path.substr(1));
  return mount + std::string(cgroup_path);
}

}  // namespace

CgroupInfo DetectCgroup(std::string_view proc_self_cgroup, std::string_view proc_mounts) {
  bool has_v2_line = false;
  std::string_view v2_path;
  bool memory_on_v1 = false;
  std::string_view v1_memory_path;
  for (std::string_view line : Split(proc_self_cgroup, '\n')) {
    // "ID:CONTROLLERS:PATH"; PATH may itself contain ':'.
    size_t first = line.find(':');
    if (first == std::string_view::npos) continue;
    size_t second = line.find(':', first + 1);
    if (second == std::string_view::npos) continue;
    std::string_view id = line.substr(0, first);
    std::string_view controllers = line.substr(first + 1, second - first - 1);
    std::string_view path = line.substr(second + 1);
    if (id == "0" && controllers.empty()) {
      has_v2_line = true;
      v2_path = path;
    } else if (HasItem(controllers, "memory")) {
      memory_on_v1 = true;
      v1_memory_path = path;
    }
  }

  std::string v2_mount;
  std::string v1_memory_mount;
  for (std::string_view line : Split(proc_mounts, '\n')) {
    std::vector<std::string_view> fields = Split(line, ' ');
    if (fields.size() < 4) continue;
    if (fields[2] == "cgroup2" && v2_mount.empty()) v2_mount = UnescapeMountPath(fields[1]);
    if (fields[2] == "cgroup" && HasItem(fields[3], "memory") && v1_memory_mount.empty()) {
      v1_memory_mount = UnescapeMountPath(fields[1]);
    }
  }

  CgroupInfo info;
  if (has_v2_line && !v2_mount.empty()) info.v2_dir = Join(v2_mount, v2_path);
  if (memory_on_v1) {
    info.memory = CgroupMemoryHierarchy::kV1;
    if (!v1_memory_mount.empty()) info.v1_memory_dir = Join(v1_memory_mount, v1_memory_path);
  } else if (!info.v2_dir.empty()) {
    info.memory = CgroupMemoryHierarchy::kV2;
  }
  return info;
}

std::string CgroupInfo::Describe() const {
  switch (memory) {
    case CgroupMemoryHierarchy::kV2:
      return "memory controller on cgroup v2 at " + v2_dir;
    case CgroupMemoryHierarchy::kV1:
      return "memory controller on cgroup v1" +
             (v1_memory_dir.empty() ? std::string() : " at " + v1_memory_dir) +
             " (no memory.events or memory.pressure there" +
             (v2_dir.empty() ? std::string(")") : "; the v2 tree at " + v2_dir + " has no memory controller)");
    case CgroupMemoryHierarchy::kNone:
      break;
  }
  return "no cgroup memory controller found";
}

std::string CgroupInfo::V2File(std::string_view name) const {
  if (memory != CgroupMemoryHierarchy::kV2) return {};
  return v2_dir + (v2_dir.empty() || v2_dir.back() != '/' ? "/" : "") + std::string(name);
}

CgroupInfo DetectCgroupFromFiles(const CgroupPaths& paths, std::string* error) {
  std::string self;
  std::string mounts;
  if (int read_error = internal::ReadSmallFile(paths.proc_self_cgroup, &self); read_error != 0) {
    *error = "cannot read " + paths.proc_self_cgroup + " (" + internal::ErrnoText(read_error) + ")";
    return {};
  }
  if (int read_error = internal::ReadSmallFile(paths.proc_mounts, &mounts); read_error != 0) {
    *error = "cannot read " + paths.proc_mounts + " (" + internal::ErrnoText(read_error) + ")";
    return {};
  }
  error->clear();
  return DetectCgroup(self, mounts);
}

}  // namespace lethe
