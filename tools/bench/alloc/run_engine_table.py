#!/usr/bin/env python3
"""The engine's own workload on each allocator (issue 15 item 7): lethe-stress's Lethe configuration
(Lethe's caches, expiry on, simulated time) run once per allocator per repetition, interleaved in a
rotating order, each in a fresh process; prints one table of medians (terminal RSS, peak RSS, wall
time, CPU time, minor page faults) with each figure's ratio to the best of the four peers, and the
verdicts of issue 15's two targets: Lethe's terminal RSS the lowest, its wall time <= 1.05x the
best peer's.

usage: run_engine_table.py --stress-dir DIR --lethe PATH/liblethe-malloc.so [--reps N]
                           [--allocators lethe,glibc,jemalloc,mimalloc,tcmalloc,lethe-linked]
                           [--page-count N] [--cycles N] [--windows N] [--idle SECONDS]
                           [--pages DIR] [--out DIR] [--raw FILE.json]

Every row but lethe-linked runs the same binary, DIR/lethe-stress-baseline: it links no malloc
replacement and forwards the lethe_* API (pixel buffers, compressed bytes) to malloc, so the
allocator LD_PRELOAD chooses serves every byte of the process (glibc: no preload). That binary runs
the workload with "--child lethe", the mode in which lethe-stress's parent starts its Lethe child.
The forwarding has no per-page arenas and no decay ticks (system_forward.cc makes them no-ops), so
the lethe row is Lethe as a plain malloc. lethe-linked runs DIR/lethe-stress, the tool as shipped:
Lethe's malloc linked in, the engine's per-page arenas and decay ticks live. It is printed for
comparison; the verdicts are given for both Lethe rows, against the same peers.

Every allocator runs with its default settings: the children get no LETHE_OPTIONS (nor the
caller's LD_PRELOAD), so an option set in the calling shell changes nothing here; to try one, run
DIR/lethe-stress-baseline --child lethe --result FILE.csv with LD_PRELOAD and LETHE_OPTIONS.

Figures: terminal RSS is the child's last sample (the end of the idle, all windows but one closed);
peak RSS is the kernel's high-water mark (ru_maxrss from wait4, VmHWM); wall and CPU (user + system)
time and minor page faults (ru_minflt, in thousands: nearly deterministic, and on this VM a fault
costs tens of microseconds, so they explain much of the time) are the whole child process. Heap
figures are not used: under a preloaded peer the process's heap statistics come from whichever
allocator answers mallinfo2, so only RSS compares.

The default size is lethe-stress's own (every page of the sample site, 29, x 11 cycles = 319 loads
through 30 windows, then 300 simulated seconds of idle): 40-70 s per run on the project's loaded
2-CPU machine, so --reps 3 over the six rows takes about a quarter of an hour. --page-count,
--cycles, --windows and --idle change it. Build in the release preset:
  cmake --preset release
  cmake --build build/release --target lethe-stress lethe-stress-baseline lethe_malloc
  python3 tools/bench/alloc/run_engine_table.py --stress-dir build/release/tools/stress \\
      --lethe build/release/alloc/liblethe-malloc.so --reps 3
"""
import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # the import below would leave __pycache__ in the source tree
from run_alloc_bench import PEERS, machine_line, peer_versions

PEER_NAMES = [name for name, _ in PEERS]
ALLOCATORS = ["lethe"] + PEER_NAMES + ["lethe-linked"]
LETHE_ROWS = ("lethe", "lethe-linked")
# figure -> (column title, unit divisor, format); lower is better for every one.
FIGURES = [("terminal_rss", "terminal RSS MB", 1e6, "%8.1f"),
           ("peak_rss", "peak RSS MB", 1e6, "%8.1f"),
           ("wall_s", "wall s", 1, "%8.2f"),
           ("cpu_s", "CPU s", 1, "%8.2f"),
           ("minflt", "faults k", 1e3, "%8.1f")]
# (figure, bound, description): issue 15's targets, as ratios Lethe / best peer.
TARGETS = [("terminal_rss", 1.0, "terminal RSS the lowest"),
           ("wall_s", 1.05, "wall time <= 1.05x the best peer's")]


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--stress-dir", required=True,
                        help="the build's tools/stress (lethe-stress-baseline and lethe-stress)")
    parser.add_argument("--lethe", help="liblethe-malloc.so (needed for the lethe row)")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--allocators", default=",".join(ALLOCATORS),
                        help="comma-separated subset of " + ",".join(ALLOCATORS))
    parser.add_argument("--page-count", type=int, default=0,
                        help="the first N pages (default 0: every page, 29 on the sample site)")
    parser.add_argument("--cycles", type=int, default=11)
    parser.add_argument("--windows", type=int, default=30)
    parser.add_argument("--idle", type=float, default=300, help="simulated seconds")
    parser.add_argument("--pages", help="page directory (default: the generated sample site)")
    parser.add_argument("--out", help="where the children write (default: a temporary directory)")
    parser.add_argument("--raw", help="also write every sample to this JSON file")
    args = parser.parse_args(argv)
    chosen = [a for a in args.allocators.split(",") if a]
    unknown = [a for a in chosen if a not in ALLOCATORS]
    if unknown or not chosen:
        parser.error("--allocators: unknown %s (known: %s)" % (",".join(unknown) or "(none)",
                                                              ",".join(ALLOCATORS)))
    for flag in ("reps", "page_count", "cycles", "windows"):
        if getattr(args, flag) < (0 if flag == "page_count" else 1):
            parser.error("--%s needs a whole number >= %d" %
                         (flag.replace("_", "-"), 0 if flag == "page_count" else 1))
    if args.idle < 0:
        parser.error("--idle needs seconds >= 0")
    if "lethe" in chosen and not args.lethe:
        parser.error("the lethe row needs --lethe PATH/liblethe-malloc.so")
    args.chosen = chosen
    return args


