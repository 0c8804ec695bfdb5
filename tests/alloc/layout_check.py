#!/usr/bin/env python3
"""Checks where liblethe-malloc.so's writable globals lie (compiler.h, LETHE_TABLE):

- the small ones (counters, locks, flags: objects under TABLE_BYTES in .data and .bss) lie on
  at most MAX_SMALL_PAGES pages, so that a process touches few pages to start the allocator (one
  page per global when they lay between the big tables: a first malloc faulted in 11);
- every table (TABLE_BYTES or more: each is LETHE_TABLE) lies after all of them.

It reads the library's full symbol table (readelf -s), which an unstripped build tree has.

usage: layout_check.py LIBRARY        exit 0 when both rules hold, 1 with what breaks them
"""
import subprocess
import sys

PAGE = 4096
TABLE_BYTES = 1024
MAX_SMALL_PAGES = 2


def sections(library):
    """The indexes of .data and .bss, the sections a writable global lies in."""
    out = subprocess.run(["readelf", "-S", "-W", library], capture_output=True, text=True,
                         check=True).stdout
    indexes = set()
    for line in out.splitlines():
        line = line.strip()
        if not line.startswith("["):
            continue
        index, rest = line[1:].split("]", 1)
        fields = rest.split()
        if fields and fields[0] in (".data", ".bss"):
            indexes.add(int(index))
    return indexes


def objects(library, wanted):
    """(address, size, name) of every defined data object in the sections `wanted`."""
    out = subprocess.run(["readelf", "-s", "-W", library], capture_output=True, text=True,
                         check=True).stdout
    found = []
    for line in out.splitlines():
        fields = line.split()
        if len(fields) < 8 or fields[3] != "OBJECT" or not fields[6].isdigit():
            continue
        size = int(fields[2], 0)  # readelf writes large sizes in hex
        if int(fields[6]) in wanted and size > 0:
            found.append((int(fields[1], 16), size, fields[7]))
    return found


def main():
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    library = sys.argv[1]
    found = objects(library, sections(library))
    if not found:
        print("%s: no data objects found (a stripped library?)" % library)
        return 1
    small = [o for o in found if o[1] < TABLE_BYTES]
    tables = [o for o in found if o[1] >= TABLE_BYTES]
    pages = sorted({address // PAGE for address, size, _ in small} |
                   {(address + size - 1) // PAGE for address, size, _ in small})
    problems = []
    if len(pages) > MAX_SMALL_PAGES:
        problems.append("%d small globals lie on %d pages (at most %d): %s" %
                        (len(small), len(pages), MAX_SMALL_PAGES,
                         ", ".join(hex(page * PAGE) for page in pages)))
    last_small = max(address + size for address, size, _ in small)
    for address, size, name in tables:
        if address < last_small:
            problems.append("table %s (%d bytes) lies before a small global" % (name, size))
    for problem in problems:
        print(problem)
    print("%s: %d small globals on %d page(s), %d tables after them: %s" %
          (library, len(small), len(pages), len(tables),
           "both rules hold" if not problems else "%d problems" % len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
