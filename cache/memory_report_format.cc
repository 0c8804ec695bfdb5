// Memory reports as the JSON about:memory loads, plain or gzip'd, written whole or not at all.
// (The text tree is lethe-memreport's: tools/memreport reads these files.)
#include <zlib.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "lethe/atomic_file.h"
#include "lethe/json_string.h"
#include "lethe/memory_reporter.h"

namespace lethe {
namespace {


bool EndsWith(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

// `data` as one gzip member (RFC 1952), compressed in memory so that the file is written whole.
// Returns false only if zlib fails (no memory).
bool Gzip(std::string_view data, std::string* out) {
  if (data.size() > UINT32_MAX / 2) return false;  // zlib counts in uInt; reports are far smaller
  z_stream stream{};
  // windowBits 15 + 16: a gzip header and trailer instead of zlib's.
  if (deflateInit2(&stream, Z_BEST_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    return false;
  }
  out->resize(deflateBound(&stream, static_cast<uLong>(data.size())));
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  stream.avail_in = static_cast<uInt>(data.size());
  stream.next_out = reinterpret_cast<Bytef*>(out->data());
  stream.avail_out = static_cast<uInt>(out->size());
  // deflateBound is large enough for one Z_FINISH call to complete.
  bool ok = deflate(&stream, Z_FINISH) == Z_STREAM_END;
  out->resize(stream.total_out);
  deflateEnd(&stream);
  return ok;
}

}  // namespace

std::string MemoryReportToJson(const MemoryReport& report) {
  std::string out = "{\"version\":1,\"hasMozMallocUsableSize\":true,\"reports\":[";
  bool first = true;
  for (const MemoryReportEntry& entry : report.entries) {
    out += first ? "\n" : ",\n";
    first = false;
    out += "{\"process\":";
    AppendJsonString(out, report.process);
    out += ",\"path\":";
    AppendJsonString(out, entry.path);
    out += ",\"kind\":" + std::to_string(static_cast<int>(entry.kind));
    out += ",\"units\":" + std::to_string(static_cast<int>(entry.units));
    out += ",\"amount\":" + std::to_string(entry.amount);
    out += ",\"description\":";
    AppendJsonString(out, entry.description);
    out += "}";
  }
  out += "\n]}\n";
  return out;
}

std::string WriteMemoryReport(const MemoryReport& report, const std::string& path) {
  std::string json = MemoryReportToJson(report);
  std::string gzipped;
  bool gzip = EndsWith(path, ".gz");
  if (gzip && !Gzip(json, &gzipped)) return path + ": gzip compression failed";
  std::string error;
  return WriteFileAtomically(path, gzip ? gzipped : json, &error) ? "" : error;
}

}  // namespace lethe
