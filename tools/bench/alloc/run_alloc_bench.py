#!/usr/bin/env python3
"""Lethe's allocator benchmark: runs each workload of lethe-alloc-workload in a separate process
under glibc, jemalloc, mimalloc, tcmalloc and Lethe (chosen with LD_PRELOAD, each with its default
settings), interleaved (every repetition runs every allocator once, in a rotating order), and
prints the median of each figure and its ratio to the best of the four peers.

usage: run_alloc_bench.py --workload PATH/lethe-alloc-workload --lethe PATH/liblethe-malloc.so
                          [--reps N] [--only churn,mt1,mt2,realloc,slop,pagemap]
Build both in the release preset:
  cmake --preset release && cmake --build --preset release --target lethe_malloc lethe-alloc-workload
"""
import argparse
import os
import statistics
import subprocess
import sys

LIBDIR = "/usr/lib/x86_64-linux-gnu"
PEERS = [("glibc", None), ("jemalloc", LIBDIR + "/libjemalloc.so.2"),
         ("mimalloc", LIBDIR + "/libmimalloc.so.2"),
         ("tcmalloc", LIBDIR + "/libtcmalloc_minimal.so.4")]

# workload name -> (arguments, [(figure, unit, lower is better)])
WORKLOADS = {
    "churn": (["churn"], [("load_ms", "ms", True), ("peak_rss_kb", "KiB", True),
                          ("idle_rss_kb", "KiB", True), ("live_kb", "KiB", True)]),
    "mt1": (["mt", "1"], [("mops", "Mops/s", False)]),
    "mt2": (["mt", "2"], [("mops", "Mops/s", False)]),
    "realloc": (["realloc"], [("exact_ms", "ms", True), ("exact_peak_kb", "KiB", True),
                              ("doubling_ms", "ms", True), ("peak_kb", "KiB", True)]),
    "slop": (["slop"], [("slop_pct", "%", True), ("overhead_per_object", "B", True)]),
    "pagemap100": (["pagemap", "100"], [("ns_per_op", "ns", True)]),
    "pagemap100000": (["pagemap", "100000"], [("ns_per_op", "ns", True)]),
}


def run(workload_path, arguments, library):
    env = dict(os.environ)
    env.pop("LETHE_OPTIONS", None)
    if library:
        env["LD_PRELOAD"] = library
    else:
        env.pop("LD_PRELOAD", None)
    proc = subprocess.run([workload_path] + arguments, env=env, capture_output=True, text=True,
                          timeout=600)
    if proc.returncode != 0:
        raise SystemExit("%s %s under %s failed: %s" % (workload_path, arguments, library,
                                                         proc.stderr[-500:]))
    return {key: float(value) for key, value in
            (item.split("=") for item in proc.stdout.split())}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--workload", required=True)
    parser.add_argument("--lethe", required=True)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--only", default=",".join(WORKLOADS))
    args = parser.parse_args()
    allocators = PEERS + [("lethe", os.path.abspath(args.lethe))]
    for name, library in allocators:
        if library and not os.path.exists(library):
            raise SystemExit("missing %s: %s" % (name, library))
    chosen = [w for w in args.only.split(",") if w]
    samples = {}  # (workload, allocator, figure) -> [values]
    for rep in range(args.reps):
        for workload in chosen:
            arguments, figures = WORKLOADS[workload]
            order = allocators[rep % len(allocators):] + allocators[:rep % len(allocators)]
            for name, library in order:
                result = run(args.workload, arguments, library)
                for figure, _, _ in figures:
                    samples.setdefault((workload, name, figure), []).append(result[figure])
        print("repetition %d/%d done" % (rep + 1, args.reps), file=sys.stderr)

    names = [name for name, _ in allocators]
    print("Medians of %d interleaved repetitions; ratio = Lethe / best of the four peers "
          "(for Mops/s, higher is better and the ratio is Lethe / best)." % args.reps)
    print("%-14s %-20s" % ("workload", "figure") + "".join("%12s" % n for n in names) +
          "%10s" % "ratio")
    medians = {}
    for workload in chosen:
        _, figures = WORKLOADS[workload]
        for figure, unit, lower in figures:
            row = {n: statistics.median(samples[(workload, n, figure)]) for n in names}
            medians[(workload, figure)] = row
            peers = [row[n] for n, _ in PEERS]
            best = min(peers) if lower else max(peers)
            ratio = row["lethe"] / best if best else float("nan")
            print("%-14s %-20s" % (workload, "%s (%s)" % (figure, unit)) +
                  "".join("%12.1f" % row[n] for n in names) + "%10.2f" % ratio)
    if ("pagemap100", "ns_per_op") in medians and ("pagemap100000", "ns_per_op") in medians:
        print("page-map cost ratio 10^5/10^2 live runs: " + "  ".join(
            "%s %.2f" % (n, medians[("pagemap100000", "ns_per_op")][n] /
                         medians[("pagemap100", "ns_per_op")][n]) for n in names))


if __name__ == "__main__":
    main()
