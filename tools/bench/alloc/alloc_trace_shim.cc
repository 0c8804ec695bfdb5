// liblethe-alloc-trace.so — records a program's allocation calls for the allocator benchmark's
// replays (lethe-alloc-workload compile-trace, then replay).
//
//   LETHE_ALLOC_TRACE_DIR=DIR LD_PRELOAD=liblethe-alloc-trace.so PROGRAM ...
//
// writes DIR/NAME.PID.raw for every process of PROGRAM that allocates (NAME from
// /proc/self/comm): an 8-byte magic, then one RawEvent per call in the order the calls returned.
// The calls go on to glibc (__libc_malloc and friends), so the program behaves as it does without
// the shim. Rules that keep the recorder out of the recording:
// - it never allocates: events go to a static buffer, written with write(2) when full and at exit;
// - one spin lock covers the call and its record, so that the order in the file is the order in
//   which addresses were handed out and given back, even with threads (a free recorded after the
//   malloc that reused its address would make the replay's address map lie);
// - a forked child starts an empty buffer and its own file (the parent's unwritten events are the
//   parent's to write); events of a child that execs before its buffer fills are lost, which
//   drops only the few calls between fork and exec.
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "alloc_trace_format.h"

extern "C" {
void* __libc_malloc(size_t size);
void __libc_free(void* pointer);
void* __libc_calloc(size_t count, size_t size);
void* __libc_realloc(void* pointer, size_t size);
void* __libc_memalign(size_t alignment, size_t size);
}

namespace {

using lethe::bench::RawEvent;
using lethe::bench::RawOp;

constexpr size_t kBufferEvents = size_t{1} << 16;  // 2 MiB: one write per 65,536 calls

RawEvent g_buffer[kBufferEvents];
size_t g_count = 0;
int g_fd = -1;
bool g_failed = false;  // no directory, or a write failed: stop recording, keep running
std::atomic_flag g_lock = ATOMIC_FLAG_INIT;
__thread uint32_t t_thread __attribute__((tls_model("initial-exec"))) = 0;
std::atomic<uint32_t> g_next_thread{1};

void Lock() {
  while (g_lock.test_and_set(std::memory_order_acquire)) {
  }
}
void Unlock() { g_lock.clear(std::memory_order_release); }

// Opens DIR/NAME.PID.raw and writes the magic; on any failure recording stops for this process.
void OpenFile() {
  const char* dir = std::getenv("LETHE_ALLOC_TRACE_DIR");
  if (dir == nullptr || dir[0] == '\0') {
    g_failed = true;
    return;
  }
  char name[32] = "process";
  int comm = open("/proc/self/comm", O_RDONLY | O_CLOEXEC);
  if (comm >= 0) {
    ssize_t length = read(comm, name, sizeof(name) - 1);
    close(comm);
    if (length > 0) name[length - 1] = '\0';  // the newline
    for (char* c = name; *c != '\0'; ++c) {
      if (*c == '/' || *c == ' ') *c = '_';
    }
  }
  char path[4096];  // DIR/NAME.PID.raw, composed by hand: snprintf may allocate
  char pid[16];
  size_t digits = 0;
  for (unsigned value = static_cast<unsigned>(getpid()); digits == 0 || value > 0; value /= 10) {
    pid[digits++] = static_cast<char>('0' + value % 10);
  }
  size_t at = 0;
  auto append = [&](const char* text, size_t length) {
    for (size_t i = 0; i < length && at + 1 < sizeof(path); ++i) path[at++] = text[i];
  };
  append(dir, std::strlen(dir));
  append("/", 1);
  append(name, std::strlen(name));
  append(".", 1);
  while (digits > 0) append(&pid[--digits], 1);
  append(".raw", 4);
  path[at] = '\0';
  g_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (g_fd < 0 ||
      write(g_fd, lethe::bench::kRawMagic, sizeof(lethe::bench::kRawMagic)) !=
          static_cast<ssize_t>(sizeof(lethe::bench::kRawMagic))) {
    g_failed = true;
  }
}

// Writes the buffer out. Called with the lock held.
void Flush() {
  if (g_count == 0 || g_failed) return;
  if (g_fd < 0) OpenFile();
  const char* data = reinterpret_cast<const char*>(g_buffer);
  size_t left = g_count * sizeof(RawEvent);
  while (!g_failed && left > 0) {
    ssize_t written = write(g_fd, data, left);
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) g_failed = true;
    else data += written, left -= static_cast<size_t>(written);
  }
  g_count = 0;
}

// Appends one event. Called with the lock held, after the call it records returned.
void Record(RawOp op, uint64_t a, uint64_t b, const void* result) {
  if (g_failed) return;
  if (t_thread == 0) t_thread = g_next_thread.fetch_add(1, std::memory_order_relaxed);
  g_buffer[g_count++] =
      RawEvent{static_cast<uint32_t>(op), t_thread, a, b, reinterpret_cast<uint64_t>(result)};
  if (g_count == kBufferEvents) Flush();
}

// At exit: write what is buffered. Calls made after this (other destructors) are written as the
// buffer fills again, or lost with the process: they free what a process is about to drop anyway.
__attribute__((destructor)) void FlushAtExit() {
  Lock();
  Flush();
  Unlock();
}

// A forked child: the buffered events are the parent's (it writes them); the child's go to its
// own file. Runs with the lock taken by the prepare handler, which the child then releases.
void StartChild() {
  g_count = 0;
  g_fd = -1;
  Unlock();
}

__attribute__((constructor)) void InstallForkHandlers() { pthread_atfork(Lock, Unlock, StartChild); }

}  // namespace

extern "C" {

void* malloc(size_t size) {
  Lock();
  void* result = __libc_malloc(size);
  Record(RawOp::kMalloc, size, 0, result);
  Unlock();
  return result;
}

void free(void* pointer) {
  if (pointer == nullptr) return;
  Lock();
  __libc_free(pointer);
  Record(RawOp::kFree, reinterpret_cast<uint64_t>(pointer), 0, nullptr);
  Unlock();
}

void* calloc(size_t count, size_t size) {
  Lock();
  void* result = __libc_calloc(count, size);
  Record(RawOp::kCalloc, count, size, result);
  Unlock();
  return result;
}

void* realloc(void* pointer, size_t size) {
  Lock();
  void* result = __libc_realloc(pointer, size);
  Record(RawOp::kRealloc, reinterpret_cast<uint64_t>(pointer), size, result);
  Unlock();
  return result;
}

void* memalign(size_t alignment, size_t size) {
  Lock();
  void* result = __libc_memalign(alignment, size);
  Record(RawOp::kMemalign, alignment, size, result);
  Unlock();
  return result;
}

void* aligned_alloc(size_t alignment, size_t size) { return memalign(alignment, size); }

int posix_memalign(void** out, size_t alignment, size_t size) {
  if (alignment < sizeof(void*) || (alignment & (alignment - 1)) != 0) return EINVAL;
  void* result = memalign(alignment, size);
  if (result == nullptr) return ENOMEM;
  *out = result;
  return 0;
}

void* valloc(size_t size) { return memalign(static_cast<size_t>(sysconf(_SC_PAGESIZE)), size); }

}  // extern "C"
