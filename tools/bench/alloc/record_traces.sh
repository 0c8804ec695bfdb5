#!/usr/bin/env bash
# Records the allocation calls of short real programs and compiles them into replay files for the
# allocator benchmark (run_alloc_bench.py --traces DIR):
#
#   python3          startup, then JSON, regular expressions, dicts and classes (pymalloc serves
#                    the small objects, as in any python3 run: malloc sees what is over 512 B)
#   python3-malloc   the same script with PYTHONMALLOC=malloc: every object is a malloc
#   git-log          git log -p over this checkout's last 300 commits
#   sqlite3          a 200,000-row table built, indexed, grouped and sorted in memory
#   perl             a 200,000-key hash of small arrays built, its keys sorted, half deleted
#   g++              g++ -O1 compiling one of this benchmark's sources (cc1plus: its front and
#                    middle ends allocate with calloc and realloc; the driver and as are tiny)
#   imagemagick      ImageMagick's convert on 40 images of the shared corpus (PNG and JPEG),
#                    one process per image, each resized to half and written as PNG; replayed one
#                    after another (multi-MiB pixel buffers allocated, written, freed)
#   clang            clang++ -O1 compiling one of this benchmark's sources (LLVM's bump allocators
#                    take 4-16 KiB slabs from malloc; many small nodes besides)
#   apt-cache        apt-cache showpkg libc6 (2.5 million short-lived blocks of 32-255 B)
#   mawk             an awk program keeping 300,000 lines in an associative array (mawk's own pool
#                    takes 2 KiB blocks from malloc and never frees them)
#   node             a Map of 200,000 small objects serialised to JSON (V8 keeps its heap apart;
#                    malloc sees its zone and parser allocations, from 6 threads)
#   gdb              gdb reading a binary's symbols and listing functions (a small process)
#   bc               bc computing 1500! and a square root to 200 digits (a small process)
#   dpkg-query       every installed package's name, version and dependencies (dpkg's status file
#                    parsed into small strings; a small process)
#   jq               50,000 numbers slurped into an array of objects, grouped and counted (jq's
#                    reference-counted values: many small blocks, mostly freed in bursts)
#   openssl          a 2048-bit RSA key generated and printed (bignum buffers resized in place)
#   objdump          objdump -d over libstdc++ (a few dozen live blocks, buffers reused)
#   cmake-help       cmake --help-full (C++ strings and vectors built and dropped, 500,000 calls)
#   ls-lR            ls -lR /usr/share (a directory tree's names and stat results: many small
#                    strings, freed a directory at a time; the count follows the machine's files)
#   sort             sort over 400,000 shuffled lines (a few multi-MiB buffers, written in full)
#   xz               xz -6 compressing those lines (the match finder's tables: tens of MiB, once)
#   readelf          readelf -aW over libstdc++ (one buffer size freed and asked again, 800,000 calls)
#   grep-regex       grep -cE with alternation and repetition over those lines (its DFA's states
#                    and transition tables; a small process)
#
# A program that is not installed is skipped with the package to install (Debian: python3, git,
# sqlite3, perl, g++, imagemagick, clang, apt, mawk, nodejs, gdb, bc, dpkg, jq, openssl, binutils,
# cmake, coreutils, xz-utils, grep). Each DIR/NAME.trace is printed with its operation count.
set -euo pipefail

