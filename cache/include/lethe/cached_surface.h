// lethe/cached_surface.h — what the SurfaceCache stores: a decoded surface or animation, seen only
// through its memory cost, and the key it is stored under.
//
// The decoders layer's Surface and AnimatedImage are adapted to CachedSurface by whoever inserts
// them (the engine); the cache never looks at pixels. MemoryBytes() must be the sum of the
// allocator's usable sizes (lethe_usable_size) of every buffer the object owns, so that what the
// cache reports equals what the allocator holds for it. It is read once, at insert, on the inserting
// thread; the object must not grow while cached.
//
// Threads: a CachedSurface is shared (std::shared_ptr): the cache may drop its reference on any
// thread while a drawer still holds one; the object dies with the last reference.
#ifndef LETHE_CACHED_SURFACE_H_
#define LETHE_CACHED_SURFACE_H_

#include <cstddef>
#include <cstdint>
#include <functional>

namespace lethe {

class CachedSurface {
 public:
  virtual ~CachedSurface() = default;
  // Sum of lethe_usable_size() of every buffer owned (pixels, frames, palettes).
  virtual size_t MemoryBytes() const = 0;
  // True for an animation (reported apart from still images).
  virtual bool IsAnimated() const { return false; }
};

// One decoded version of one image: its id (the engine's, unique per image while it lives), the
// size it was decoded at, and flags (e.g. premultiplied or not, a color-management variant).
struct SurfaceKey {
  uint64_t image_id = 0;
  uint32_t width = 0;
  uint32_t height = 0;
  uint32_t flags = 0;
  bool operator==(const SurfaceKey&) const = default;
};

struct SurfaceKeyHash {
  size_t operator()(const SurfaceKey& key) const {
    uint64_t h = key.image_id * 0x9E3779B97F4A7C15ull;
    h ^= (static_cast<uint64_t>(key.width) << 32 | key.height) + 0x7F4A7C159E3779B9ull + (h << 6) +
         (h >> 2);
    h ^= key.flags + 0x9E3779B9ull + (h << 6) + (h >> 2);
    return static_cast<size_t>(h);
  }
};

}  // namespace lethe

#endif  // LETHE_CACHED_SURFACE_H_
