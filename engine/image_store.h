// engine/image_store.h — the engine's images by URL: a stable id per URL (the SurfaceCache's image
// id), the header Probe read, frame delays once decoded, and how many documents use it.
//
// Acquire(url) makes sure the compressed bytes are in the ImageCache and adds a reference there.
// When the entry is missing or has expired, the bytes come from the DiskCache if the engine has one
// (and it has them), else from the file at the URL, which stands for the network: those are then
// stored in the DiskCache (a failed store, e.g. a full disk, leaves the image loaded; the DiskCache
// counts hits, misses and failures in its own statistics).
// Release drops it, and when no
// document uses the image any more its surfaces are removed from the SurfaceCache (the image is
// gone from every page; its compressed bytes then age in the ImageCache).
//
// Loop thread only. Records are kept for the engine's life (a few dozen bytes per URL ever seen),
// so an image keeps its id across visits.
#ifndef LETHE_ENGINE_IMAGE_STORE_H_
#define LETHE_ENGINE_IMAGE_STORE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "lethe/disk_cache.h"
#include "lethe/image_cache.h"
#include "lethe/surface_cache.h"

namespace lethe::internal {

struct ImageRecord {
  uint64_t id = 0;
  std::string url;
  ImageHeaderInfo header;
  std::vector<uint32_t> frame_delays_ms;  // filled by the first decode of an animation
  // NETSCAPE2.0: 0 loops forever, n > 0 plays n + 1 times, -1 (no extension) plays once.
  int32_t loop_count = 0;
  uint32_t document_reference_count = 0;
  bool animated() const { return header.frame_count > 1; }
};

class ImageStore {
 public:
  ImageStore(ImageCache& images, SurfaceCache& surfaces) : images_(images), surfaces_(surfaces) {}
  // Not owned; must outlive the store's next Acquire. nullptr: no disk cache.
  void SetDiskCache(cache::DiskCache* disk) { disk_ = disk; }
  // Bytes a data: URL may decode to (HtmlLimits::max_data_url_bytes).
  void set_max_data_url_bytes(size_t bytes) { max_data_url_bytes_ = bytes; }
  ImageStore(const ImageStore&) = delete;
  ImageStore& operator=(const ImageStore&) = delete;

  // nullptr with *error ("img/a.png: cannot open", "...: corrupt: ...") when it cannot be loaded.
  const ImageRecord* Acquire(const std::string& url, std::string* error);
  void Release(uint64_t id);

  ImageRecord* Find(uint64_t id);
  const ImageRecord* Find(uint64_t id) const;
  size_t record_count() const { return by_id_.size(); }
  // Heap bytes of the records (reported under the engine).
  size_t MemoryBytes() const;
  // Reads of the file at an image's URL (the network, in this model).
  uint64_t file_read_count() const { return file_read_count_; }

 private:
  bool LoadBytes(ImageRecord& record, std::string* error);
  // The compressed bytes of `url`: from the DiskCache when it has them, else from the file (or
  // the data: URL itself). *from_disk says which. False with *error when none has them; a remote
  // URL (no network here) fails at once.
  bool FetchBytes(const std::string& url, std::vector<uint8_t>* bytes, bool* from_disk,
                  std::string* error);

  ImageCache& images_;
  SurfaceCache& surfaces_;
  std::unordered_map<std::string, uint64_t> by_url_;
  std::unordered_map<uint64_t, std::unique_ptr<ImageRecord>> by_id_;
  cache::DiskCache* disk_ = nullptr;
  uint64_t next_id_ = 1;
  uint64_t file_read_count_ = 0;
  size_t max_data_url_bytes_ = 8 * 1024 * 1024;
};

// "file:///a/b.png" -> "/a/b.png"; other strings unchanged.
std::string PathFromUrl(const std::string& url);
// The whole file, or false.
bool ReadWholeFile(const std::string& path, std::vector<uint8_t>* bytes);

}  // namespace lethe::internal

#endif  // LETHE_ENGINE_IMAGE_STORE_H_
