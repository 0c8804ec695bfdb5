#!/usr/bin/env python3
"""Paired comparison of two malloc builds (two builds of liblethe-malloc.so, or one and a peer) on
the replays of real programs and on any other lethe-alloc-workload command line.

usage: compare_builds.py --workload PATH/lethe-alloc-workload --base A.so|none --new B.so|none
                         [--traces DIR] [--only NAME,NAME] [--command "mt 1"]... [--runs N]
                         [--instructions]

Each round runs every workload once under each build (LD_PRELOAD; "none": the system's malloc;
both with their default settings, LETHE_OPTIONS cleared as run_alloc_bench.py does), the two in a
random order, and each build's figures are the medians of its N runs. Why paired: on these
shared VMs a workload's time moves 10-50% between runs of one build, as the machine's other
tenants come and go; a round's two runs lie seconds apart and see the same machine, so the count
of rounds that the new build won says more than two medians taken minutes apart.

For each workload and figure (what its command prints as key=value: ms, minflt, exit_rss_kb,
...) it prints both medians, new / base, and in how many rounds the new build's figure was the
lower; then each figure's geometric mean of new / base over the workloads. A ratio within the
spread of its rounds is noise: judge a change by the geometric means and the round counts
together, and by instruction counts (--instructions) where time alone cannot tell.

--traces DIR adds one workload per DIR/NAME.trace (record_traces.sh records them), run as
"replay DIR/NAME.trace"; --only keeps those named; --command adds a workload command line.
--instructions also runs each workload once per build under valgrind (cachegrind, no cache
simulation) and adds an "instructions" row: the user-space instructions of the whole process,
the same from run to run, where the time is not (the kernel's work, page faults and system calls,
is not in it). The environment's VALGRIND names another valgrind program.
Exit status: 0, 1 when a run failed (its command and output are printed), 2 on a usage error.
"""
import argparse
import math
import os
import random
import re
import shutil
import statistics
import subprocess
import sys

import run_alloc_bench as bench

# What a workload prints of its own size (its arguments, the trace's length), the same for every
# build: not figures.
SKIPPED = {"ops", "slots", "threads", "pairs", "reallocs", "loads", "live"}
VALGRIND = os.environ.get("VALGRIND", "valgrind")


def parse_args(argv):
    paragraphs = __doc__.split("\n\n")
    parser = argparse.ArgumentParser(
        usage=paragraphs[1].split("usage: ")[1], formatter_class=argparse.RawDescriptionHelpFormatter,
        description="\n\n".join([paragraphs[0]] + paragraphs[2:]))
    parser.add_argument("--workload", required=True)
    parser.add_argument("--base", required=True, help="liblethe-malloc.so of the build before, or none")
    parser.add_argument("--new", required=True, help="the build after, or none")
    parser.add_argument("--traces", help="replay every DIR/NAME.trace")
    parser.add_argument("--only", help="keep these trace names (comma-separated)")
    parser.add_argument("--command", action="append", default=[],
                        help="a lethe-alloc-workload command line to run too (repeatable)")
    parser.add_argument("--runs", type=int, default=11, help="rounds (default 11)")
    parser.add_argument("--instructions", action="store_true",
                        help="count each workload's instructions under valgrind")
    args = parser.parse_args(argv)
    if args.instructions and shutil.which(VALGRIND) is None:
        parser.error("--instructions needs valgrind (%s not found)" % VALGRIND)
    if args.runs < 1 or args.runs > 1000:
        parser.error("--runs takes 1..1000")
    if not os.access(args.workload, os.X_OK):
        parser.error("no workload at %s" % args.workload)
    for name in ("base", "new"):
        library = getattr(args, name)
        if library != "none" and not os.path.isfile(library):
            parser.error("--%s: no library at %s" % (name, library))
    args.workloads = workloads(parser, args)
    return args


