// The EngineImpl's decoding and drawing: surfaces requested from the decode pool and received on
// the loop thread, images and text composited into the framebuffer, screenshots.
#include <algorithm>

#include "engine_impl.h"
#include "painter.h"
#include "png_writer.h"

namespace lethe::internal {

namespace {

constexpr uint32_t kBrokenImageColor = 0xffd0d0d0;  // a missing image
constexpr uint32_t kBlankImageColor = 0xffececec;   // decoding, no placeholder yet

}  // namespace

// ---- decoding ---------------------------------------------------------------------------------

SurfaceKey EngineImpl::KeyFor(const DocumentImage& image) const {
  if (image.animated()) {
    return {image.image_id, image.natural_width, image.natural_height, kAnimatedSurfaceFlag};
  }
  // Decoded at the size drawn, never above the natural size.
  return {image.image_id,
          std::min(static_cast<uint32_t>(std::max(image.tile.width, 1)), image.natural_width),
          std::min(static_cast<uint32_t>(std::max(image.tile.height, 1)), image.natural_height), 0};
}

void EngineImpl::RequestDecode(const DocumentImage& image, bool urgent) {
  SurfaceKey key = KeyFor(image);
  if (uncached_.count(key) != 0 || failed_.count(key) != 0 || pool_->IsPending(key)) return;
  if (surfaces_.Lookup(key) != nullptr) return;
  DecodeJob job;
  job.key = key;
  job.url = image.url;
  job.encoded = images_.Get(image.url);
  job.ahead = !urgent;
  job.want_placeholder = job.encoded != nullptr && job.encoded->placeholder().empty();
  if (!urgent) ++stats_.decode_ahead_count;
  pool_->Submit(key, urgent, [this, job = std::move(job)]() -> std::function<void()> {
    // On the worker: decode, then insert (the SurfaceCache is thread-safe).
    auto outcome = std::make_shared<DecodeOutcome>(DecodeForDisplay(job));
    if (outcome->surface != nullptr) {
      outcome->inserted = surfaces_.Insert(outcome->key, outcome->surface, outcome->decode_time);
    }
    return [this, outcome] { OnDecoded(std::move(*outcome)); };
  });
}

void EngineImpl::OnDecoded(DecodeOutcome outcome) {
  if (outcome.surface == nullptr) {
    ++stats_.decode_failure_count;
    failed_.insert(outcome.key);
    log_(outcome.error);
    return;
  }
  ++stats_.decode_count;
  stats_.decode_time += outcome.decode_time;
  if (outcome.inserted == SurfaceInsertOutcome::kOverBudget) uncached_[outcome.key] = outcome.surface;
  if (!outcome.placeholder.empty()) {
    (void)images_.SetPlaceholder(outcome.url, outcome.placeholder);  // the entry may be gone
  }
  if (!outcome.frame_delays_ms.empty()) {
    if (ImageRecord* record = store_.Find(outcome.key.image_id)) {
      record->frame_delays_ms = std::move(outcome.frame_delays_ms);
      record->loop_count = outcome.loop_count;
    }
  }
  ArmTicks();
}

// ---- drawing ----------------------------------------------------------------------------------

void EngineImpl::DrawImage(DocumentImage& image, const LayoutRect& target_rect,
                           const LayoutRect& clip) {
  if (image.image_id == 0) {
    FillRect(framebuffer_, target_rect, kBrokenImageColor, clip);
    return;
  }
  SurfaceKey key = KeyFor(image);
  std::shared_ptr<CachedSurface> surface = surfaces_.Lookup(key);
  if (surface == nullptr) {
    if (auto found = uncached_.find(key); found != uncached_.end()) surface = found->second;
  }
  if (surface == nullptr) {
    RequestDecode(image, /*urgent=*/true);
    // Without workers the decode ran inline: the surface may be there now.
    if (pool_->thread_count() == 0) surface = surfaces_.Lookup(key);
    if (surface == nullptr) {
      if (auto found = uncached_.find(key); found != uncached_.end()) surface = found->second;
    }
  }
  if (surface != nullptr) {
    ++stats_.surface_draw_count;
    if (surface->IsAnimated()) {
      auto& animation = static_cast<AnimationSurface&>(*surface).image();
      DecodeResult<const Surface*> canvas =
          animation.Compose(std::min(image.frame, animation.FrameCount() - 1));
      if (canvas) BlitScaled(framebuffer_, **canvas, target_rect, false, clip);
    } else {
      BlitScaled(framebuffer_, static_cast<StillSurface&>(*surface).surface(), target_rect, false,
                 clip);
    }
    return;
  }
  std::shared_ptr<const EncodedImage> encoded = images_.Get(image.url);
  Surface placeholder =
      encoded != nullptr ? PlaceholderToSurface(encoded->placeholder()) : Surface();
  if (!placeholder.empty()) {
    ++stats_.placeholder_draw_count;
    BlitScaled(framebuffer_, placeholder, target_rect, true, clip);
  } else {
    ++stats_.blank_draw_count;
    FillRect(framebuffer_, target_rect, kBlankImageColor, clip);
  }
}

const Framebuffer& EngineImpl::DrawFrame() {
  if (framebuffer_.empty()) {
    DecodeResult<Surface> surface = Surface::Create(static_cast<uint32_t>(options_.viewport_width),
                                                    static_cast<uint32_t>(options_.viewport_height));
    if (!surface) {
      log_("cannot allocate the framebuffer: " + surface.error().reason);
      return framebuffer_;
    }
    framebuffer_ = std::move(surface).value();
  }
  ++stats_.frame_count;
  LayoutRect full{0, 0, options_.viewport_width, options_.viewport_height};
  Window* window = FindWindow(foreground_);
  Document* document = window != nullptr ? window->document() : nullptr;
  framebuffer_.Clear();
  FillRect(framebuffer_, full, document != nullptr ? document->background() : 0xffffffff);
  if (document == nullptr) return framebuffer_;
  const int scroll = window->scroll_y();
  if (HtmlPage* html = document->html()) {
    html->Paint(framebuffer_, window->Viewport(), document->images(), *this);
    uncached_.clear();
    ArmTicks();
    return framebuffer_;
  }
  for (DocumentImage& image : document->images()) {
    if (!window->InViewport(image)) continue;
    LayoutRect target = image.rect;
    target.y -= scroll;
    DrawImage(image, target, full);
  }
  const LayoutRect viewport{0, scroll, options_.viewport_width, options_.viewport_height};
  for (const PageTextItem& text : document->texts()) {
    if (text.rect.Intersects(viewport)) text_.Draw(framebuffer_, text, 0, -scroll);
  }
  uncached_.clear();
  ArmTicks();
  return framebuffer_;
}


Status EngineImpl::Screenshot(const std::string& path) {
  const Framebuffer& frame = DrawFrame();
  std::string error = WritePng(frame, path);
  return error.empty() ? Status::Ok() : Status::Error(error);
}

}  // namespace lethe::internal