def commands(args):
    """allocator -> (binary, LD_PRELOAD library or None); exits 2 naming what is missing."""
    sysmalloc = os.path.join(args.stress_dir, "lethe-stress-baseline")
    linked = os.path.join(args.stress_dir, "lethe-stress")
    libraries = dict(PEERS)
    table = {}
    for name in args.chosen:
        if name == "lethe-linked":
            table[name] = (linked, None)
        elif name == "lethe":
            table[name] = (sysmalloc, os.path.abspath(args.lethe))
        else:
            table[name] = (sysmalloc, libraries[name])
    for name, (binary, library) in table.items():
        for path in (binary, library):
            if path and not os.path.exists(path):
                print("run_engine_table.py: missing for %s: %s" % (name, path), file=sys.stderr)
                sys.exit(2)
    return table


def workload_args(args):
    out = ["--cycles", str(args.cycles), "--windows", str(args.windows), "--idle", str(args.idle)]
    if args.page_count:
        out += ["--page-count", str(args.page_count)]
    if args.pages:
        out += ["--pages", args.pages]
    return out


def terminal_rss(samples_path):
    with open(samples_path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        raise SystemExit("run_engine_table.py: no samples in %s" % samples_path)
    return float(rows[-1]["rss_bytes"])


def run_once(name, binary, library, args, out_dir):
    """One child run; returns its figures. Stops the script (exit 1) when the child fails."""
    run_dir = os.path.join(out_dir, name)
    os.makedirs(run_dir, exist_ok=True)
    samples = os.path.join(run_dir, "samples-lethe.csv")
    env = dict(os.environ)
    env.pop("LETHE_OPTIONS", None)
    env.pop("LD_PRELOAD", None)
    if library:
        env["LD_PRELOAD"] = library
    command = [binary, "--child", "lethe", "--result", samples] + workload_args(args)
    with open(os.path.join(run_dir, "stdout"), "w") as out, \
            open(os.path.join(run_dir, "stderr"), "w") as err:
        started = time.monotonic()
        child = subprocess.Popen(command, env=env, stdout=out, stderr=err)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.monotonic() - started
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        with open(os.path.join(run_dir, "stderr")) as f:
            message = f.read()[-500:]
        raise SystemExit("run_engine_table.py: %s (%s) exited %d: %s" %
                         (name, " ".join(command), child.returncode, message))
    return {"terminal_rss": terminal_rss(samples), "peak_rss": usage.ru_maxrss * 1024.0,
            "wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime,
            "minflt": float(usage.ru_minflt)}


def collect(args, table, out_dir):
    """(allocator, figure) -> [values], every allocator once per repetition, rotating the order."""
    samples = {}
    names = list(table)
    for rep in range(args.reps):
        order = names[rep % len(names):] + names[:rep % len(names)]
        for name in order:
            binary, library = table[name]
            for figure, value in run_once(name, binary, library, args, out_dir).items():
                samples.setdefault((name, figure), []).append(value)
        print("repetition %d/%d done (%s)" % (rep + 1, args.reps, machine_line()), file=sys.stderr)
    return samples


def print_table(args, samples, started):
    names = [n for n in ALLOCATORS if n in args.chosen]
    medians = {(n, f): statistics.median(samples[(n, f)]) for n in names for f, _, _, _ in FIGURES}
    peers = [n for n in PEER_NAMES if n in names]
    best = {f: min(medians[(n, f)] for n in peers) if peers else None for f, _, _, _ in FIGURES}
    pages = "%d pages" % args.page_count if args.page_count else "every page"
    print("lethe-stress --child lethe (expiry on, simulated time): %s x %d cycles through %d "
          "windows, %g s idle; medians of %d interleaved repetitions; x best = value / best of "
          "the peers run (%s)." % (pages, args.cycles, args.windows, args.idle, args.reps,
                                   ", ".join(peers) or "none"))
    print("Machine at start: %s; at end: %s" % (started, machine_line()))
    print("Peers: %s" % peer_versions())
    print("%-13s" % "allocator" + "".join("%16s %6s" % (title, "x best")
                                          for _, title, _, _ in FIGURES) + "%8s" % "spread")
    for n in names:
        cells = ""
        for figure, _, divisor, fmt in FIGURES:
            value = medians[(n, figure)]
            ratio = "%6.2f" % (value / best[figure]) if best[figure] else "%6s" % "-"
            cells += "%8s" % "" + fmt % (value / divisor) + " " + ratio
        # The spread: the largest (max - min) / median over the figures, as in run_alloc_bench.py.
        spread = max((max(v) - min(v)) / statistics.median(v) if statistics.median(v) else 0
                     for v in (samples[(n, f)] for f, _, _, _ in FIGURES))
        print("%-13s" % n + cells + "%7.0f%%" % (100 * spread))
    for n in (r for r in LETHE_ROWS if r in names):
        for figure, bound, description in TARGETS:
            if best[figure] is None:
                print("target %s, %s: not checked (no peer run)" % (n, description))
                continue
            ratio = medians[(n, figure)] / best[figure]
            print("target %s, %s: %.2fx the best peer, %s" %
                  (n, description, ratio, "met" if ratio <= bound else "MISSED"))


def main(argv):
    args = parse_args(argv)
    table = commands(args)
    started = machine_line()
    out_dir = args.out or tempfile.mkdtemp(prefix="lethe-engine-table-")
    samples = collect(args, table, out_dir)
    if args.raw:
        with open(args.raw, "w") as f:
            json.dump({"|".join(key): values for key, values in samples.items()}, f, indent=1)
    print_table(args, samples, started)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