checkout=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
usage() {
  cat <<USAGE
usage: tools/bench/alloc/record_traces.sh SHIM WORKLOAD OUT_DIR [CORPUS]
  SHIM      liblethe-alloc-trace.so (release preset: build/release/tools/bench/alloc/)
  WORKLOAD  lethe-alloc-workload, which compiles the raw traces
  OUT_DIR   where NAME.trace files go (raw traces in OUT_DIR/raw/NAME/)
  CORPUS    the shared corpus (default: ../shared/corpus beside the checkout)
USAGE
}
[ "${1:-}" != "--help" ] && [ "${1:-}" != "-h" ] || { usage; exit 0; }
[ $# -ge 3 ] && [ $# -le 4 ] || { usage >&2; exit 2; }
shim=$(realpath "$1")
workload=$(realpath "$2")
out=$3
corpus=${4:-$checkout/../shared/corpus}
[ -f "$shim" ] || { echo "record_traces: no shim at $1" >&2; exit 2; }
[ -x "$workload" ] || { echo "record_traces: no workload at $2" >&2; exit 2; }
mkdir -p "$out"

PYTHON_SCRIPT='
import json, re, collections
class Node:
    def __init__(self, key, value): self.key, self.value, self.children = key, value, []
root = Node(0, "root")
for i in range(30000):
    root.children.append(Node(i, "v%d" % i))
index = {n.key: n for n in root.children}
words = collections.Counter(re.findall(r"[a-z]+", " ".join("w%da b%dc" % (i, i % 97) for i in range(40000))))
text = json.dumps([{"k": n.key, "v": n.value, "w": words.get("b%dc" % (n.key % 97), 0)} for n in root.children])
data = json.loads(text)
del root, index, text
print(len(data), len(words))
'

# record NAME COMMAND...: runs COMMAND under the shim with its raw traces in OUT/raw/NAME.
record() {
  local name=$1
  shift
  rm -rf "$out/raw/$name"
  mkdir -p "$out/raw/$name"
  LETHE_ALLOC_TRACE_DIR="$out/raw/$name" LD_PRELOAD="$shim" "$@" >/dev/null
}

# compile NAME: one replay file from the raw traces of NAME's processes, in the order they ran.
compile() {
  local name=$1 raws
  mapfile -t raws < <(ls -tr "$out/raw/$name"/*.raw)
  [ ${#raws[@]} -gt 0 ] || { echo "  $name: no allocation recorded" >&2; return 1; }
  printf '  %-16s %s processes, ' "$name" "${#raws[@]}"
  "$workload" compile-trace "$out/$name.trace" "${raws[@]}"
}

have() {  # have PROGRAM PACKAGE: whether PROGRAM runs; says what to install if not
  command -v "$1" >/dev/null 2>&1 && return 0
  echo "  skipped: $1 is not installed (apt-get install $2)"
  return 1
}

echo "recording into $out"
if have /usr/bin/python3 python3; then
  record python3 /usr/bin/python3 -c "$PYTHON_SCRIPT" && compile python3
  PYTHONMALLOC=malloc record python3-malloc /usr/bin/python3 -c "$PYTHON_SCRIPT" &&
    compile python3-malloc
fi
if have /usr/bin/git git; then
  record git-log /usr/bin/git -C "$checkout" --no-pager log -p -n 300 && compile git-log
fi
if have /usr/bin/sqlite3 sqlite3; then
  record sqlite3 /usr/bin/sqlite3 :memory: "
    CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, grp INTEGER, payload BLOB);
    WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200000)
      INSERT INTO t SELECT i, 'name-' || (i * 7919 % 200000), i % 1000, randomblob(i % 300) FROM n;
    CREATE INDEX t_name ON t(name);
    SELECT grp, count(*), sum(length(payload)) FROM t GROUP BY grp ORDER BY 3 DESC LIMIT 5;
    SELECT name FROM t ORDER BY name LIMIT 5 OFFSET 100000;" && compile sqlite3
fi
if have /usr/bin/perl perl; then
  record perl /usr/bin/perl -e 'my %h; for my $i (1..200000) { $h{"key$i"} = [$i, "v" x ($i % 50)]; }
    my @k = sort keys %h; my $s = join(",", @k[0..1000]); delete $h{$_} for @k[0..100000];
    print scalar(keys %h), "\n";' && compile perl
fi
if have /usr/bin/g++ g++; then
  record g++ /usr/bin/g++ -O1 -std=c++20 -c "$checkout/tools/bench/alloc/alloc_replay.cc" \
    -o "$out/alloc_replay.o" && compile g++
  rm -f "$out/alloc_replay.o"
fi
# Debian's ImageMagick is /usr/bin/convert (a convert earlier in PATH may be something else).
if have /usr/bin/convert imagemagick; then
  mapfile -t images < <(ls "$corpus"/valid/png/*.png "$corpus"/valid/jpeg/*.jpg 2>/dev/null |
                        sort | awk 'NR % 2 == 1' | head -n 40)
  if [ ${#images[@]} -eq 0 ]; then
    echo "  skipped: imagemagick: no images in $corpus/valid"
  else
    rm -rf "$out/raw/imagemagick" "$out/converted"
    mkdir -p "$out/raw/imagemagick" "$out/converted"
    for image in "${images[@]}"; do
      LETHE_ALLOC_TRACE_DIR="$out/raw/imagemagick" LD_PRELOAD="$shim" /usr/bin/convert "$image" \
        -resize 50% "$out/converted/$(basename "$image").png" 2>/dev/null || true
    done
    compile imagemagick
  fi
fi
if have /usr/bin/clang++ clang; then
  record clang /usr/bin/clang++ -O1 -std=c++20 -c "$checkout/tools/bench/alloc/suite_shapes.cc" \
    -o "$out/suite_shapes.o" && compile clang
  rm -f "$out/suite_shapes.o"
fi
if have /usr/bin/apt-cache apt; then
  record apt-cache /usr/bin/apt-cache showpkg libc6 && compile apt-cache
fi
if have /usr/bin/mawk mawk; then
  seq 1 300000 | /usr/bin/mawk '{ print $1 * 7919 % 1000003 " line " $1 }' > "$out/lines.txt"
  record mawk /usr/bin/mawk '{ a[$3 $1] = $0; c[$1 % 1000]++ }
    END { n = 0; for (k in a) n += length(a[k]); for (k in c) n += c[k]; print n }' \
    "$out/lines.txt" && compile mawk
  rm -f "$out/lines.txt"
fi
if have /usr/bin/node nodejs; then
  record node /usr/bin/node -e 'let m = new Map();
    for (let i = 0; i < 200000; i++) m.set("k" + i, {a: i, b: [i, i * 2], s: "v" + i});
    console.log(JSON.stringify([...m.entries()]).length);' && compile node
fi
if have /usr/bin/gdb gdb; then
  record gdb /usr/bin/gdb -batch -ex "info functions Arena" "$workload" && compile gdb
fi
if have /usr/bin/dpkg-query dpkg; then
  record dpkg-query /usr/bin/dpkg-query -W -f '${Package} ${Version} ${Depends}\n' &&
    compile dpkg-query
fi
if have /usr/bin/jq jq; then
  seq 1 50000 > "$out/numbers.txt"
  record jq /usr/bin/jq -s 'map({k: ., v: (. * 3 | tostring)}) | group_by(.k % 100) | map(length)' \
    "$out/numbers.txt" && compile jq
  rm -f "$out/numbers.txt"
fi
if have /usr/bin/openssl openssl; then
  record openssl /usr/bin/openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -text \
    2>/dev/null && compile openssl
fi
libstdcxx=/usr/lib/x86_64-linux-gnu/libstdc++.so.6
# objdump and readelf (binutils) both read libstdc++.
if [ ! -f "$libstdcxx" ]; then
  echo "  skipped: objdump, readelf: no $libstdcxx to read"
else
  if have /usr/bin/objdump binutils; then
    record objdump /usr/bin/objdump -d "$libstdcxx" && compile objdump
  fi
  if have /usr/bin/readelf binutils; then
    record readelf /usr/bin/readelf -aW "$libstdcxx" && compile readelf
  fi
fi
if have /usr/bin/cmake cmake; then
  record cmake-help /usr/bin/cmake --help-full && compile cmake-help
fi
if have /usr/bin/ls coreutils; then
  record ls-lR /usr/bin/ls -lR /usr/share && compile ls-lR
fi
# Lines the same on every machine: shuf reads its randomness from a fixed stream.
lines="$out/shuffled.txt"
if have /usr/bin/shuf coreutils; then
  seq 1 400000 | /usr/bin/shuf --random-source=<(yes lethe) |
    sed 's/$/ lorem ipsum dolor sit amet, consectetur adipiscing/' > "$lines"
  record sort /usr/bin/sort -S 64M "$lines" && compile sort
  if have /usr/bin/xz xz-utils; then
    record xz /usr/bin/xz -6 -c "$lines" && compile xz
  fi
  if have /usr/bin/grep grep; then
    record grep-regex /usr/bin/grep -cE '(1[0-4]+7|9{2,}0)|ipsum.*sit.*elit' "$lines" &&
      compile grep-regex
  fi
  rm -f "$lines"
fi
if have /usr/bin/bc bc; then
  record bc /usr/bin/bc -l <<'BC' && compile bc
define f(n) { if (n < 2) return 1; return n * f(n - 1); }
x = f(1500); scale = 200; sqrt(2); length(x)
BC
fi
