// lethe/atomic_file.h — writing a whole file or nothing: reports, traces and screenshots are
// written to a temporary file beside the target and renamed over it only when every byte reached
// the disk, so a full disk or a crash never leaves a partial file that looks whole.
// Any thread; concurrent writers of one path each produce a whole file, the last rename wins.
#ifndef LETHE_ATOMIC_FILE_H_
#define LETHE_ATOMIC_FILE_H_

#include <string>
#include <string_view>

namespace lethe {

// Writes `contents` to `path`. On failure returns false, sets *error to a readable reason
// ("out/trace.json: write failed: No space left on device") and leaves any earlier file at
// `path` untouched.
bool WriteFileAtomically(const std::string& path, std::string_view contents, std::string* error);

}  // namespace lethe

#endif  // LETHE_ATOMIC_FILE_H_
