#include "html_page.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "html_bounds.h"
#include "html_container.h"
#include "image_store.h"
#include "table_nesting.h"

namespace lethe::internal {

namespace {

// The user-agent stylesheet: what every page starts from (display types, the margins and sizes
// of headings, paragraphs and lists, tables), written for Lethe.
constexpr char kUserAgentCss[] = R"(
html, address, blockquote, body, dd, div, dl, dt, fieldset, form, frame, frameset, h1, h2, h3, h4,
h5, h6, noframes, ol, p, ul, center, dir, hr, menu, pre, article, aside, footer, header, main,
nav, section, figure, figcaption { display: block; }
head, style, script, title, link, meta, base, template, noscript { display: none; }
li { display: list-item; }
html { background-color: #ffffff; color: #000000; }
body { margin: 8px; font-family: sans-serif; font-size: 16px; line-height: normal; }
h1 { font-size: 2em; margin: 0.67em 0; font-weight: bold; }
h2 { font-size: 1.5em; margin: 0.75em 0; font-weight: bold; }
h3 { font-size: 1.17em; margin: 0.83em 0; font-weight: bold; }
h4 { margin: 1.12em 0; font-weight: bold; }
h5 { font-size: 0.83em; margin: 1.5em 0; font-weight: bold; }
h6 { font-size: 0.75em; margin: 1.67em 0; font-weight: bold; }
p, blockquote, ul, ol, dl, figure { margin: 1em 0; }
blockquote, figure { margin-left: 40px; margin-right: 40px; }
ul, ol, dir, menu { padding-left: 40px; }
ol { list-style-type: decimal; }
ul { list-style-type: disc; }
ul ul, ol ul { list-style-type: circle; }
ol ol, ol ul, ul ol, ul ul { margin-top: 0; margin-bottom: 0; }
dd { margin-left: 40px; }
b, strong, th { font-weight: bold; }
i, em, cite, var, dfn, address { font-style: italic; }
u, ins { text-decoration: underline; }
s, strike, del { text-decoration: line-through; }
pre, code, kbd, samp, tt { font-family: monospace; }
pre { white-space: pre; margin: 1em 0; }
small { font-size: 0.83em; }
big { font-size: 1.17em; }
sub { vertical-align: sub; font-size: 0.83em; }
sup { vertical-align: super; font-size: 0.83em; }
a { color: #0000ee; text-decoration: underline; }
hr { border: 1px inset #808080; margin: 0.5em 0; }
center { text-align: center; }
img { display: inline-block; }
br { display: block; }
table { display: table; border-collapse: separate; border-spacing: 2px; }
thead { display: table-header-group; vertical-align: middle; }
tbody { display: table-row-group; vertical-align: middle; }
tfoot { display: table-footer-group; vertical-align: middle; }
tr { display: table-row; vertical-align: inherit; }
td, th { display: table-cell; vertical-align: inherit; padding: 1px; }
th { text-align: center; }
caption { display: table-caption; text-align: center; }
col { display: table-column; }
colgroup { display: table-column-group; }
)";

}  // namespace

HtmlServices::HtmlServices(ImageStore& store_in, TextPainter& text_in, HtmlLimits limits_in,
                           int viewport_width_in, int viewport_height_in, LogFunction log_in)
    : store(store_in),
      text(text_in),
      limits(limits_in),
      viewport_width(viewport_width_in),
      viewport_height(viewport_height_in),
      log(std::move(log_in)),
      context_(std::make_unique<litehtml::context>()) {
  context_->load_master_stylesheet(kUserAgentCss);
  WarmUp();
}

// litehtml keeps function-level statics (tables of names, parsed defaults) that it makes on first
// use and never frees: made while a page's arena is bound, they would stay in it for good and
// make the page a ghost. One page of every common construct, parsed and laid out here, with no
// arena bound, makes them on the process heap.
void HtmlServices::WarmUp() {
  static constexpr char kWarmUpPage[] =
      "<!DOCTYPE html><html><head><title>t</title><style>"
      "body { margin: 0; font: italic bold 12px/1.5 serif; color: #123; }"
      "div.a > p + ul li:first-child, #b:hover { float: left; clear: both; position: relative;"
      " display: inline-block; border: 1px dashed rgba(1,2,3,0.5); border-radius: 2px;"
      " padding: 1em 2% 3px 4pt; margin: auto; width: 50%; min-height: 10px; max-width: 90%;"
      " background: #fff no-repeat right top; background-size: cover;"
      " text-align: center; text-decoration: underline; text-transform: uppercase;"
      " white-space: nowrap; vertical-align: middle; overflow: hidden; z-index: 1;"
      " list-style: square inside; line-height: 2; visibility: visible; cursor: pointer; }"
      "@media screen and (max-width: 800px) { p { font-size: 1.2em; } }"
      "</style></head><body><div class=a id=b><p>a <b>b</b> <i>c</i> <a href=x>d</a><br>"
      "<span>e</span></p><ul><li>f</li></ul><ol><li>g</li></ol><table><tr><th>h</th><td>i</td>"
      "</tr></table><pre>j</pre><h1>k</h1><h2>l</h2><h3>m</h3><blockquote>n</blockquote>"
      "<img width=1 height=1 alt=o><hr><dl><dt>p</dt><dd>q</dd></dl></div></body></html>";
  HtmlContainer container(*this, "", /*detached=*/true);
  litehtml::document::ptr document =
      litehtml::document::createFromUTF8(kWarmUpPage, &container, context_.get());
  if (document == nullptr) return;
  document->render(viewport_width);
  std::vector<DocumentImage> images;
  container.BeginRecord(&images);
  litehtml::position everything(0, 0, std::max(document->width(), 1),
                                std::max(document->height(), 1));
  document->draw(0, 0, 0, &everything);
  container.End();
}

HtmlServices::~HtmlServices() = default;

void HtmlServices::AddGhost(std::string url, lethe_arena_t arena, uint64_t bytes) {
  ghosts_.push_back({std::move(url), arena, bytes});
}

const std::vector<HtmlServices::Ghost>& HtmlServices::Ghosts() const {
  std::vector<Ghost> alive;
  for (Ghost& ghost : ghosts_) {
    lethe_arena_stats_t stats{};
    if (lethe_arena_stats(ghost.arena, &stats) != 0) continue;  // released: its last byte went
    ghost.bytes = stats.allocated_bytes;
    alive.push_back(std::move(ghost));
  }
  ghosts_ = std::move(alive);
  return ghosts_;
}

// Members in destruction order, reversed: litehtml's document goes first (it calls delete_font on
// the container), then the container (which releases the page's images).
struct HtmlPage::Dom {
  std::unique_ptr<HtmlContainer> container;
  litehtml::document::ptr document;
};

HtmlPage::HtmlPage(HtmlServices& services, const std::string& url)
    : services_(services), arena_(lethe_arena_create()), url_(url) {
  // No arena (LETHE_ARENA_MAX alive): the page still works, its bytes are not told apart.
  ArenaScope scope(arena_);
  dom_ = std::make_shared<Dom>();
  dom_->container = std::make_unique<HtmlContainer>(services, url);
  container_ = dom_->container.get();
}

HtmlPage::~HtmlPage() {
  container_ = nullptr;
  dom_.reset();  // the last reference, unless the embedder retained it
  if (arena_ == LETHE_ARENA_NONE) return;
  uint64_t left = 0;
  if (lethe_arena_destroy(arena_, &left) == 0 && left > 0) services_.AddGhost(url_, arena_, left);
}

uint64_t HtmlPage::DomBytes() const {
  lethe_arena_stats_t stats{};
  if (arena_ == LETHE_ARENA_NONE || lethe_arena_stats(arena_, &stats) != 0) return 0;
  return stats.allocated_bytes;
}

HtmlPage::ArenaParts HtmlPage::DomParts() const {
  const uint64_t total = DomBytes();
  ArenaParts parts;
  parts.dom = std::min(dom_end_, total);
  parts.style = std::min(style_end_ - std::min(dom_end_, style_end_), total - parts.dom);
  parts.layout = total - parts.dom - parts.style;
  return parts;
}

std::unique_ptr<HtmlPage> HtmlPage::Load(HtmlServices& services, const std::string& path,
                                         std::string* error) {
  std::error_code ignored;
  const uintmax_t size = std::filesystem::file_size(path, ignored);
  if (size != static_cast<uintmax_t>(-1) && size > services.limits.max_page_bytes) {
    *error = path + ": larger than " + std::to_string(services.limits.max_page_bytes) +
             " bytes (HtmlLimits::max_page_bytes)";
    return nullptr;
  }
  std::vector<uint8_t> bytes;
  if (!ReadWholeFile(path, &bytes)) {
    *error = path + ": cannot open";
    return nullptr;
  }
  if (bytes.size() > services.limits.max_page_bytes) {
    *error = path + ": larger than " + std::to_string(services.limits.max_page_bytes) + " bytes";
    return nullptr;
  }
  std::string absolute = std::filesystem::absolute(path, ignored).lexically_normal().string();
  return FromText(services,
                  std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()),
                  absolute.empty() ? path : absolute);
}

std::unique_ptr<HtmlPage> HtmlPage::FromText(HtmlServices& services, std::string_view html,
                                             const std::string& url) {
  std::unique_ptr<HtmlPage> page(new HtmlPage(services, url));
  page->Build(html.substr(0, std::min(html.size(), services.limits.max_page_bytes)));
  return page;
}

void HtmlPage::Build(std::string_view html) {
  source_bytes_ = html.size();
  ArenaScope scope(arena_);
  bool marked = false;
  HtmlCuts cuts;
  int lowered_depth = -1;
  litehtml::document::ptr document = ParseBounded(
      html, services_.limits,
      [this, &marked](const std::string& bounded) {
        container_->BeginParse();
        container_->MarkBeforeStyles([this, &marked] {
          dom_end_ = DomBytes();
          marked = true;
        });
        return litehtml::document::createFromUTF8(bounded.c_str(), container_,
                                                  &services_.context());
      },
      &cuts, &lowered_depth);
  container_->MarkBeforeStyles(nullptr);
  style_end_ = DomBytes();
  if (!marked) dom_end_ = style_end_;  // no root element: no styles applied
  LogCuts(cuts, lowered_depth);
  if (document == nullptr) return;
  document->render(services_.viewport_width);
  // Page coordinates stay far from int overflow: 2^28 pixels is ~10^7 lines of text.
  width_ = std::clamp(document->width(), 1, 1 << 28);
  height_ = std::clamp(document->height(), 0, 1 << 28);
  // The canvas colour: the root's background (CSS propagates body's to it when the root has none).
  if (litehtml::element::ptr root = document->root()) {
    const litehtml::background* bg = root->get_background();
    if (bg == nullptr || bg->m_color.alpha == 0) {
      for (size_t i = 0; i < root->get_children_count(); ++i) {
        litehtml::element::ptr child = root->get_child(static_cast<int>(i));
        if (child != nullptr && child->get_tagName() == std::string("body")) {
          bg = child->get_background();
        }
      }
    }
    if (bg != nullptr && bg->m_color.alpha == 255) {
      background_ = 0xff000000u | uint32_t{bg->m_color.red} << 16 |
                    uint32_t{bg->m_color.green} << 8 | bg->m_color.blue;
    }
  }
  dom_->document = document;
}

void HtmlPage::LogCuts(const HtmlCuts& cuts, int lowered_depth) const {
  if (!services_.log) return;
  HtmlLimits used = services_.limits;
  if (lowered_depth >= 0) used.max_depth = lowered_depth;
  std::string text = cuts.Describe(used);
  if (lowered_depth >= 0) {
    text += " (lowered from " + std::to_string(services_.limits.max_depth) +
            ": its stylesheets nest tables deeper than " +
            std::to_string(services_.limits.max_table_depth) + ")";
  }
  if (!text.empty()) services_.log(container_->title() + " " + text);
}

const std::string& HtmlPage::title() const { return container_->title(); }

const std::vector<std::string>& HtmlPage::broken_images() const {
  return container_->broken_images();
}

std::vector<DocumentImage> HtmlPage::TakeImages() {
  std::vector<DocumentImage> images;
  litehtml::document* document = dom_->document.get();
  if (document == nullptr) return images;
  ArenaScope scope(arena_);
  container_->BeginRecord(&images);
  litehtml::position everything(0, 0, std::max(width_, 1), std::max(height_, 1));
  document->draw(0, 0, 0, &everything);
  container_->End();
  return images;
}

void HtmlPage::Paint(Surface& target, const LayoutRect& viewport, std::vector<DocumentImage>& images,
                     HtmlImagePainter& painter) {
  litehtml::document* document = dom_->document.get();
  if (document == nullptr) return;
  ArenaScope scope(arena_);
  container_->BeginPaint(&target, viewport.y, &images, &painter);
  litehtml::position clip(0, 0, viewport.width, viewport.height);
  document->draw(0, -viewport.x, -viewport.y, &clip);
  container_->End();
}

size_t HtmlPage::MemoryBytes() const {
  return sizeof(*this) + url_.capacity();
}

}  // namespace lethe::internal
