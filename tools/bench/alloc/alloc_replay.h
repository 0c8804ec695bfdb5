// Replays of real programs' allocation traces (recorded with liblethe-alloc-trace.so): compiled
// once from the raw events into slot operations, then replayed single-threaded on whatever malloc
// the process has.
#ifndef LETHE_TOOLS_BENCH_ALLOC_ALLOC_REPLAY_H_
#define LETHE_TOOLS_BENCH_ALLOC_ALLOC_REPLAY_H_

#include <string>
#include <vector>

namespace lethe::bench {

// Compiles the raw traces `raws`, one process after another, into the replay file `out`. Each
// process's blocks still live at its end are freed before the next one starts (its exit gave them
// back); the last process's stay live. A realloc keeps its block's slot, moved or not. Returns ""
// or an error naming the file.
std::string CompileTrace(const std::vector<std::string>& raws, const std::string& out);

// Replays `path` (a compiled trace) and prints key=value figures: ms, exit RSS (total, anonymous),
// peak RSS, minor faults, operations. Every block's bytes are written when it is allocated (and
// the grown part at a realloc), as the program wrote them; nothing is freed at the end, as a
// program that exits frees nothing. Returns "" or an error, also when the operations contradict
// each other (an allocation into a live slot, a free of an empty one: checked before the replay).
// settle_ms > 0: then sleeps that long, the blocks still live, and prints the RSS again
// (settled_rss_kb, settled_anon_kb): what a program that lived that much longer would hold once
// its allocator's purge timers ran, which exit RSS, read the moment the trace ends, does not show.
std::string RunReplay(const std::string& path, unsigned settle_ms = 0);

}  // namespace lethe::bench

#endif  // LETHE_TOOLS_BENCH_ALLOC_ALLOC_REPLAY_H_
