// lethe/memory_figures.h — the engine's memory figures, as one list.
//
// Each figure appears in four outputs: the MemorySnapshot that Engine::Memory() returns, the control
// socket's `stats` reply, the memory trace's counter samples and the memory report. All four are
// generated from LETHE_MEMORY_FIGURES, so a figure added here shows everywhere (the engine tests
// iterate kMemoryFigures and look for each one in each output).
//
// X(Unit, field, stats_key, trace_counter, trace_arg, Report, report_path, description):
//   Unit          Bytes (uint64_t, report units bytes) or Count (size_t, report units count);
//   field         the MemorySnapshot member;
//   stats_key     its key in the control socket's JSON (tools/pressure reads these);
//   trace_counter the trace counter event that carries it, trace_arg its argument there (traces
//                 group related figures in one counter, as a chart draws them together);
//   Report        Present: the report already carries the figure at report_path or in the subtree
//                 under it (a cache's own explicit/ entries, the reporter's heap-allocated and
//                 resident): the engine adds nothing, because a second copy would be counted twice;
//                 Own: the engine adds it at report_path, kind other: bytes as a top-level single
//                 entry (about:memory lists those one by one; a tree of them would be summed into
//                 a meaningless total), counts under engine/ beside the engine's other counts.
#ifndef LETHE_MEMORY_FIGURES_H_
#define LETHE_MEMORY_FIGURES_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace lethe {

#define LETHE_MEMORY_FIGURES(X)                                                                      \
  X(Bytes, surfaces_bytes, "surfaces_bytes", "images", "decoded", Present,                           \
    "explicit/images/raster", "Decoded surfaces and animations in the SurfaceCache.")                 \
  X(Bytes, locked_surfaces_bytes, "locked_surfaces_bytes", "images", "locked", Own,                  \
    "surfaces-locked", "Of the decoded surfaces, those locked (shown): a flush keeps them.")         \
  X(Bytes, images_bytes, "images_bytes", "images", "compressed", Present, "explicit/images/encoded", \
    "Compressed image bytes and placeholders in the ImageCache.")                                    \
  X(Bytes, bfcache_bytes, "bfcache_bytes", "documents", "bfcache", Present, "explicit/bfcache",      \
    "Documents kept in the BfCache.")                                                                \
  X(Bytes, fonts_bytes, "fonts_bytes", "text", "fonts", Present, "explicit/fonts",                   \
    "Font faces and their glyph tables in the FontCache.")                                           \
  X(Bytes, glyph_bytes, "glyph_bytes", "text", "glyphs", Own, "fonts-glyph-tables",                 \
    "Of the fonts' bytes (explicit/fonts), the glyph tables.")                                       \
  X(Bytes, shaped_words_bytes, "shaped_words_bytes", "text", "shaped_words", Present,                \
    "explicit/shaped-words", "Shaped glyph runs in the ShapedWordCache.")                            \
  X(Bytes, sqlite_bytes, "sqlite_bytes", "storage", "sqlite", Present, "explicit/storage/sqlite",    \
    "SQLite's memory in use (the disk cache's page cache, statements, schema).")                     \
  X(Bytes, framebuffer_bytes, "framebuffer_bytes", "frame", "framebuffer", Present,                  \
    "explicit/engine/framebuffer", "The BGRA framebuffer DrawFrame composites into.")                \
  X(Bytes, heap_allocated_bytes, "heap_allocated_bytes", "heap", "allocated", Present,               \
    "heap-allocated", "lethe_stats().allocated_bytes.")                                              \
  X(Bytes, resident_bytes, "resident_bytes", "resident", "rss", Present, "resident",                 \
    "The process's resident set (RSS).")                                                             \
  X(Bytes, discardable_bytes, "discardable_bytes", "caches", "discardable", Own, "discardable",      \
    "What a critical pressure event would free in the caches now, each cache's own figure: "         \
    "unlocked surfaces, unreferenced compressed images, the BfCache, unreferenced fonts, shaped "    \
    "words. SQLite's page cache not included.")                                                      \
  X(Count, surface_count, "surfaces", "counts", "surfaces", Own, "engine/surfaces",                  \
    "Decoded surfaces in the SurfaceCache.")                                                         \
  X(Count, image_count, "images", "counts", "images", Own, "engine/images",                          \
    "Images in the ImageCache.")                                                                     \
  X(Count, bfcache_document_count, "bfcache_documents", "counts", "bfcache_documents", Own,          \
    "engine/bfcache-documents", "Documents in the BfCache.")                                         \
  X(Count, window_count, "windows", "counts", "windows", Own, "engine/windows", "Open windows.")     \
  X(Count, glyph_count, "glyphs", "counts", "glyphs", Own, "engine/glyphs",                          \
    "Glyph bitmaps kept in the faces' glyph tables.")

#define LETHE_MEMORY_FIGURE_TYPE_Bytes uint64_t
#define LETHE_MEMORY_FIGURE_TYPE_Count size_t

// What the engine holds now; cheap (no report collection). One member per figure of the list.
struct MemorySnapshot {
#define LETHE_MEMORY_FIGURE_FIELD_(unit, field, stats_key, trace_counter, trace_arg, kind, report, text) \
  LETHE_MEMORY_FIGURE_TYPE_##unit field = 0;
  LETHE_MEMORY_FIGURES(LETHE_MEMORY_FIGURE_FIELD_)
#undef LETHE_MEMORY_FIGURE_FIELD_
};

// One figure of the list, for the code that prints them all.
struct MemoryFigure {
  std::string_view field;
  std::string_view stats_key;
  std::string_view trace_counter;
  std::string_view trace_arg;
  std::string_view report_path;
  bool engine_reports;  // Own: the engine adds it to the report; else the report already has it
  bool is_count;  // else bytes
  std::string_view description;
  uint64_t (*value)(const MemorySnapshot&);
};

inline constexpr MemoryFigure kMemoryFigures[] = {
#define LETHE_MEMORY_FIGURE_ENTRY_(unit, field, stats_key, trace_counter, trace_arg, kind, report, text) \
  {#field,                                                                                         \
   stats_key,                                                                                      \
   trace_counter,                                                                                  \
   trace_arg,                                                                                      \
   report,                                                                                         \
   std::string_view(#kind) == "Own",                                                               \
   std::string_view(#unit) == "Count",                                                             \
   text,                                                                                           \
   [](const MemorySnapshot& snapshot) { return static_cast<uint64_t>(snapshot.field); }},
    LETHE_MEMORY_FIGURES(LETHE_MEMORY_FIGURE_ENTRY_)
#undef LETHE_MEMORY_FIGURE_ENTRY_
};

}  // namespace lethe

#endif  // LETHE_MEMORY_FIGURES_H_
