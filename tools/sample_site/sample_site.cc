#include "sample_site.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "page_html.h"
#include "page_layout.h"
#include "site_images.h"

namespace lethe::sample_site {

namespace {

bool WriteText(const std::filesystem::path& path, const std::string& text, std::string* error) {
  std::ofstream file(path);
  file << text << "\n";
  file.close();
  if (!file) *error = path.string() + ": cannot write";
  return static_cast<bool>(file);
}

bool WriteImages(const std::filesystem::path& root, const std::vector<PlannedImage>& images, Site* site,
                 std::string* error) {
  for (const PlannedImage& image : images) {
    if (!WritePlannedImage(root, image, error)) return false;
    site->images.push_back(image.spec);
  }
  return true;
}

nlohmann::json Index(const Site& site) {
  nlohmann::json index = {{"images", nlohmann::json::array()},
                          {"pages", site.pages},
                          {"descriptions", site.descriptions}};
  for (const ImageSpec& image : site.images) {
    index["images"].push_back({{"file", image.file}, {"kind", image.kind}, {"width", image.width},
                               {"height", image.height}, {"frames", image.frame_count},
                               {"page", image.page}});
  }
  return index;
}

}  // namespace

bool GenerateSite(const std::string& directory, const SiteOptions& options, Site* site, std::string* error) {
  if (options.page_count < 1 || options.page_count > 99) {
    *error = "a site has 1 to 99 pages";
    return false;
  }
  std::filesystem::path root(directory);
  std::error_code code;
  std::filesystem::create_directories(root / "images", code);
  if (!code) std::filesystem::create_directories(root / "pages", code);
  if (code) {
    *error = directory + ": cannot create (" + code.message() + ")";
    return false;
  }
  const std::vector<PlannedImage> shared = PlanSharedImages(options.seed);
  if (!WriteImages(root, shared, site, error)) return false;
  if (!WriteText(root / "site.css", SiteStylesheet(shared), error)) return false;
  for (int page = 1; page <= options.page_count; ++page) {
    const std::vector<PlannedImage> own = PlanPageImages(page, options.seed);
    if (!WriteImages(root, own, site, error)) return false;
    char name[32];
    std::snprintf(name, sizeof(name), "pages/page-%02d", page);
    const std::string base = name;
    if (!WriteText(root / (base + ".html"), PageHtml(page, shared, own, options.seed), error) ||
        !WriteText(root / (base + ".css"), PageStylesheet(page, own), error) ||
        !WriteText(root / (base + ".json"), LayOutPage(page, shared, own, options.seed).dump(1),
                   error)) {
      return false;
    }
    site->pages.push_back(base + ".html");
    site->descriptions.push_back(base + ".json");
  }
  return WriteText(root / "index.json", Index(*site).dump(1), error);
}

bool ImagesOfFirstPages(const std::string& directory, int page_count, std::vector<std::string>* paths,
                        std::string* error) {
  const std::filesystem::path root(directory);
  std::ifstream file(root / "index.json");
  if (!file) {
    *error = (root / "index.json").string() + ": cannot open";
    return false;
  }
  try {
    const nlohmann::json index = nlohmann::json::parse(file);
    for (const nlohmann::json& image : index.at("images")) {
      // An older site's index has no "page": all its images count as shared.
      if (image.value("page", 0) <= page_count) paths->push_back((root / image.at("file").get<std::string>()).string());
    }
  } catch (const nlohmann::json::exception& e) {
    *error = (root / "index.json").string() + ": " + e.what();
    return false;
  }
  return true;
}

}  // namespace lethe::sample_site