def workloads(parser, args):
    """[(name, argv)] in the order given."""
    found = []
    if args.traces:
        if not os.path.isdir(args.traces):
            parser.error("--traces: no folder at %s" % args.traces)
        wanted = set(args.only.split(",")) if args.only else None
        for entry in sorted(os.listdir(args.traces)):
            name = entry[:-len(".trace")]
            if entry.endswith(".trace") and (wanted is None or name in wanted):
                found.append((name, ["replay", os.path.join(args.traces, entry)]))
        if wanted is not None and len(found) != len(wanted):
            parser.error("--only: no trace for %s" % ", ".join(
                sorted(wanted - {name for name, _ in found})))
    elif args.only:
        parser.error("--only needs --traces")
    for line in args.command:
        found.append((line, line.split()))
    if not found:
        parser.error("nothing to run: give --traces DIR or --command")
    return found


def library(args, build):
    """The LD_PRELOAD of `build` ("base" or "new"), None for the system's malloc."""
    path = getattr(args, build)
    return None if path == "none" else os.path.abspath(path)


def measure(args):
    """{workload: {build: [figures of each round]}}, the builds in a random order each round.
    A failed run ends the script (exit 1, named: run_alloc_bench.run)."""
    samples = {name: {"base": [], "new": []} for name, _ in args.workloads}
    for _ in range(args.runs):
        for name, arguments in args.workloads:
            order = ["base", "new"]
            random.shuffle(order)
            for build in order:
                figures = bench.run(args.workload, arguments, library(args, build))
                samples[name][build].append(
                    {key: value for key, value in figures.items() if key not in SKIPPED})
    return samples


def count_instructions(command_line, preload):
    """The instructions one run executed (cachegrind's I refs); exits 1 when it failed."""
    preload = [] if preload is None else ["LD_PRELOAD=" + preload]
    command = [VALGRIND, "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null",
               "--trace-children=yes", "env", "-u", "LD_PRELOAD"] + preload + command_line
    result = subprocess.run(command, capture_output=True, text=True)
    counts = re.findall(r"I\s+refs:\s+([\d,]+)", result.stderr)
    if result.returncode != 0 or not counts:
        sys.stderr.write("compare_builds: %s exited %d\n%s%s" % (
            " ".join(command), result.returncode, result.stdout, result.stderr))
        sys.exit(1)
    return float(counts[-1].replace(",", ""))


def median_rows(samples, runs):
    """(workload, figure, base, new, rounds) per figure: medians, and the rounds new was lower."""
    for name, builds in samples.items():
        for key in builds["base"][0]:
            pairs = [(b[key], n[key]) for b, n in zip(builds["base"], builds["new"]) if key in n]
            lower = sum(1 for b, n in pairs if n < b)
            yield (name, key, statistics.median(b for b, _ in pairs),
                   statistics.median(n for _, n in pairs), "%d / %d" % (lower, runs))


def instruction_rows(args):
    """(workload, "instructions", base, new, "one run"): one count per build."""
    for name, arguments in args.workloads:
        base, new = (count_instructions([args.workload] + arguments, library(args, build))
                     for build in ("base", "new"))
        yield name, "instructions", base, new, "one run"


def number(value):
    """Four significant digits, or every digit of a large count (instructions, KiB)."""
    return "{:,.0f}".format(value) if value >= 10000 else "%.4g" % value


def report(rows):
    logs = {}  # figure -> [log(new / base)] over the workloads
    print("%-32s %-14s %14s %14s %8s %9s" % ("workload", "figure", "base", "new", "new/base",
                                               "new lower"))
    for name, key, base, new, rounds in rows:
        ratio = new / base if base > 0 else float("nan")
        if base > 0 and new > 0:
            logs.setdefault(key, []).append(math.log(ratio))
        print("%-32s %-14s %14s %14s %7.3fx %9s" % (name[:32], key, number(base), number(new),
                                                      ratio, rounds))
    print()
    for key, values in logs.items():
        print("geomean %-14s %.3fx over %d workloads" % (key, math.exp(sum(values) / len(values)),
                                                         len(values)))


def main(argv):
    args = parse_args(argv)
    print("compare_builds: base %s, new %s, %d rounds, %s" % (args.base, args.new, args.runs,
                                                            bench.machine_line()))
    rows = list(median_rows(measure(args), args.runs))
    if args.instructions:
        rows += instruction_rows(args)
    report(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
