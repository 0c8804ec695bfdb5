// compiler.h — attributes the allocator's hot paths and thread-local state need.
#ifndef LETHE_ALLOC_COMPILER_H_
#define LETHE_ALLOC_COMPILER_H_

// Thread-locals use the initial-exec model: no __tls_get_addr call (which may allocate) on
// access, even when the allocator is a preloaded shared object. __thread (not thread_local):
// plain data, so no TLS wrapper function is called on each access from another file.
#define LETHE_TLS __attribute__((tls_model("initial-exec"))) __thread
#define LETHE_LIKELY(x) __builtin_expect(!!(x), 1)
#define LETHE_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define LETHE_NOINLINE __attribute__((noinline))
#define LETHE_ALWAYS_INLINE inline __attribute__((always_inline))

// One spin-wait step: tells the CPU (and a hyperthread sibling) that this core is waiting.
#if defined(__x86_64__) || defined(__i386__)
#define LETHE_CPU_RELAX() __builtin_ia32_pause()
#elif defined(__aarch64__)
#define LETHE_CPU_RELAX() __asm__ __volatile__("yield")
#else
#define LETHE_CPU_RELAX() __asm__ __volatile__("" ::: "memory")
#endif
// The core is compiled with -fvisibility=hidden (direct, GOT-free access to its tables from the
// shared library); the public C API is exported explicitly. That flag covers definitions only: a
// global the fast paths read through an extern declaration is declared LETHE_HIDDEN too, or GCC
// loads its address first (malloc's flag test: two instructions where one reads it in place).
#define LETHE_EXPORT __attribute__((visibility("default")))
#define LETHE_HIDDEN __attribute__((visibility("hidden")))

// A big zero table (1 KiB and more) is LETHE_TABLE: its own .bss input section, which
// liblethe-malloc.so's link (--sort-section=name) places after every file's plain .bss. Why: the
// small globals (counters, locks, flags) then share the page or two that starting the allocator
// writes, where between the tables they lay one page each (a first malloc faulted in 11 pages of
// them, five twice: a read maps the zero page, the first write copies it).
// tests/alloc/layout_check.py holds the layout.
#define LETHE_TABLE __attribute__((section(".bss.lethe_tables")))

#endif  // LETHE_ALLOC_COMPILER_H_
