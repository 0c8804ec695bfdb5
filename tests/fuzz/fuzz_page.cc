// Fuzzes ParsePageDescription: a page is content from the web, as hostile as an image. Beyond "no
// crash, no leak", a page that parses must hold what the engine's layout relies on, and a page
// that does not must say why with the name of the page first.
#include <cstddef>
#include <cstdint>
#include <string>
#include <variant>

#include "lethe/page_description.h"

namespace {

// The invariants the layout and the painter assume of a parsed page; traps (a finding) if one
// fails.
void CheckParsedPage(const lethe::PageDescription& page) {
  if (page.width < 1 || page.width > 16384 || page.height < 1 || page.height > (1 << 20)) {
    __builtin_trap();
  }
  for (const lethe::PageItem& item : page.items) {
    const lethe::LayoutRect& rect = std::visit([](const auto& it) -> const lethe::LayoutRect& { return it.rect; }, item);
    if (rect.width < 1 || rect.height < 1 || rect.y < 0 || rect.y >= page.height) __builtin_trap();
    if (rect.x < -16384 || rect.x > 16384) __builtin_trap();
    if (const auto* image = std::get_if<lethe::PageImageItem>(&item); image && image->src.empty()) {
      __builtin_trap();
    }
    if (const auto* text = std::get_if<lethe::PageTextItem>(&item); text && (text->size < 4 || text->size > 512)) {
      __builtin_trap();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string json(reinterpret_cast<const char*>(data), size);
  auto result = lethe::ParsePageDescription(json, "/site/pages", "fuzz.json");
  if (const auto* page = std::get_if<lethe::PageDescription>(&result)) {
    CheckParsedPage(*page);
  } else if (std::get<lethe::PageError>(result).message.rfind("fuzz.json: ", 0) != 0) {
    __builtin_trap();
  }
  return 0;
}
