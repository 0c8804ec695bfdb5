#include "image_store.h"

#include <fstream>
#include <iterator>

#include "lethe/check.h"
#include "lethe/image_format.h"
#include "lethe/probe.h"
#include "url.h"

namespace lethe::internal {

std::string PathFromUrl(const std::string& url) {
  constexpr char kFile[] = "file://";
  return url.rfind(kFile, 0) == 0 ? url.substr(sizeof(kFile) - 1) : url;
}

bool ReadWholeFile(const std::string& path, std::vector<uint8_t>* bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  bytes->assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return !in.bad();
}

const ImageRecord* ImageStore::Acquire(const std::string& url, std::string* error) {
  auto found = by_url_.find(url);
  ImageRecord* record = nullptr;
  if (found != by_url_.end()) {
    record = by_id_.at(found->second).get();
  } else {
    auto fresh = std::make_unique<ImageRecord>();
    fresh->url = url;
    if (!LoadBytes(*fresh, error)) return nullptr;
    fresh->id = next_id_++;
    record = fresh.get();
    by_url_.emplace(url, record->id);
    by_id_.emplace(record->id, std::move(fresh));
    if (!images_.AddReference(url)) {
      *error = url + ": dropped from the image cache at once";
      return nullptr;
    }
    ++record->document_reference_count;
    return record;
  }
  // Known URL: its bytes may have expired from the ImageCache (no document held it).
  if (!images_.AddReference(url)) {
    if (!LoadBytes(*record, error) || !images_.AddReference(url)) {
      if (error->empty()) *error = url + ": dropped from the image cache at once";
      return nullptr;
    }
  }
  ++record->document_reference_count;
  return record;
}

void ImageStore::Release(uint64_t id) {
  ImageRecord* record = Find(id);
  LETHE_CHECK(record != nullptr && record->document_reference_count > 0,
              "ImageStore::Release of an image nobody acquired");
  images_.RemoveReference(record->url);
  if (--record->document_reference_count == 0) surfaces_.RemoveImage(id);
}

ImageRecord* ImageStore::Find(uint64_t id) {
  auto found = by_id_.find(id);
  return found == by_id_.end() ? nullptr : found->second.get();
}

const ImageRecord* ImageStore::Find(uint64_t id) const {
  auto found = by_id_.find(id);
  return found == by_id_.end() ? nullptr : found->second.get();
}

size_t ImageStore::MemoryBytes() const {
  size_t bytes = 0;
  for (const auto& [id, record] : by_id_) {
    bytes += sizeof(ImageRecord) + record->url.capacity() +
             record->frame_delays_ms.capacity() * sizeof(uint32_t);
  }
  return bytes;
}

bool ImageStore::FetchBytes(const std::string& url, std::vector<uint8_t>* bytes, bool* from_disk,
                            std::string* error) {
  *from_disk = false;
  const UrlKind kind = KindOf(url);
  if (kind == UrlKind::kRemote) {
    *error = url + ": remote URLs are not fetched (no network)";
    return false;
  }
  if (kind == UrlKind::kData) {
    std::string why;
    if (DecodeDataUrl(url, max_data_url_bytes_, bytes, &why)) return true;
    *error = url.substr(0, 64) + (url.size() > 64 ? "...: " : ": ") + why;
    return false;
  }
  if (disk_ != nullptr) {
    cache::DiskCacheResult<cache::DiskCacheEntry> entry = disk_->Get(url);
    if (entry.ok()) {
      *bytes = std::move(entry.value().bytes);
      *from_disk = true;
      return true;
    }
    // Any other failure (an I/O error) is counted by the DiskCache; the file is read instead.
  }
  ++file_read_count_;
  if (ReadWholeFile(PathFromUrl(url), bytes)) return true;
  *error = url + ": cannot open";
  return false;
}

bool ImageStore::LoadBytes(ImageRecord& record, std::string* error) {
  std::vector<uint8_t> bytes;
  bool from_disk = false;
  if (!FetchBytes(record.url, &bytes, &from_disk, error)) return false;
  DecodeResult<ImageInfo> info = Probe(bytes);
  if (!info) {
    *error = record.url + ": " + std::string(DecodeErrorCodeName(info.error().code)) + ": " +
             info.error().reason;
    return false;
  }
  record.header = ImageHeaderInfo{info->format, info->OrientedWidth(), info->OrientedHeight(),
                                  info->frame_count};
  if (disk_ != nullptr && !from_disk && KindOf(record.url) != UrlKind::kData) {
    cache::DiskCacheMetadata metadata;
    metadata.content_type = "image/";
    metadata.content_type += ImageFormatName(info->format);
    (void)disk_->Put(record.url, bytes, metadata);  // a failure is counted by the DiskCache
  }
  ImageCacheOutcome outcome = images_.Put(record.url, bytes, record.header);
  if (outcome != ImageCacheOutcome::kStored) {
    *error = record.url + ": image cache: " + ImageCacheOutcomeName(outcome);
    return false;
  }
  return true;
}

}  // namespace lethe::internal
