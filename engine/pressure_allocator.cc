#include "lethe/pressure_allocator.h"

#include <errno.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "lethe/alloc.h"
#include "posix_util.h"

namespace lethe {

namespace {
// Which source holds the allocator's single callback slot.
std::atomic<AllocatorPressureSource*> g_registered{nullptr};
}  // namespace

AllocatorPressureSource::AllocatorPressureSource(PressureContext context, FlushHook flush)
    : PressureSource(std::move(context), "allocator"), flush_(std::move(flush)) {}

AllocatorPressureSource::~AllocatorPressureSource() {
  if (registered_) {
    lethe_set_low_memory_callback(nullptr, nullptr);
    g_registered.store(nullptr);
  }
  if (watch_ != 0) loop().UnwatchFd(watch_);
  if (event_fd_ >= 0) close(event_fd_);
}

bool AllocatorPressureSource::Start() {
  AllocatorPressureSource* expected = nullptr;
  if (!g_registered.compare_exchange_strong(expected, this)) {
    ReportOnce("taken", "the allocator's low-memory callback already belongs to another source; "
                        "this allocator source is off");
    return false;
  }
  event_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (event_fd_ < 0) {
    ReportOnce("eventfd", "allocator pressure source: eventfd failed (" +
                              internal::ErrnoText(errno) + "); that source is off");
    g_registered.store(nullptr);
    return false;
  }
  watch_ = loop().WatchFd(event_fd_, POLLIN, [this](short) { OnEventFd(); });
  registered_ = true;
  lethe_set_low_memory_callback(&AllocatorPressureSource::OnLowMemory, this);
  set_active(true);
  return true;
}

void AllocatorPressureSource::OnLowMemory(size_t request_bytes, void* self) noexcept {
  auto* source = static_cast<AllocatorPressureSource*>(self);
  source->callback_count_.fetch_add(1, std::memory_order_relaxed);
  source->last_request_bytes_.store(request_bytes, std::memory_order_relaxed);
  if (source->flush_) {
    try {
      source->flush_(request_bytes);
    } catch (...) {
      // A hook that throws must not take the allocating thread down through a C callback; the
      // critical dispatch below still happens.
    }
  }
  // No allocation from here on: one eventfd write wakes the loop.
  uint64_t one = 1;
  ssize_t written;
  do {
    written = write(source->event_fd_, &one, sizeof(one));
  } while (written < 0 && errno == EINTR);
}

void AllocatorPressureSource::OnEventFd() {
  uint64_t count = 0;
  ssize_t got;
  do {
    got = read(event_fd_, &count, sizeof(count));
  } while (got < 0 && errno == EINTR);
  if (got == static_cast<ssize_t>(sizeof(count)) && count > 0) {
    Dispatch(MemoryPressureLevel::kCritical);
  }
}

}  // namespace lethe
