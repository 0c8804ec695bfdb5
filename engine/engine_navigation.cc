// The EngineImpl's browser-like model: windows, navigation through the session history and the
// BfCache, and visibility (locks, animations, decode-ahead).
#include <algorithm>
#include <cctype>
#include <filesystem>

#include "engine_impl.h"
#include "lethe/probe.h"

namespace lethe::internal {

namespace {

constexpr uint32_t kDefaultFrameDelayMs = 100;

bool EndsWith(const std::string& text, std::string_view suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool IsHtmlPath(const std::string& path) {
  std::string lower = path;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return EndsWith(lower, ".html") || EndsWith(lower, ".htm") || EndsWith(lower, ".xhtml");
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

RetainedDocument EngineImpl::RetainDocument(WindowId id) {
  const Window* window = FindWindow(id);
  const Document* document = window != nullptr ? window->document() : nullptr;
  if (document == nullptr || document->html() == nullptr) return {};
  RetainedDocument retained;
  retained.dom_ = document->html()->RetainDom();
  retained.engine_ = retained_token_;
  retained.url_ = document->url();
  return retained;
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
  if (IsHtmlPath(path)) {
    std::unique_ptr<HtmlPage> html = HtmlPage::Load(html_, PathFromUrl(path), error);
    if (html == nullptr) return nullptr;
    ++stats_.page_load_count;
    auto document = std::make_unique<Document>(std::move(html), path, store_);
    for (const std::string& broken : document->broken_images()) log_(broken);
    return document;
  }
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
      *error = path + ": not a page (.html, .json) or an image: " + info.error().reason;
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


}  // namespace lethe::internal
