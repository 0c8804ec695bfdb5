#include "lethe/pressure_source.h"

#include <unistd.h>

#include "lethe/check.h"

namespace lethe {

LogFunction StderrLog() {
  return [](std::string_view line) {
    std::string text = "lethe: ";
    text += line;
    text += '\n';
    // One write keeps lines from different threads whole; a failed log write has nowhere to go.
    ssize_t ignored = write(STDERR_FILENO, text.data(), text.size());
    (void)ignored;
  };
}

PressureSource::PressureSource(PressureContext context, std::string name)
    : context_(std::move(context)), name_(std::move(name)) {
  LETHE_CHECK(context_.loop != nullptr, "a pressure source needs a loop");
  if (!context_.log) context_.log = StderrLog();
}

void PressureSource::Dispatch(MemoryPressureLevel level) {
  LETHE_DCHECK(context_.loop->OnLoopThread(), "pressure is delivered on the loop thread");
  ++event_count_;
  last_level_ = level;
  if (context_.on_pressure) context_.on_pressure(level, name_);
}

void PressureSource::ReportOnce(std::string_view key, std::string_view line) {
  if (!reported_.emplace(key).second) return;
  context_.log(line);
}

}  // namespace lethe
