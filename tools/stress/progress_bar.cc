// The progress bar (see progress_bar.h).
#include "progress_bar.h"

#include <unistd.h>

#include <algorithm>

namespace lethe::stress {

namespace {
constexpr int kBarWidth = 40;
}

ProgressBar::ProgressBar(std::string label, int total, bool enabled)
    : label_(std::move(label)), total_(std::max(1, total)), active_(enabled && isatty(STDERR_FILENO)) {}

ProgressBar::~ProgressBar() { Finish(); }

std::string ProgressBar::Render(const std::string& label, int done, int total, int width) {
  total = std::max(1, total);
  done = std::clamp(done, 0, total);
  const int filled = done * width / total;
  std::string bar = label + " [" + std::string(static_cast<size_t>(filled), '#') +
                    std::string(static_cast<size_t>(width - filled), '.') + "] " +
                    std::to_string(done) + "/" + std::to_string(total);
  return bar;
}

void ProgressBar::Update(int done) {
  if (!active_ || done == last_drawn_) return;
  last_drawn_ = done;
  std::fprintf(stderr, "\r%s", Render(label_, done, total_, kBarWidth).c_str());
  std::fflush(stderr);
  drawn_ = true;
}

void ProgressBar::Finish() {
  if (drawn_) {
    std::fputc('\n', stderr);
    drawn_ = false;
  }
}

}  // namespace lethe::stress
