#!/usr/bin/env python3
"""Paired comparison of two malloc builds (two builds of liblethe-malloc.so, or one and a peer) on
the replays of real programs and on any other lethe-alloc-workload command line.

usage: compare_builds.py --workload PATH/lethe-alloc-workload --base A.so|none --new B.so|none
                         [--traces DIR] [--only NAME,NAME] [--command "mt 1"]... [--runs N]
                         [--instructions]

Each round runs every workload once under each build (LD_PRELOAD; "none": the system's malloc),
the two in a random order, and each build's figures are the medians of its N runs. Why paired:
on these shared VMs a workload's time moves 10-50% between runs of one build, as the machine's
other tenants come and go; a round's two runs lie seconds apart and see the same machine, so the
count of rounds that the new build won says more than two medians taken minutes apart.

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

SKIPPED = {"ops", "slots"}  # the workload's own size, the same for every build
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
                found.append((name, [args.workload, "replay", os.path.join(args.traces, entry)]))
        if wanted is not None and len(found) != len(wanted):
            parser.error("--only: no trace for %s" % ", ".join(
                sorted(wanted - {name for name, _ in found})))
    elif args.only:
        parser.error("--only needs --traces")
    for line in args.command:
        found.append((line, [args.workload] + line.split()))
    if not found:
        parser.error("nothing to run: give --traces DIR or --command")
    return found


def run_once(argv, library):
    """The numeric key=value figures that one run printed; exits 1 when the run failed."""
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    if library != "none":
        env["LD_PRELOAD"] = os.path.abspath(library)
    result = subprocess.run(argv, env=env, capture_output=True, text=True)
    figures = {}
    for token in result.stdout.split():
        key, _, value = token.partition("=")
        try:
            if value and key not in SKIPPED:
                figures[key] = float(value)
        except ValueError:
            pass
    if result.returncode != 0 or not figures:
        sys.stderr.write("compare_builds: %s (LD_PRELOAD=%s) exited %d\n%s%s" % (
            " ".join(argv), library, result.returncode, result.stdout, result.stderr))
        sys.exit(1)
    return figures


def measure(args):
    """{workload: {build: [figures of each round]}}, the builds in a random order each round."""
    samples = {name: {"base": [], "new": []} for name, _ in args.workloads}
    for _ in range(args.runs):
        for name, argv in args.workloads:
            order = ["base", "new"]
            random.shuffle(order)
            for build in order:
                samples[name][build].append(run_once(argv, getattr(args, build)))
    return samples


def count_instructions(argv, library):
    """The instructions one run executed (cachegrind's I refs); exits 1 when it failed."""
    preload = [] if library == "none" else ["LD_PRELOAD=" + os.path.abspath(library)]
    command = [VALGRIND, "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null",
               "--trace-children=yes", "env", "-u", "LD_PRELOAD"] + preload + argv
    result = subprocess.run(command, capture_output=True, text=True)
    counts = re.findall(r"I\s+refs:\s+([\d,]+)", result.stderr)
    if result.returncode != 0 or not counts:
        sys.stderr.write("compare_builds: %s exited %d\n%s%s" % (
            " ".join(command), result.returncode, result.stdout, result.stderr))
        sys.exit(1)
    return float(counts[-1].replace(",", ""))


def add_instructions(args, samples):
    """Adds an "instructions" figure to each workload's every round (one count per build)."""
    for name, argv in args.workloads:
        for build in ("base", "new"):
            count = count_instructions(argv, getattr(args, build))
            for figures in samples[name][build]:
                figures["instructions"] = count


def number(value):
    """Four significant digits, or every digit of a large count (instructions, KiB)."""
    return "{:,.0f}".format(value) if value >= 10000 else "%.4g" % value


def report(samples, runs):
    logs = {}  # figure -> [log(new / base)] over the workloads
    print("%-32s %-14s %14s %14s %8s %9s" % ("workload", "figure", "base", "new", "new/base",
                                               "new lower"))
    for name, builds in samples.items():
        for key in builds["base"][0]:
            pairs = [(b[key], n[key]) for b, n in zip(builds["base"], builds["new"]) if key in n]
            base = statistics.median(b for b, _ in pairs)
            new = statistics.median(n for _, n in pairs)
            lower = sum(1 for b, n in pairs if n < b)
            ratio = new / base if base > 0 else float("nan")
            if base > 0 and new > 0:
                logs.setdefault(key, []).append(math.log(ratio))
            rounds = "one run" if key == "instructions" else "%d / %d" % (lower, runs)
            print("%-32s %-14s %14s %14s %7.3fx %9s" % (name[:32], key, number(base), number(new),
                                                          ratio, rounds))
    print()
    for key, values in logs.items():
        print("geomean %-14s %.3fx over %d workloads" % (key, math.exp(sum(values) / len(values)),
                                                         len(values)))


def main(argv):
    args = parse_args(argv)
    print("compare_builds: base %s, new %s, %d rounds, %d CPUs, load %.2f" % (
        args.base, args.new, args.runs, os.cpu_count(), os.getloadavg()[0]))
    samples = measure(args)
    if args.instructions:
        add_instructions(args, samples)
    report(samples, args.runs)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
