// The Engine's browser-like model: windows, navigation through the session history and the
// BfCache, visibility (locks, animations, decode-ahead) and drawing.
#include <algorithm>
#include <filesystem>

#include "engine_impl.h"
#include "lethe/probe.h"
#include "painter.h"

namespace lethe::internal {

namespace {

constexpr uint32_t kBrokenImageColor = 0xffd0d0d0;  // a missing image
constexpr uint32_t kBlankImageColor = 0xffececec;   // decoding, no placeholder yet
constexpr uint32_t kDefaultFrameDelayMs = 100;

bool EndsWith(const std::string& text, std::string_view suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The BfCache key of the history entry at `position` (see SessionHistory::position) in `window`.
// int32 positions: a window would need 2^31 navigations to wrap.
HistoryEntryId EntryKey(WindowId window, size_t position) {
  return HistoryEntryId{window, static_cast<int32_t>(position)};
}

HistoryEntryId CurrentEntryKey(const Window& window) {
  return EntryKey(window.id(), window.history().position());
}

}  // namespace

Window* EngineImpl::FindWindow(WindowId id) const {
  auto found = windows_.find(id);
  return found == windows_.end() ? nullptr : found->second.get();
}

// ---- windows ----------------------------------------------------------------------------------

WindowId EngineImpl::OpenWindow() {
  WindowId id = next_window_id_++;
  windows_.emplace(id, std::make_unique<Window>(id, options_.viewport_width, options_.viewport_height));
  TraceInstant("window-open", {{"window", std::to_string(id)}});
  if (foreground_ == 0) SetForegroundWindow(id);
  return id;
}

void EngineImpl::CloseWindow(WindowId id) {
  Window* window = FindWindow(id);
  if (window == nullptr) return;
  StopAnimations(*window);
  window->UnlockAll(surfaces_);
  windows_.erase(id);  // its document releases its images
  bfcache_.RemoveSession(id);
  TraceInstant("window-close", {{"window", std::to_string(id)}});
  if (foreground_ == id) {
    foreground_ = 0;
    if (!windows_.empty()) SetForegroundWindow(windows_.rbegin()->first);
  }
  ArmTicks();
}

void EngineImpl::SetForegroundWindow(WindowId id) {
  Window* next = FindWindow(id);
  if (next == nullptr) return;
  if (Window* previous = FindWindow(foreground_); previous != nullptr && previous != next) {
    previous->SetForeground(false);
    UpdateDisplay(*previous);
  }
  foreground_ = id;
  next->SetForeground(true);
  UpdateDisplay(*next);
  ArmTicks();
}

// ---- navigation -------------------------------------------------------------------------------

std::unique_ptr<Document> EngineImpl::LoadDocument(const std::string& path, std::string* error) {
  PageDescription page;
  if (EndsWith(path, ".json")) {
    auto loaded = LoadPageDescription(path);
    if (auto* page_error = std::get_if<PageError>(&loaded)) {
      *error = page_error->message;
      return nullptr;
    }
    page = std::move(std::get<PageDescription>(loaded));
  } else {
    // A single image: a page made of it (sized from its header).
    std::vector<uint8_t> bytes;
    if (!ReadWholeFile(PathFromUrl(path), &bytes)) {
      *error = path + ": cannot open";
      return nullptr;
    }
    DecodeResult<ImageInfo> info = Probe(bytes);
    if (!info) {
      *error = path + ": not a page (.json) or an image: " + info.error().reason;
      return nullptr;
    }
    std::string absolute = std::filesystem::absolute(PathFromUrl(path)).lexically_normal().string();
    page = PageFromImages({absolute},
                          {{static_cast<int>(info->OrientedWidth()),
                            static_cast<int>(info->OrientedHeight())}},
                          options_.viewport_width);
  }
  return MakeDocument(page, path);
}

std::unique_ptr<Document> EngineImpl::MakeDocument(const PageDescription& page, const std::string& url) {
  ++stats_.page_load_count;
  auto document = std::make_unique<Document>(page, url, store_);
  for (const std::string& broken : document->broken_images()) log_(broken);
  // Layout: a run's height is that of its wrapped lines (the description only knows one line),
  // so that a long paragraph stays drawn while any of its lines is in the viewport.
  for (PageTextItem& text : document->texts()) {
    text.rect.height = std::max(text.rect.height, text_.Measure(text));
  }
  return document;
}

void EngineImpl::FreezeCurrent(Window& window) {
  StopAnimations(window);
  std::unique_ptr<Document> old = window.SwapDocument(nullptr, surfaces_);
  if (old == nullptr || window.history().current() == nullptr) return;
  window.mutable_history().mutable_current()->scroll_y = window.scroll_y();
  HistoryEntryId key = CurrentEntryKey(window);
  (void)bfcache_.Store(key, std::move(old));  // kEvicted: it was the farthest; it is dropped
}

void EngineImpl::RestoreCurrent(Window& window) {
  const HistoryEntry* entry = window.history().current();
  HistoryEntryId key = CurrentEntryKey(window);
  bfcache_.SetCurrentIndex(window.id(), key.index);
  std::unique_ptr<Document> document;
  if (std::unique_ptr<CachedDocument> cached = bfcache_.Take(key)) {
    document.reset(static_cast<Document*>(cached.release()));
    ++stats_.bfcache_restore_count;
  } else {
    std::string error;
    document = LoadDocument(entry->url, &error);
    if (document == nullptr) log_(error);
  }
  window.SwapDocument(std::move(document), surfaces_);
  window.SetScroll(entry->scroll_y);
  UpdateDisplay(window);
}

Status EngineImpl::Navigate(WindowId id, const std::string& path) {
  Window* window = FindWindow(id);
  if (window == nullptr) return Status::Error("no window " + std::to_string(id));
  std::string error;
  std::unique_ptr<Document> document = LoadDocument(path, &error);
  if (document == nullptr) return Status::Error(error);
  Show(*window, std::move(document), path);
  return Status::Ok();
}

Status EngineImpl::Load(WindowId id, const PageDescription& page, const std::string& url) {
  Window* window = FindWindow(id);
  if (window == nullptr) return Status::Error("no window " + std::to_string(id));
  Show(*window, MakeDocument(page, url), url);
  return Status::Ok();
}

void EngineImpl::Show(Window& window, std::unique_ptr<Document> document, const std::string& url) {
  const WindowId id = window.id();
  FreezeCurrent(window);
  // The forward list is dropped by the navigation: so are its frozen documents.
  const SessionHistory& history = window.history();
  const size_t first = history.first_position();
  for (size_t i = history.entries().empty() ? 0 : history.index() + 1; i < history.entries().size();
       ++i) {
    bfcache_.Take(EntryKey(id, first + i));
  }
  window.mutable_history().Navigate(url);
  // At the cap the oldest entry went: so does its frozen document. The others keep their keys
  // (positions do not shift).
  if (history.first_position() != first) bfcache_.Take(EntryKey(id, first));
  bfcache_.SetCurrentIndex(id, CurrentEntryKey(window).index);
  window.SwapDocument(std::move(document), surfaces_);
  window.SetScroll(0);
  UpdateDisplay(window);
  TraceInstant("navigate", {{"window", std::to_string(id)}, {"url", url}});
  ArmTicks();
}

bool EngineImpl::Traverse(WindowId id, bool back) {
  Window* window = FindWindow(id);
  if (window == nullptr) return false;
  if (back ? !window->history().CanGoBack() : !window->history().CanGoForward()) return false;
  FreezeCurrent(*window);
  if (back) {
    window->mutable_history().GoBack();
  } else {
    window->mutable_history().GoForward();
  }
  RestoreCurrent(*window);
  ArmTicks();
  return true;
}

bool EngineImpl::GoBack(WindowId id) { return Traverse(id, true); }
bool EngineImpl::GoForward(WindowId id) { return Traverse(id, false); }

void EngineImpl::ScrollTo(WindowId id, int y) {
  Window* window = FindWindow(id);
  if (window == nullptr) return;
  window->SetScroll(y);
  UpdateDisplay(*window);
  ArmTicks();
}

// ---- visibility -------------------------------------------------------------------------------

void EngineImpl::UpdateDisplay(Window& window) {
  window.UpdateLocks(surfaces_);
  Document* document = window.document();
  if (document == nullptr) return;
  LayoutRect viewport = window.Viewport();
  LayoutRect ahead{viewport.x, viewport.y - options_.decode_ahead_px, viewport.width,
                   viewport.height + 2 * options_.decode_ahead_px};
  auto& images = document->images();
  for (size_t i = 0; i < images.size(); ++i) {
    DocumentImage& image = images[i];
    bool visible = window.foreground() && image.image_id != 0 && window.InViewport(image);
    if (image.animated() && visible && !image.finished && image.frame_timer == 0) {
      ScheduleFrame(window, i);
    }
    if (image.animated() && !visible && image.frame_timer != 0) {
      loop_.CancelTimer(image.frame_timer);
      image.frame_timer = 0;
    }
    // Decode-ahead: about to scroll into view in the foreground window.
    if (window.foreground() && image.image_id != 0 && !visible && image.rect.Intersects(ahead)) {
      RequestDecode(image, /*urgent=*/false);
    }
  }
}

void EngineImpl::StopAnimations(Window& window) {
  if (window.document() == nullptr) return;
  for (DocumentImage& image : window.document()->images()) {
    if (image.frame_timer != 0) loop_.CancelTimer(image.frame_timer);
    image.frame_timer = 0;
  }
}

void EngineImpl::ScheduleFrame(Window& window, size_t index) {
  DocumentImage& image = window.document()->images()[index];
  uint32_t delay_ms = kDefaultFrameDelayMs;
  if (const ImageRecord* record = store_.Find(image.image_id);
      record != nullptr && image.frame < record->frame_delays_ms.size()) {
    delay_ms = record->frame_delays_ms[image.frame];
  }
  WindowId id = window.id();
  image.frame_timer = loop_.StartTimer(std::chrono::milliseconds(delay_ms),
                                       [this, id, index] { OnFrameTimer(id, index); });
}

void EngineImpl::OnFrameTimer(WindowId id, size_t index) {
  Window* window = FindWindow(id);
  if (window == nullptr || window->document() == nullptr) return;
  DocumentImage& image = window->document()->images()[index];
  image.frame_timer = 0;
  image.frame = (image.frame + 1) % std::max<uint32_t>(1, image.frame_count);
  ++image.frames_shown;
  if (image.frame + 1 == image.frame_count) {
    // The last frame is showing: one play done. Browsers play a GIF loop_count + 1 times (once
    // without the extension) and then keep its last frame.
    ++image.plays;
    const ImageRecord* record = store_.Find(image.image_id);
    int32_t loops = record != nullptr ? record->loop_count : 0;
    if (loops != 0 && static_cast<int64_t>(image.plays) >= (loops < 0 ? 1 : int64_t{loops} + 1)) {
      image.finished = true;
      return;
    }
  }
  if (window->foreground() && window->InViewport(image)) ScheduleFrame(*window, index);
}

// ---- decoding ---------------------------------------------------------------------------------

SurfaceKey EngineImpl::KeyFor(const DocumentImage& image) const {
  if (image.animated()) {
    return {image.image_id, image.natural_width, image.natural_height, kAnimatedSurfaceFlag};
  }
  return {image.image_id,
          std::min(static_cast<uint32_t>(image.rect.width), image.natural_width),
          std::min(static_cast<uint32_t>(image.rect.height), image.natural_height), 0};
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

void EngineImpl::DrawImage(DocumentImage& image, const LayoutRect& target_rect) {
  if (image.image_id == 0) {
    FillRect(framebuffer_, target_rect, kBrokenImageColor);
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
      if (canvas) BlitScaled(framebuffer_, **canvas, target_rect, false);
    } else {
      BlitScaled(framebuffer_, static_cast<StillSurface&>(*surface).surface(), target_rect, false);
    }
    return;
  }
  std::shared_ptr<const EncodedImage> encoded = images_.Get(image.url);
  Surface placeholder =
      encoded != nullptr ? PlaceholderToSurface(encoded->placeholder()) : Surface();
  if (!placeholder.empty()) {
    ++stats_.placeholder_draw_count;
    BlitScaled(framebuffer_, placeholder, target_rect, true);
  } else {
    ++stats_.blank_draw_count;
    FillRect(framebuffer_, target_rect, kBlankImageColor);
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
  for (DocumentImage& image : document->images()) {
    if (!window->InViewport(image)) continue;
    LayoutRect target = image.rect;
    target.y -= scroll;
    DrawImage(image, target);
  }
  const LayoutRect viewport{0, scroll, options_.viewport_width, options_.viewport_height};
  for (const PageTextItem& text : document->texts()) {
    if (text.rect.Intersects(viewport)) text_.Draw(framebuffer_, text, 0, -scroll);
  }
  uncached_.clear();
  ArmTicks();
  return framebuffer_;
}

}  // namespace lethe::internal
