#!/usr/bin/env python3
"""Checks the dynamic symbol table of liblethe-malloc.so against the drop-in rules
(shared/REFERENCE.md, "Allocator conventions"; issue 3, item 8):

- every function of the glibc malloc family and every C++ operator new/delete form is exported;
- nothing else is exported but the lethe_* C API and the two check reporters (an exported
  internal symbol could be interposed by, or clash with, another copy of Lethe in the process);
- thread-locals use the initial-exec model: the library is flagged STATIC_TLS and never calls
  __tls_get_addr (which may allocate, and so recurse into malloc).

usage: exports_check.py LIBRARY        exit 0 when every rule holds, 1 with a list of violations
"""
import subprocess
import sys

MALLOC_FAMILY = {
    "malloc", "free", "calloc", "realloc", "reallocarray", "posix_memalign", "aligned_alloc",
    "memalign", "valloc", "pvalloc", "malloc_usable_size", "malloc_trim", "mallinfo2",
    "mallinfo", "malloc_stats",
}
# Itanium C++ ABI names (size_t = unsigned long 'm'): plain, nothrow, sized, aligned, array.
OPERATORS = {
    "_Znwm", "_Znam", "_ZnwmRKSt9nothrow_t", "_ZnamRKSt9nothrow_t",
    "_ZnwmSt11align_val_t", "_ZnamSt11align_val_t",
    "_ZnwmSt11align_val_tRKSt9nothrow_t", "_ZnamSt11align_val_tRKSt9nothrow_t",
    "_ZdlPv", "_ZdaPv", "_ZdlPvRKSt9nothrow_t", "_ZdaPvRKSt9nothrow_t", "_ZdlPvm", "_ZdaPvm",
    "_ZdlPvSt11align_val_t", "_ZdaPvSt11align_val_t", "_ZdlPvmSt11align_val_t",
    "_ZdaPvmSt11align_val_t", "_ZdlPvSt11align_val_tRKSt9nothrow_t",
    "_ZdaPvSt11align_val_tRKSt9nothrow_t",
}
LETHE_API = {
    "lethe_malloc", "lethe_calloc", "lethe_realloc", "lethe_aligned_alloc", "lethe_free",
    "lethe_usable_size", "lethe_good_size", "lethe_purge", "lethe_decay_tick", "lethe_stats",
    "lethe_stats_reset_peak", "lethe_stats_print", "lethe_allocator_name", "lethe_set_low_memory_callback",
    "lethe_fail_after", "lethe_check_failed", "lethe_fatal_pointer", "lethe_arena_create",
    "lethe_arena_bind", "lethe_arena_bound", "lethe_arena_stats", "lethe_arena_destroy",
}


def symbols(library, flag):
    out = subprocess.run(["nm", "-D", flag, library], capture_output=True, text=True, check=True)
    return {line.split()[-1].split("@")[0] for line in out.stdout.splitlines() if line.strip()}


def main():
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    library = sys.argv[1]
    defined = symbols(library, "--defined-only")
    undefined = symbols(library, "--undefined-only")
    problems = []
    required = MALLOC_FAMILY | OPERATORS | LETHE_API
    for name in sorted(required - defined):
        problems.append("not exported: " + name)
    for name in sorted(defined - required):
        problems.append("exported but not part of the drop-in interface: " + name)
    if "__tls_get_addr" in undefined:
        problems.append("calls __tls_get_addr: a thread-local is not initial-exec")
    dynamic = subprocess.run(["readelf", "-d", library], capture_output=True, text=True,
                             check=True).stdout
    flags = [line for line in dynamic.splitlines() if "(FLAGS)" in line]
    if not flags or "STATIC_TLS" not in flags[0]:
        problems.append("not flagged STATIC_TLS: thread-locals are not in the initial-exec model")
    for problem in problems:
        print(problem)
    print("%s: %d exported symbols checked, %s" % (library, len(defined),
                                                  "all rules hold" if not problems
                                                  else "%d problems" % len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
