// lethe/memory_figures.h — the engine's memory figures, as one list.
//
// Each figure appears in four outputs: the MemorySnapshot that Engine::Memory() returns, the control
// socket's `stats` reply, the memory trace's counter samples and the memory report. All four are
// generated from LETHE_MEMORY_FIGURES, so a figure added here shows everywhere (the engine tests
// iterate kMemoryFigures and look for each one in each output).
//
// X(Unit, field, stats_key, trace_counter, trace_arg, report_path, description):
//   Unit          Bytes (uint64_t, report units bytes) or Count (size_t, report units count);
//   field         the MemorySnapshot member;
//   stats_key     its key in the control socket's JSON (tools/pressure reads these);
//   trace_counter the trace counter event that carries it, trace_arg its argument there (traces
//                 group related figures in one counter, as a chart draws them together);
//   report_path   its path in the report: kind other, so that it never adds to explicit/ (the
//                 caches report their heap bytes there themselves); bytes under engine-memory/,
//                 counts under engine/ (beside engine's other counts).
#ifndef LETHE_MEMORY_FIGURES_H_
#define LETHE_MEMORY_FIGURES_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace lethe {

#define LETHE_MEMORY_FIGURES(X)                                                                      \
  X(Bytes, surfaces_bytes, "surfaces_bytes", "images", "decoded", "engine-memory/surfaces",          \
    "Decoded surfaces and animations in the SurfaceCache.")                                          \
  X(Bytes, locked_surfaces_bytes, "locked_surfaces_bytes", "images", "locked",                       \
    "engine-memory/surfaces-locked", "Of the decoded surfaces, those locked (shown).")                \
  X(Bytes, images_bytes, "images_bytes", "images", "compressed", "engine-memory/images",             \
    "Compressed image bytes and placeholders in the ImageCache.")                                    \
  X(Bytes, bfcache_bytes, "bfcache_bytes", "documents", "bfcache", "engine-memory/bfcache",          \
    "Documents kept in the BfCache.")                                                                \
  X(Bytes, fonts_bytes, "fonts_bytes", "text", "fonts", "engine-memory/fonts",                       \
    "Font faces and their glyph tables in the FontCache.")                                           \
  X(Bytes, glyph_bytes, "glyph_bytes", "text", "glyphs", "engine-memory/glyphs",                     \
    "Of the fonts' bytes, the glyph tables.")                                                        \
  X(Bytes, shaped_words_bytes, "shaped_words_bytes", "text", "shaped_words",                         \
    "engine-memory/shaped-words", "Shaped glyph runs in the ShapedWordCache.")                       \
  X(Bytes, sqlite_bytes, "sqlite_bytes", "storage", "sqlite", "engine-memory/sqlite",                \
    "SQLite's memory in use (the disk cache's page cache, statements, schema).")                     \
  X(Bytes, framebuffer_bytes, "framebuffer_bytes", "frame", "framebuffer",                           \
    "engine-memory/framebuffer", "The BGRA framebuffer DrawFrame composites into.")                  \
  X(Bytes, heap_allocated_bytes, "heap_allocated_bytes", "heap", "allocated",                        \
    "engine-memory/heap-allocated", "lethe_stats().allocated_bytes.")                                \
  X(Bytes, resident_bytes, "resident_bytes", "resident", "rss", "engine-memory/resident",            \
    "The process's resident set (RSS).")                                                             \
  X(Bytes, discardable_bytes, "discardable_bytes", "caches", "discardable",                          \
    "engine-memory/discardable",                                                                     \
    "What a critical pressure event would free in the caches now, each cache's own figure: "         \
    "unlocked surfaces, unreferenced compressed images, the BfCache, unreferenced fonts, shaped "    \
    "words. SQLite's page cache not included.")                                                      \
  X(Count, surface_count, "surfaces", "counts", "surfaces", "engine/surfaces",                       \
    "Decoded surfaces in the SurfaceCache.")                                                         \
  X(Count, image_count, "images", "counts", "images", "engine/images",                               \
    "Images in the ImageCache.")                                                                     \
  X(Count, bfcache_document_count, "bfcache_documents", "counts", "bfcache_documents",               \
    "engine/bfcache-documents", "Documents in the BfCache.")                                         \
  X(Count, window_count, "windows", "counts", "windows", "engine/windows", "Open windows.")          \
  X(Count, glyph_count, "glyphs", "counts", "glyphs", "engine/glyphs",                               \
    "Glyph bitmaps kept in the faces' glyph tables.")

#define LETHE_MEMORY_FIGURE_TYPE_Bytes uint64_t
#define LETHE_MEMORY_FIGURE_TYPE_Count size_t

// What the engine holds now; cheap (no report collection). One member per figure of the list.
struct MemorySnapshot {
#define LETHE_MEMORY_FIGURE_FIELD_(unit, field, stats_key, trace_counter, trace_arg, report, text) \
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
  bool is_count;  // else bytes
  std::string_view description;
  uint64_t (*value)(const MemorySnapshot&);
};

inline constexpr MemoryFigure kMemoryFigures[] = {
#define LETHE_MEMORY_FIGURE_ENTRY_(unit, field, stats_key, trace_counter, trace_arg, report, text) \
  {#field,                                                                                         \
   stats_key,                                                                                      \
   trace_counter,                                                                                  \
   trace_arg,                                                                                      \
   report,                                                                                         \
   std::string_view(#unit) == "Count",                                                             \
   text,                                                                                           \
   [](const MemorySnapshot& snapshot) { return static_cast<uint64_t>(snapshot.field); }},
    LETHE_MEMORY_FIGURES(LETHE_MEMORY_FIGURE_ENTRY_)
#undef LETHE_MEMORY_FIGURE_ENTRY_
};

}  // namespace lethe

#endif  // LETHE_MEMORY_FIGURES_H_
