// Out-of-memory reserve, low-memory callback and fail-after hook (see oom.h).
#include "oom.h"

#include <atomic>

#include "compiler.h"
#include "os.h"
#include "size_classes.h"

namespace lethe::internal {
namespace {

constinit std::atomic<char*> g_reserve_base{nullptr};
constinit std::atomic<size_t> g_reserve_bytes{0};
constinit std::atomic<size_t> g_reserve_cursor{0};
constinit std::atomic<lethe_low_memory_callback_t> g_callback{nullptr};
constinit std::atomic<void*> g_callback_context{nullptr};
constinit std::atomic<uint64_t> g_callback_count{0};
LETHE_TLS bool t_reserve_allowed = false;
LETHE_TLS bool t_in_callback = false;

}  // namespace

constinit std::atomic<long> g_fail_countdown{0};
constinit std::atomic<size_t> g_slow_allocations{0};

void ReserveInit(size_t bytes) {
  if (bytes == 0) return;
  bytes = (bytes + kChunkBytes - 1) & ~(kChunkBytes - 1);
  void* base = OsMap(bytes, kChunkBytes);
  if (base == nullptr) return;
  g_reserve_base.store(static_cast<char*>(base));
  g_reserve_bytes.store(bytes);
}

void ReserveAllow(bool allow) { t_reserve_allowed = allow; }

void* ReserveTake(size_t bytes) {
  if (!t_reserve_allowed) return nullptr;
  char* base = g_reserve_base.load();
  if (base == nullptr) return nullptr;
  size_t cursor = g_reserve_cursor.load();
  do {
    if (cursor + bytes > g_reserve_bytes.load()) return nullptr;
  } while (!g_reserve_cursor.compare_exchange_weak(cursor, cursor + bytes));
  return base + cursor;
}

void* ReserveTakeChunk() { return ReserveTake(kChunkBytes); }

uint64_t ReserveUsedBytes() { return g_reserve_cursor.load(std::memory_order_relaxed); }
uint64_t ReserveBytes() { return g_reserve_bytes.load(std::memory_order_relaxed); }

bool FailureInjected() {
  long remaining = g_fail_countdown.load(std::memory_order_relaxed);
  while (LETHE_UNLIKELY(remaining > 0)) {
    if (g_fail_countdown.compare_exchange_weak(remaining, remaining - 1)) {
      if (remaining != 1) return false;
      g_slow_allocations.fetch_and(~kSlowForFailAfter);
      // A SetFailAfter between the exchange and the clear re-arms the flag.
      if (g_fail_countdown.load() != 0) g_slow_allocations.fetch_or(kSlowForFailAfter);
      return true;
    }
  }
  return false;
}

void SetFailAfter(long n) {
  g_fail_countdown.store(n > 0 ? n : 0);
  if (n > 0) g_slow_allocations.fetch_or(kSlowForFailAfter);
  else g_slow_allocations.fetch_and(~kSlowForFailAfter);
}

void SetLowMemoryCallback(lethe_low_memory_callback_t callback, void* context) {
  g_callback_context.store(context);
  g_callback.store(callback);
}

bool RunLowMemoryCallback(size_t request_bytes) {
  lethe_low_memory_callback_t callback = g_callback.load();
  if (callback == nullptr || t_in_callback) return false;
  t_in_callback = true;
  g_callback_count.fetch_add(1, std::memory_order_relaxed);
  callback(request_bytes, g_callback_context.load());
  t_in_callback = false;
  return true;
}

uint64_t LowMemoryCallbackCount() { return g_callback_count.load(std::memory_order_relaxed); }

}  // namespace lethe::internal
