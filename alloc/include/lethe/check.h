// lethe/check.h — always-on and debug-only assertions for every layer.
//
// LETHE_CHECK(cond, "message")   always compiled in. For conditions whose failure means memory is
//                                already corrupt or a caller broke a contract that cannot be
//                                recovered from (page-map corruption, double free, invalid pointer).
// LETHE_DCHECK(cond, "message")  compiled only when LETHE_DEBUG_LEVEL >= 1 (the condition is still
//                                parsed, so debug-only code cannot rot).
//
// On failure both print "lethe: CHECK failed: <cond>: <message> (<file>:<line>)" to stderr with
// write(2) — no allocation, no stdio, so they are safe inside the allocator itself — then abort().
// The message argument is optional.
#ifndef LETHE_CHECK_H_
#define LETHE_CHECK_H_

#ifdef __cplusplus
extern "C" {
#endif

// Writes the failure line with write(2) and calls abort(). Never allocates, never returns.
[[noreturn]] void lethe_check_failed(const char* file, int line, const char* condition,
                                     const char* message);

// Writes "lethe: <prefix>0x<hex value><suffix>\n" to stderr and aborts, without allocating.
// Used for messages such as "lethe: free(): invalid pointer 0x7f00...".
[[noreturn]] void lethe_fatal_pointer(const char* prefix, const void* pointer, const char* suffix);

#ifdef __cplusplus
}  // extern "C"
#endif

#ifndef LETHE_DEBUG_LEVEL
#define LETHE_DEBUG_LEVEL 0
#endif

#define LETHE_CHECK_SELECT_(_1, _2, name, ...) name
#define LETHE_CHECK1_(cond) LETHE_CHECK2_(cond, "")
#define LETHE_CHECK2_(cond, message)                                    \
  (__builtin_expect(!!(cond), 1)                                        \
       ? (void)0                                                        \
       : lethe_check_failed(__FILE__, __LINE__, #cond, (message)))
#define LETHE_CHECK(...) \
  LETHE_CHECK_SELECT_(__VA_ARGS__, LETHE_CHECK2_, LETHE_CHECK1_, unused)(__VA_ARGS__)

#if LETHE_DEBUG_LEVEL >= 1
#define LETHE_DCHECK(...) LETHE_CHECK(__VA_ARGS__)
#define LETHE_DCHECK_IS_ON 1
#else
// sizeof keeps the expression type-checked without evaluating it.
#define LETHE_DCHECK(...) ((void)sizeof(LETHE_CHECK_SELECT_(__VA_ARGS__, LETHE_DCHECK2_, LETHE_DCHECK1_, unused)(__VA_ARGS__)))
#define LETHE_DCHECK1_(cond) (!(cond))
#define LETHE_DCHECK2_(cond, message) (!(cond) && (message))
#define LETHE_DCHECK_IS_ON 0
#endif

#endif  // LETHE_CHECK_H_
