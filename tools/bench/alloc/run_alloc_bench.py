#!/usr/bin/env python3
"""Lethe's allocator benchmark: runs each workload of lethe-alloc-workload in a separate process
under glibc, jemalloc, mimalloc, tcmalloc and Lethe (chosen with LD_PRELOAD, each with its default
settings), interleaved (every repetition runs every allocator once, in a rotating order), and
prints the median of each figure and its ratio to the best of the four peers.

usage: run_alloc_bench.py --workload PATH/lethe-alloc-workload --lethe PATH/liblethe-malloc.so
                          [--reps N] [--only churn,mt1,mt2,realloc,slop,pagemap100,pagemap100000,
                                             appends_exact,appends_doubling,bigbuf_reuse,bigbuf_mixed,
                                             bigbuf_interleaved,bigbuf_large,scatter_mixed,scatter_mid,
                                             bursts,shrinks,aligned,
                                             rounding,xthread,xthread_4x4,python_exit,startup,
                                             xthread_surfaces,xthread_surfaces_written,
                                             scratch1,scratch2,handoff2,
                                             grow_small,aligned_small,threads,rollover,alloc_test,
                                             vectors,stack_order,shared_pool,oversubscribed]
                          [--raw FILE.json] [--syscalls] [--traces DIR [--settle-ms MS]]

--traces DIR adds one workload per DIR/NAME.trace (record_traces.sh records and compiles them):
"lethe-alloc-workload replay", a real program's allocation calls replayed single-threaded with
every block's bytes written; its time is judged against the best of glibc, jemalloc and mimalloc
(tcmalloc's times come from never returning memory), its exit RSS against all four peers.
--settle-ms MS also reads each replay's RSS MS milliseconds after its end, the blocks still live
(settled_rss_kb, settled_anon_kb; no target): exit RSS is read the moment the trace ends, before
any allocator's purge timer (Lethe's decay: 1 s) has run, and this shows what it would return.

Each row shows the medians, the ratio Lethe / best peer, the target of issue 3 for that ratio
(when it has one: issue 3's, and issue 15's for appends and xthread) and whether it was met, and the spread of the repetitions (the largest
(max - min) / median over the five allocators): a time figure with a spread of 30% on a loaded
machine says little. The machine's CPU count and load average are printed with the table.
For each figure with a target, "won" counts the rounds (repetitions, and the SHORT_RUNS rounds
within them) in which Lethe's ratio to the best peer of that same round met the target: with
--reps 11 or more, a paired verdict that one disturbed round cannot flip.
The short workloads (mt1, mt2, the page map: tens of milliseconds each; the replays of traces
under 2 MiB: a millisecond or two) run SHORT_RUNS times per
repetition, every allocator once per round: on a shared VM one of them can land on a CPU whose
sibling is busy for a second or two (seen here: lethe-alloc-workload mt 1 took 42 ms on one CPU
and 28 ms on the other for minutes, then 28 ms on both), and three samples are too few to vote
such runs out.
Build both in the release preset:
  cmake --preset release && cmake --build --preset release --target lethe_malloc lethe-alloc-workload
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

LIBDIR = "/usr/lib/x86_64-linux-gnu"
PEERS = [("glibc", None), ("jemalloc", LIBDIR + "/libjemalloc.so.2"),
         ("mimalloc", LIBDIR + "/libmimalloc.so.2"),
         ("tcmalloc", LIBDIR + "/libtcmalloc_minimal.so.4")]

PYTHON_EXIT_SCRIPT = (
    "import json\n"
    "d = [{'k': i, 'v': str(i) * 10} for i in range(20000)]\n"
    "s = json.dumps(d)\n"
    "del d, s\n"
    "st = dict(l.split(':', 1) for l in open('/proc/self/status'))\n"
    "kb = lambda k: st[k].split()[0]\n"
    "print('exit_rss_kb=%s exit_anon_kb=%s exit_file_kb=%s peak_kb=%s' %\n"
    "      (kb('VmRSS'), kb('RssAnon'), kb('RssFile'), kb('VmHWM')))\n")

SUITE_FIGURES = [("ms", "ms", True), ("peak_kb", "KiB", True), ("minflt", "faults", True)]
# workload name -> (arguments, [(figure, unit, lower is better)]); arguments starting with
# "python3" run that program instead of lethe-alloc-workload.
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
    "appends_exact": (["appends", "exact"], [("ms", "ms", True), ("peak_kb", "KiB", True),
                                             ("minflt", "faults", True)]),
    "appends_doubling": (["appends", "doubling"], [("ms", "ms", True), ("peak_kb", "KiB", True),
                                                   ("minflt", "faults", True)]),
    "bigbuf_reuse": (["bigbuf", "reuse"], [("ms", "ms", True), ("peak_kb", "KiB", True),
                                      ("faults_per_mib", "faults/MiB", True)]),
    "bigbuf_mixed": (["bigbuf", "mixed"], [("ms", "ms", True), ("peak_kb", "KiB", True),
                                      ("faults_per_mib", "faults/MiB", True)]),
    "bigbuf_interleaved": (["bigbuf", "interleaved"], [("ms", "ms", True), ("peak_kb", "KiB", True),
                                            ("faults_per_mib", "faults/MiB", True)]),
    "bigbuf_large": (["bigbuf", "large"], [("ms", "ms", True), ("peak_kb", "KiB", True),
                                          ("faults_per_mib", "faults/MiB", True)]),
    "scatter_mixed": (["scatter", "mixed"], [("ms", "ms", True), ("peak_kb", "KiB", True),
                                            ("minflt", "faults", True)]),
    "scatter_mid": (["scatter", "mid"], [("ms", "ms", True), ("peak_kb", "KiB", True),
                                        ("minflt", "faults", True)]),
    "bursts": (["bursts"], [("ms", "ms", True), ("peak_kb", "KiB", True), ("minflt", "faults", True)]),
    "shrinks": (["shrinks"], [("ms", "ms", True), ("peak_kb", "KiB", True),
                              ("minflt", "faults", True)]),
    "aligned": (["aligned"], [("buffers_ms", "ms", True), ("buffers_minflt", "faults", True),
                              ("mixed_ms", "ms", True), ("mixed_minflt", "faults", True),
                              ("huge_ms", "ms", True), ("huge_minflt", "faults", True),
                              ("peak_kb", "KiB", True)]),
    "rounding": (["rounding"], [("rss_over_requested_pct", "%", True),
                                ("usable_over_requested_pct", "%", True)]),
    "xthread": (["xthread", "small"], [("mops", "Mops/s", False), ("minflt", "faults", True)]),
    "xthread_4x4": (["xthread", "small-4x4"], [("mops", "Mops/s", False), ("minflt", "faults", True)]),
    "xthread_surfaces": (["xthread", "surfaces"], [("mops", "Mops/s", False),
                                                   ("minflt", "faults", True)]),
    "xthread_surfaces_written": (["xthread", "surfaces-written"],
                                 [("mops", "Mops/s", False), ("minflt", "faults", True)]),
    "scratch1": (["scratch", "1"], [("ms", "ms", True)]),
    "scratch2": (["scratch", "2"], [("ms", "ms", True)]),
    "handoff2": (["handoff", "2"], [("ms", "ms", True), ("peak_kb", "KiB", True)]),
    # Shapes of other suites (suite_shapes.cc); no issue names a target for them.
    "grow_small": (["suite", "grow-small"], SUITE_FIGURES + [("moves", "moves", True)]),
    "aligned_small": (["suite", "aligned-small"],
                      SUITE_FIGURES + [("misaligned", "blocks", True)]),
    "threads": (["suite", "threads"], SUITE_FIGURES),
    "rollover": (["suite", "rollover"], SUITE_FIGURES),
    "alloc_test": (["suite", "alloc-test"], SUITE_FIGURES),
    "vectors": (["suite", "vectors"], SUITE_FIGURES),
    "stack_order": (["suite", "stack-order"], SUITE_FIGURES),
    "shared_pool": (["suite", "shared-pool"], SUITE_FIGURES),
    "oversubscribed": (["suite", "oversubscribed"], SUITE_FIGURES),
    # What starting the allocator costs a short process (issue 15 item 5): 64 malloc/free pairs,
    # then the minor faults of the whole process since exec and its anonymous RSS (the program's
    # own share is the same under every allocator).
    "startup": (["pairs", "64"], [("minflt", "faults", True), ("anon_kb", "KiB", True)]),
    # A short real program, not lethe-alloc-workload: python3 starting, building and dumping a
    # 20,000-entry JSON list, dropping it, and printing its own RSS just before it exits.
    "python_exit": (["python3", "-c", PYTHON_EXIT_SCRIPT],
                    [("exit_rss_kb", "KiB", True), ("exit_anon_kb", "KiB", True),
                     ("exit_file_kb", "KiB", True), ("peak_kb", "KiB", True)]),
}
# Workloads whose system calls --syscalls counts (strace -f -c, one extra run per allocator, not
# timed: strace slows every call down).
SYSCALL_WORKLOADS = ("xthread", "xthread_4x4", "xthread_surfaces", "xthread_surfaces_written", "mt2")
TRACED_CALLS = ("futex", "madvise", "process_madvise", "munmap", "mmap")


# (workload, figure) -> (comparison, bound): the targets of issue 3, as ratios Lethe / best peer.
TARGETS = {
    ("churn", "idle_rss_kb"): ("<=", 0.5),
    ("churn", "peak_rss_kb"): ("<=", 0.95),
    ("churn", "load_ms"): ("<=", 1.0),
    ("mt1", "mops"): (">=", 1.0),
    ("mt2", "mops"): (">=", 1.0),
    ("realloc", "exact_ms"): ("<=", 1.0),
    ("slop", "slop_pct"): ("<=", 1.0),
    ("slop", "overhead_per_object"): ("<=", 1.0),
    # issue 15
    ("appends_exact", "ms"): ("<=", 1.0),
    ("appends_doubling", "ms"): ("<=", 1.0),
    ("xthread", "mops"): (">=", 1.0),
    ("xthread_4x4", "mops"): (">=", 1.0),
    ("xthread_surfaces", "mops"): (">=", 1.0),
    ("xthread_surfaces_written", "mops"): (">=", 1.0),
    ("python_exit", "exit_rss_kb"): ("<=", 1.0),
}
# Replays of recorded traces (--traces): their figures and targets, per trace.
REPLAY_FIGURES = [("ms", "ms", True), ("exit_rss_kb", "KiB", True), ("exit_anon_kb", "KiB", True),
                  ("peak_kb", "KiB", True), ("minflt", "faults", True)]
REPLAY_TARGETS = {"ms": ("<=", 1.0), "exit_rss_kb": ("<=", 1.0)}
SETTLED_FIGURES = [("settled_rss_kb", "KiB", True), ("settled_anon_kb", "KiB", True)]
# (workload, figure) -> the peers its ratio is taken against, where not all four. Slop and RSS
# per object are held against the size-class allocators (issue 15): glibc's 16-byte spacing is
# no size-class allocator's, so its column is printed but not the ratio's reference.
SIZE_CLASS_PEERS = ["jemalloc", "mimalloc", "tcmalloc"]
RATIO_PEERS = {("slop", "slop_pct"): SIZE_CLASS_PEERS,
               ("slop", "overhead_per_object"): SIZE_CLASS_PEERS}
PAGEMAP_TARGET = 1.2  # Lethe's own ns/op with 10^5 live runs over 10^2
# Short workloads, run SHORT_RUNS times a repetition. python_exit among them: its exit RSS lands in
# one of two modes, run after run, for every allocator (glibc 8.6 or 10.5 MB anonymous; bench
# README, stop 40), so that its median is not decided by three draws.
SHORT_WORKLOADS = {"mt1", "mt2", "pagemap100", "pagemap100000", "python_exit", "startup"}
# Replays of traces under this size (about 100,000 operations: bc, gdb, mawk here) take a
# millisecond or two, where one page fault more or less is a few per cent: they count as short.
SHORT_TRACE_BYTES = 2 << 20
SHORT_RUNS = 3


def machine_line():
    try:
        with open("/proc/loadavg") as f:
            load = " ".join(f.read().split()[:3])
    except OSError:
        load = "?"
    return "cpus %d, load average %s" % (os.cpu_count() or 0, load)


def peer_versions():
    packages = ["libjemalloc2", "libmimalloc2.0", "libtcmalloc-minimal4", "libc6"]
    try:
        out = subprocess.run(["dpkg-query", "-W", "-f", "${Package} ${Version}\\n"] + packages,
                             capture_output=True, text=True).stdout
        return ", ".join(out.split("\n")[:-1]) or "?"
    except OSError:
        return "?"


def meets(ratio, target):
    comparison, bound = target
    return ratio <= bound if comparison == "<=" else ratio >= bound


def verdict(ratio, target):
    if target is None:
        return "%-8s %-6s" % ("", "")
    comparison, bound = target
    return "%-8s %-6s" % ("%s%.2f" % (comparison, bound), "met" if meets(ratio, target) else "MISSED")


def run(workload_path, arguments, library):
    env = dict(os.environ)
    env.pop("LETHE_OPTIONS", None)
    if library:
        env["LD_PRELOAD"] = library
    else:
        env.pop("LD_PRELOAD", None)
    command = arguments if arguments[0] == "python3" else [workload_path] + arguments
    proc = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        raise SystemExit("%s %s under %s failed: %s" % (workload_path, arguments, library,
                                                         proc.stderr[-500:]))
    return {key: float(value) for key, value in
            (item.split("=") for item in proc.stdout.split())}


def count_syscalls(workload_path, arguments, library):
    """Calls of TRACED_CALLS made by one run, from strace -f -c (all threads)."""
    env = dict(os.environ)
    env.pop("LETHE_OPTIONS", None)
    env.pop("LD_PRELOAD", None)
    trace = "/tmp/lethe-alloc-bench-strace.%d" % os.getpid()
    command = ["strace", "-f", "-c", "-o", trace, "-e", "trace=" + ",".join(TRACED_CALLS)]
    if library:
        command += ["-E", "LD_PRELOAD=" + library]
    proc = subprocess.run(command + [workload_path] + arguments, env=env, capture_output=True,
                          text=True, timeout=1200)
    if proc.returncode != 0:
        raise SystemExit("strace %s under %s failed: %s" % (arguments, library, proc.stderr[-500:]))
    counts = {call: 0 for call in TRACED_CALLS}
    with open(trace) as f:
        for line in f:
            fields = line.split()
            # "% time seconds usecs/call calls [errors] syscall"
            if fields and fields[-1] in counts and len(fields) >= 5:
                counts[fields[-1]] = int(fields[3])
    os.unlink(trace)
    return counts


def add_replays(folder, settle_ms):
    """Adds a workload replay:NAME per FOLDER/NAME.trace; returns their names."""
    names = []
    settle = [str(settle_ms)] if settle_ms else []
    figures = REPLAY_FIGURES + (SETTLED_FIGURES if settle_ms else [])
    for entry in sorted(os.listdir(folder)):
        if not entry.endswith(".trace"):
            continue
        name = "replay:" + entry[:-len(".trace")]
        WORKLOADS[name] = (["replay", os.path.abspath(os.path.join(folder, entry))] + settle, figures)
        for figure, target in REPLAY_TARGETS.items():
            TARGETS[(name, figure)] = target
        RATIO_PEERS[(name, "ms")] = ["glibc", "jemalloc", "mimalloc"]
        if os.path.getsize(os.path.join(folder, entry)) < SHORT_TRACE_BYTES:
            SHORT_WORKLOADS.add(name)
        names.append(name)
    if not names:
        raise SystemExit("no *.trace in %s (tools/bench/alloc/record_traces.sh makes them)" % folder)
    return names


def best_of(values, lower):
    return min(values) if lower else max(values)


def rounds_won(samples, workload, figure, peer_names, lower, target):
    """Rounds in which Lethe's ratio to the best of peer_names in that same round meets `target`,
    and the rounds in all: a paired reading of the interleaved runs, which a busy CPU during one
    round moves by one round, where it can move a median of three by the whole gap."""
    lethe = samples[(workload, "lethe", figure)]
    won = 0
    for i, value in enumerate(lethe):
        best = best_of([samples[(workload, n, figure)][i] for n in peer_names], lower)
        won += meets(value / best, target) if best else value == 0
    return won, len(lethe)


def print_size_class_exit_rss(medians):
    """Where glibc's exit RSS is the best, also prints Lethe's against the best size-class peer:
    glibc's best fit over 16-byte spacing reuses a freed block for any smaller request, which no
    size-class allocator does (the nearest figure to the exit-RSS target, issue 15)."""
    lines = []
    for (workload, figure), row in medians.items():
        if figure != "exit_rss_kb" or min(row[n] for n, _ in PEERS) != row["glibc"]:
            continue
        best = min(SIZE_CLASS_PEERS, key=lambda n: row[n])
        lines.append("  %-22s %.2fx %s (glibc %.2fx)" % (workload, row["lethe"] / row[best], best,
                                                         row["lethe"] / row["glibc"]))
    if lines:
        print("Exit RSS where glibc is the best peer, Lethe against the best size-class peer:")
        print("\n".join(lines))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--workload", required=True)
    parser.add_argument("--lethe", required=True)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--only", default=",".join(WORKLOADS))
    parser.add_argument("--raw", help="also write every sample to this JSON file")
    parser.add_argument("--syscalls", action="store_true",
                        help="also count %s per run of %s with strace (one untimed run each)" %
                        ("/".join(TRACED_CALLS), "/".join(SYSCALL_WORKLOADS)))
    parser.add_argument("--traces", help="also replay every DIR/NAME.trace (record_traces.sh)")
    parser.add_argument("--settle-ms", type=int,
                        help="also read each replay's RSS this long after its end (1..60000)")
    args = parser.parse_args()
    if args.settle_ms is not None and not (args.traces and 1 <= args.settle_ms <= 60000):
        parser.error("--settle-ms takes 1..60000, with --traces")
    replays = add_replays(args.traces, args.settle_ms) if args.traces else []
    if args.traces and args.only == ",".join(w for w in WORKLOADS if w not in replays):
        args.only = ",".join(replays)  # --traces alone: only the replays
    started = machine_line()
    allocators = PEERS + [("lethe", os.path.abspath(args.lethe))]
    for name, library in allocators:
        if library and not os.path.exists(library):
            raise SystemExit("missing %s: %s" % (name, library))
    chosen = [w for w in args.only.split(",") if w]
    unknown = [w for w in chosen if w not in WORKLOADS]
    if unknown:
        raise SystemExit("unknown workload %s (known: %s)" % (",".join(unknown), ",".join(WORKLOADS)))
    samples = {}  # (workload, allocator, figure) -> [values]
    for rep in range(args.reps):
        for workload in chosen:
            arguments, figures = WORKLOADS[workload]
            order = allocators[rep % len(allocators):] + allocators[:rep % len(allocators)]
            for _ in range(SHORT_RUNS if workload in SHORT_WORKLOADS else 1):
                for name, library in order:
                    result = run(args.workload, arguments, library)
                    for figure, _, _ in figures:
                        samples.setdefault((workload, name, figure), []).append(result[figure])
        print("repetition %d/%d done" % (rep + 1, args.reps), file=sys.stderr)

    names = [name for name, _ in allocators]
    if args.raw:
        with open(args.raw, "w") as f:
            json.dump({"|".join(key): values for key, values in samples.items()}, f, indent=1)
    print("Medians of %d interleaved repetitions (%d runs each for %s); ratio = Lethe / best of "
          "the four peers (for Mops/s, higher is better and the ratio is Lethe / best)." %
          (args.reps, SHORT_RUNS, ", ".join(sorted(w for w in SHORT_WORKLOADS if w in chosen))))
    print("Machine at start: %s; at end: %s" % (started, machine_line()))
    print("Peers: %s; Lethe: %s" % (peer_versions(), os.path.abspath(args.lethe)))
    print("%-22s %-24s" % ("workload", "figure") + "".join("%11s" % n for n in names) +
          "%8s  %-8s %-6s %7s %7s" % ("ratio", "target", "", "spread", "won"))
    medians = {}
    for workload in chosen:
        _, figures = WORKLOADS[workload]
        for figure, unit, lower in figures:
            row = {n: statistics.median(samples[(workload, n, figure)]) for n in names}
            medians[(workload, figure)] = row
            peer_names = RATIO_PEERS.get((workload, figure), [n for n, _ in PEERS])
            peers = [row[n] for n in peer_names]
            best = best_of(peers, lower)
            ratio = row["lethe"] / best if best else float("nan")
            spread = max((max(v) - min(v)) / statistics.median(v) if statistics.median(v) else 0
                         for v in (samples[(workload, n, figure)] for n in names))
            target = TARGETS.get((workload, figure))
            won = ("%5d/%d" % rounds_won(samples, workload, figure, peer_names, lower, target)
                   if target else "")
            print("%-22s %-24s" % (workload, "%s (%s)" % (figure, unit)) +
                  "".join(("%11.3f" if abs(row[n]) < 10 else "%11.1f") % row[n] for n in names) +
                  ("%8.2f  " % ratio if best else "%8s  " % "-") +  # a count that is 0 at best
                  verdict(ratio, target) + "%6.0f%%" % (100 * spread) + won)
    print_size_class_exit_rss(medians)
    if args.syscalls:
        print("System calls per run (strace -f -c, one untimed run per allocator):")
        print("%-22s %-24s" % ("workload", "call") + "".join("%11s" % n for n in names))
        for workload in chosen:
            if workload not in SYSCALL_WORKLOADS:
                continue
            counts = {n: count_syscalls(args.workload, WORKLOADS[workload][0], library)
                      for n, library in allocators}
            for call in TRACED_CALLS:
                print("%-22s %-24s" % (workload, call) +
                      "".join("%11d" % counts[n][call] for n in names))
    if ("pagemap100", "ns_per_op") in medians and ("pagemap100000", "ns_per_op") in medians:
        costs = {n: medians[("pagemap100000", "ns_per_op")][n] /
                 medians[("pagemap100", "ns_per_op")][n] for n in names}
        print("page-map cost ratio 10^5/10^2 live runs: " +
              "  ".join("%s %.2f" % (n, costs[n]) for n in names) +
              "   target lethe <=%.2f: %s" % (PAGEMAP_TARGET,
                                              "met" if costs["lethe"] <= PAGEMAP_TARGET
                                              else "MISSED"))


if __name__ == "__main__":
    main()
