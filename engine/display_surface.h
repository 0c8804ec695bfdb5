// engine/display_surface.h — the decoders' Surface and AnimatedImage as the SurfaceCache sees them
// (CachedSurface), and the decode step that makes them for display.
//
// DecodeForDisplay runs on a decode worker (or on the loop thread when the engine has no workers):
// it decodes the compressed bytes at the layout size (stills) or natural size (animations, whose
// frames stay paletted), composes an animation's first frame so that its canvas exists before the
// cache reads its cost, and makes the image's placeholder when the caller asks for one.
//
// Threads: a DisplaySurface is drawn on the loop thread only; the cache may drop its reference on
// any thread. MemoryBytes() is stable while cached (an animation's canvas is made before insert).
#ifndef LETHE_ENGINE_DISPLAY_SURFACE_H_
#define LETHE_ENGINE_DISPLAY_SURFACE_H_

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "lethe/animated_image.h"
#include "lethe/cached_surface.h"
#include "lethe/clock.h"
#include "lethe/image_cache.h"
#include "lethe/surface.h"
#include "lethe/surface_cache.h"

namespace lethe::internal {

// SurfaceKey::flags of an animation (its key's size is the natural size).
inline constexpr uint32_t kAnimatedSurfaceFlag = 1;

class StillSurface final : public CachedSurface {
 public:
  explicit StillSurface(Surface surface) : surface_(std::move(surface)) {}
  size_t MemoryBytes() const override { return surface_.MemoryBytes(); }
  const Surface& surface() const { return surface_; }

 private:
  Surface surface_;
};

class AnimationSurface final : public CachedSurface {
 public:
  explicit AnimationSurface(AnimatedImage image) : image_(std::move(image)) {}
  size_t MemoryBytes() const override;
  bool IsAnimated() const override { return true; }
  AnimatedImage& image() { return image_; }

 private:
  AnimatedImage image_;
};

// Placeholder format, kept in the ImageCache entry: [width u8][height u8][0][0] then width x height
// premultiplied BGRA8 pixels. At most kPlaceholderMaxSide per side: 4 + 24*24*4 = 2308 bytes.
inline constexpr uint32_t kPlaceholderMaxSide = 24;
// A tiny copy of `source` (area average), in the placeholder format.
std::vector<uint8_t> MakePlaceholder(const Surface& source);
// The placeholder's pixels as a Surface; empty when `bytes` is not a valid placeholder.
Surface PlaceholderToSurface(std::span<const uint8_t> bytes);

struct DecodeJob {
  SurfaceKey key;  // for a still: the layout size (clamped to natural); animation: natural size
  std::string url;
  std::shared_ptr<const EncodedImage> encoded;
  bool ahead = false;             // decode-ahead (not yet visible)
  bool want_placeholder = false;  // the entry has none yet
};

struct DecodeOutcome {
  SurfaceKey key;
  std::string url;
  bool ahead = false;
  std::shared_ptr<CachedSurface> surface;  // nullptr on failure
  std::string error;                       // why, for the log
  Clock::Duration decode_time{};           // real time spent decoding
  std::vector<uint8_t> placeholder;        // empty unless asked and possible
  std::vector<uint32_t> frame_delays_ms;   // an animation's, in frame order
  SurfaceInsertOutcome inserted = SurfaceInsertOutcome::kInvalid;  // set by whoever inserts it
};

// Any thread. Never throws; bad input gives an outcome with an error.
DecodeOutcome DecodeForDisplay(const DecodeJob& job);

}  // namespace lethe::internal

#endif  // LETHE_ENGINE_DISPLAY_SURFACE_H_
