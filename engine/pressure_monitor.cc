#include "lethe/pressure_monitor.h"

#include "lethe/check.h"

namespace lethe {

namespace {

// The API: events come from Simulate, not from the OS.
class ApiPressureSource final : public PressureSource {
 public:
  explicit ApiPressureSource(PressureContext context) : PressureSource(std::move(context), "api") {}
  bool Start() override {
    set_active(true);
    return true;
  }
  void Deliver(MemoryPressureLevel level) { Dispatch(level); }
};

}  // namespace

PressureMonitor::PressureMonitor(EventLoop& loop, PressureCallback on_pressure, LogFunction log,
                                 PressureMonitorOptions options)
    : loop_(loop),
      on_pressure_(std::move(on_pressure)),
      log_(log ? std::move(log) : StderrLog()),
      options_(std::move(options)) {}

PressureMonitor::~PressureMonitor() {
  api_.reset();
  // Sources unwatch their fds in their destructors; the allocator source clears its callback.
  sources_.clear();
}

PressureContext PressureMonitor::Context() const {
  return PressureContext{&loop_, on_pressure_, log_};
}

void PressureMonitor::AddPsi() {
  PsiOptions psi = options_.psi_options;
  if (options_.psi_in_cgroup) {
    std::string error;
    CgroupInfo info = DetectCgroupFromFiles(options_.memory_events.cgroup_paths, &error);
    std::string file = info.V2File("memory.pressure");
    if (file.empty()) {
      log_((error.empty() ? info.Describe() : error) + "; PSI falls back to " + psi.path);
    } else {
      psi.path = file;
    }
  }
  sources_.push_back(std::make_unique<PsiPressureSource>(Context(), std::move(psi)));
}

size_t PressureMonitor::Start() {
  LETHE_DCHECK(loop_.OnLoopThread(), "start the monitor on the loop thread");
  LETHE_CHECK(sources_.empty(), "PressureMonitor::Start is called once");
  std::optional<SystemdPressureOptions> systemd;
  if (options_.systemd) systemd = SystemdPressureOptions::FromEnvironment(options_.get_env);
  if (systemd) {
    if (options_.psi && systemd->off()) {
      log_("MEMORY_PRESSURE_WATCH=/dev/null: no PSI source either");
    }
    sources_.push_back(std::make_unique<SystemdPressureSource>(Context(), std::move(*systemd)));
  } else if (options_.psi) {
    AddPsi();
  }
  if (options_.cgroup_events) {
    sources_.push_back(std::make_unique<MemoryEventsPressureSource>(Context(), options_.memory_events));
  }
  if (options_.allocator) {
    sources_.push_back(std::make_unique<AllocatorPressureSource>(Context(), options_.allocator_flush));
  }
  auto api = std::make_unique<ApiPressureSource>(Context());
  api_ = std::make_shared<PressureSource*>(api.get());
  sources_.push_back(std::move(api));

  size_t active = 0;
  for (auto& source : sources_) active += source->Start() ? 1 : 0;
  return active;
}

void PressureMonitor::Simulate(MemoryPressureLevel level) {
  if (level == MemoryPressureLevel::kNone) return;
  std::weak_ptr<PressureSource*> api = api_;
  loop_.PostTask([api, level] {
    if (std::shared_ptr<PressureSource*> alive = api.lock()) {
      static_cast<ApiPressureSource*>(*alive)->Deliver(level);
    }
  });
}

PressureSource* PressureMonitor::Find(std::string_view name) const {
  for (const auto& source : sources_) {
    if (source->name() == name) return source.get();
  }
  return nullptr;
}

std::string PressureMonitor::Describe() const {
  std::string text;
  for (const auto& source : sources_) {
    if (!text.empty()) text += "; ";
    text += source->name();
    text += source->active() ? ": active, " + std::to_string(source->event_count()) + " events"
                             : ": off";
  }
  return text;
}

}  // namespace lethe
