// tools/stress/progress_bar.h — a one-line progress bar on stderr, redrawn in place; silent when
// stderr is not a terminal (logs and CI stay clean) or when disabled.
// One thread (the parent's main loop).
#ifndef LETHE_TOOLS_STRESS_PROGRESS_BAR_H_
#define LETHE_TOOLS_STRESS_PROGRESS_BAR_H_

#include <cstdio>
#include <string>

namespace lethe::stress {

class ProgressBar {
 public:
  // enabled: draw at all (the tool passes false for --no-progress); a non-tty stderr also
  // disables it.
  ProgressBar(std::string label, int total, bool enabled);
  ~ProgressBar();  // ends the line if anything was drawn
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  void Update(int done);
  void Finish();
  bool active() const { return active_; }
  // The text of the bar for `done` of `total` (no carriage return), for tests.
  static std::string Render(const std::string& label, int done, int total, int width);

 private:
  std::string label_;
  int total_;
  bool active_;
  bool drawn_ = false;
  int last_drawn_ = -1;
};

}  // namespace lethe::stress

#endif  // LETHE_TOOLS_STRESS_PROGRESS_BAR_H_
