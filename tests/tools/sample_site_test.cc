// The generated sample site: every image is a real file of its kind that the reference decoders
// read, every page shows its own images of every kind and the few the site shares, the layout
// keeps images apart, the site is the same for a seed, and a failure to write is reported.
#include <gif_lib.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <nlohmann/json.hpp>

#include "lethe/image_format.h"
#include "image_writers.h"
#include "sample_site.h"

namespace lethe::sample_site {
namespace {

namespace fs = std::filesystem;

// One site for the whole suite: generating it is the slow part.
class SampleSiteTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    directory_ = fs::temp_directory_path() / ("lethe-site-" + std::to_string(getpid()));
    SiteOptions options;
    options.page_count = 3;
    site_ = Site{};
    generated_ = GenerateSite(directory_.string(), options, &site_, &error_);
  }
  static void TearDownTestSuite() { fs::remove_all(directory_); }
  void SetUp() override { ASSERT_TRUE(generated_) << error_; }

  static std::vector<uint8_t> Read(const std::string& relative) {
    std::ifstream file(directory_ / relative, std::ios::binary);
    return {std::istreambuf_iterator<char>(file), {}};
  }

  static inline fs::path directory_;
  static inline Site site_;
  static inline bool generated_ = false;
  static inline std::string error_;
};

// The kinds of the images page `page` alone shows.
std::map<std::string, int> OwnKinds(const Site& site, int page) {
  std::map<std::string, int> kinds;
  for (const ImageSpec& image : site.images)
    if (image.page == page) ++kinds[image.kind];
  return kinds;
}

TEST_F(SampleSiteTest, EveryPageHasItsOwnImagesOfEveryKind) {
  for (int page = 1; page <= 3; ++page) {
    std::map<std::string, int> kinds = OwnKinds(site_, page);
    EXPECT_GE(kinds["jpeg"], 5) << page;  // hero, photographs, thumbnails
    EXPECT_GE(kinds["png"], 2) << page;
    EXPECT_GE(kinds["gif"], 1) << page;
    EXPECT_GE(kinds["animated-gif"], 1) << page;
  }
}

TEST_F(SampleSiteTest, SharesOnlyALogoIconsAndASpinnerAcrossPages) {
  std::map<std::string, int> shared = OwnKinds(site_, 0);
  EXPECT_EQ(shared["png"], 3);
  EXPECT_EQ(shared["gif"], 2);
  EXPECT_EQ(shared["animated-gif"], 1);
  EXPECT_EQ(shared["jpeg"], 0);
}

TEST_F(SampleSiteTest, EveryImageHasTheSignatureOfItsKind) {
  for (const ImageSpec& image : site_.images) {
    ImageFormat format = DetectImageFormat(Read(image.file));
    ImageFormat want = image.kind == "png" ? ImageFormat::kPng
                       : image.kind == "jpeg" ? ImageFormat::kJpeg : ImageFormat::kGif;
    EXPECT_EQ(format, want) << image.file;
  }
}

TEST_F(SampleSiteTest, AnimationsHaveThirtyOrMoreFramesThatGiflibReads) {
  for (const ImageSpec& image : site_.images) {
    if (image.kind != "animated-gif") continue;
    int status = 0;
    GifFileType* gif = DGifOpenFileName((directory_ / image.file).c_str(), &status);
    ASSERT_NE(gif, nullptr) << image.file;
    ASSERT_EQ(DGifSlurp(gif), GIF_OK) << image.file << ": " << GifErrorString(gif->Error);
    EXPECT_GE(gif->ImageCount, 30) << image.file;
    EXPECT_EQ(gif->ImageCount, image.frame_count);
    EXPECT_EQ(gif->SWidth, image.width);
    DGifCloseFile(gif, &status);
  }
}

// The page's image items: src (relative to the site) -> laid-out rectangles.
std::multimap<std::string, nlohmann::json> ImageItems(const nlohmann::json& description) {
  std::multimap<std::string, nlohmann::json> items;
  for (const auto& item : description["items"]) {
    if (item["type"] != "image") continue;
    std::string src = item["src"];
    EXPECT_EQ(src.rfind("../", 0), 0u) << src;
    items.emplace(src.substr(3), item);
  }
  return items;
}

TEST_F(SampleSiteTest, PagesReferenceExistingImagesOfEveryKind) {
  ASSERT_EQ(site_.descriptions.size(), 3u);
  for (const std::string& page : site_.descriptions) {
    nlohmann::json description = nlohmann::json::parse(Read(page));
    std::set<std::string> extensions;
    for (const auto& [file, item] : ImageItems(description)) {
      EXPECT_TRUE(fs::exists(directory_ / file)) << file;
      extensions.insert(fs::path(file).extension().string());
      EXPECT_GT(item["width"].get<int>(), 0);
      EXPECT_LE(item["x"].get<int>() + item["width"].get<int>(), description["width"].get<int>()) << file;
      EXPECT_LT(item["y"].get<int>() + item["height"].get<int>(), description["height"].get<int>()) << file;
    }
    EXPECT_EQ(extensions, (std::set<std::string>{".jpg", ".png", ".gif"})) << page;
  }
}

TEST_F(SampleSiteTest, EveryPageShowsAllItsOwnImagesAndNoOtherPagesImages) {
  for (int page = 1; page <= 3; ++page) {
    auto items = ImageItems(nlohmann::json::parse(Read(site_.descriptions[static_cast<size_t>(page - 1)])));
    for (const ImageSpec& image : site_.images) {
      bool shown = items.count(image.file) > 0;
      EXPECT_EQ(shown, image.page == page || image.page == 0) << "page " << page << ": " << image.file;
    }
  }
}

TEST_F(SampleSiteTest, MostOfAPagesDecodedBytesAreItsOwn) {
  for (int page = 1; page <= 3; ++page) {
    std::map<std::string, int> owner;
    for (const ImageSpec& image : site_.images) owner[image.file] = image.page;
    int64_t own_bytes = 0, shared_bytes = 0;
    for (const auto& [file, item] : ImageItems(nlohmann::json::parse(Read(site_.descriptions[static_cast<size_t>(page - 1)])))) {
      int64_t bytes = int64_t{item["width"].get<int>()} * item["height"].get<int>() * 4;
      (owner.at(file) == 0 ? shared_bytes : own_bytes) += bytes;
    }
    EXPECT_GT(own_bytes, 3 << 20) << page;  // several MB decoded, like a real article
    EXPECT_GT(own_bytes, 20 * shared_bytes) << page;
  }
}

TEST_F(SampleSiteTest, ImagesOfAPageNeverOverlap) {
  for (const std::string& page : site_.descriptions) {
    std::vector<nlohmann::json> items;
    for (const auto& entry : ImageItems(nlohmann::json::parse(Read(page)))) items.push_back(entry.second);
    for (size_t i = 0; i < items.size(); ++i) {
      for (size_t j = i + 1; j < items.size(); ++j) {
        const auto &a = items[i], &b = items[j];
        bool apart = a["x"].get<int>() + a["width"].get<int>() <= b["x"].get<int>() ||
                     b["x"].get<int>() + b["width"].get<int>() <= a["x"].get<int>() ||
                     a["y"].get<int>() + a["height"].get<int>() <= b["y"].get<int>() ||
                     b["y"].get<int>() + b["height"].get<int>() <= a["y"].get<int>();
        EXPECT_TRUE(apart) << page << ": " << a["src"] << " and " << b["src"];
      }
    }
  }
}

// The image files an HTML page names: <img src="../X"> in the page, url(../X) in its own
// stylesheet, url(X) in the site's.
std::set<std::string> HtmlImageFiles(const std::string& html, const std::string& page_css,
                                     const std::string& site_css) {
  std::set<std::string> files;
  auto collect = [&files](const std::string& text, const std::string& opener, char closer,
                          const std::string& prefix) {
    for (size_t at = text.find(opener); at != std::string::npos; at = text.find(opener, at + 1)) {
      size_t start = at + opener.size();
      size_t end = text.find(closer, start);
      std::string url = text.substr(start, end - start);
      EXPECT_EQ(url.rfind(prefix, 0), 0u) << url;
      files.insert(url.substr(prefix.size()));
    }
  };
  collect(html, "src=\"", '"', "../");
  collect(page_css, "url(", ')', "../");
  collect(site_css, "url(", ')', "");
  return files;
}

std::string Text(const std::vector<uint8_t>& bytes) { return std::string(bytes.begin(), bytes.end()); }

TEST_F(SampleSiteTest, HtmlPagesShowTheirOwnImagesAndTheSharedOnesOnly) {
  ASSERT_EQ(site_.pages.size(), 3u);
  const std::string site_css = Text(Read("site.css"));
  ASSERT_FALSE(site_css.empty());
  for (int page = 1; page <= 3; ++page) {
    const std::string& path = site_.pages[static_cast<size_t>(page - 1)];
    ASSERT_EQ(fs::path(path).extension(), ".html");
    const std::string html = Text(Read(path));
    const std::string css = Text(Read(fs::path(path).replace_extension(".css").string()));
    EXPECT_NE(html.find("<link rel=\"stylesheet\" href=\"../site.css\">"), std::string::npos);
    EXPECT_NE(css.find("background-image"), std::string::npos) << path;
    for (const char* element : {"<h1>", "<h2>", "<p>", "<ol>", "<ul class", "<table", "class=\"left\"",
                                "class=\"right\""}) {
      EXPECT_NE(html.find(element), std::string::npos) << path << " lacks " << element;
    }
    const std::set<std::string> files = HtmlImageFiles(html, css, site_css);
    for (const std::string& file : files) EXPECT_TRUE(fs::exists(directory_ / file)) << file;
    for (const ImageSpec& image : site_.images) {
      EXPECT_EQ(files.count(image.file) > 0, image.page == page || image.page == 0)
          << "page " << page << ": " << image.file;
    }
  }
}

TEST_F(SampleSiteTest, IndexListsEveryImageWithItsPage) {
  nlohmann::json index = nlohmann::json::parse(Read("index.json"));
  ASSERT_EQ(index["images"].size(), site_.images.size());
  for (size_t i = 0; i < site_.images.size(); ++i) {
    EXPECT_EQ(index["images"][i]["file"], site_.images[i].file);
    EXPECT_EQ(index["images"][i]["page"], site_.images[i].page);
  }
  EXPECT_EQ(index["pages"].size(), 3u);
}

// Reads every file under `directory` (relative path -> bytes).
std::map<std::string, std::vector<uint8_t>> ReadTree(const fs::path& directory) {
  std::map<std::string, std::vector<uint8_t>> files;
  for (const auto& entry : fs::recursive_directory_iterator(directory)) {
    if (!entry.is_regular_file()) continue;
    std::ifstream file(entry.path(), std::ios::binary);
    files[fs::relative(entry.path(), directory).string()] = {std::istreambuf_iterator<char>(file), {}};
  }
  return files;
}

TEST(SampleSite, IsTheSameForTheSameSeedAndDiffersForAnother) {
  fs::path root = fs::temp_directory_path() / ("lethe-site-seeds-" + std::to_string(getpid()));
  Site first, second, other;
  std::string error;
  SiteOptions options;
  options.page_count = 1;
  ASSERT_TRUE(GenerateSite((root / "a").string(), options, &first, &error)) << error;
  ASSERT_TRUE(GenerateSite((root / "b").string(), options, &second, &error)) << error;
  options.seed = 2;
  ASSERT_TRUE(GenerateSite((root / "c").string(), options, &other, &error)) << error;
  auto a = ReadTree(root / "a"), b = ReadTree(root / "b"), c = ReadTree(root / "c");
  EXPECT_EQ(a, b);
  ASSERT_EQ(a.count("images/page-01-hero.jpg"), 1u);
  EXPECT_NE(a["images/page-01-hero.jpg"], c["images/page-01-hero.jpg"]);
  fs::remove_all(root);
}

TEST(SampleSite, ReportsAnUnwritableDirectory) {
  Site site;
  std::string error;
  EXPECT_FALSE(GenerateSite("/proc/lethe-cannot-create", SiteOptions{}, &site, &error));
  EXPECT_NE(error.find("/proc/lethe-cannot-create: cannot create"), std::string::npos) << error;
}

// libjpeg's own errors leave WriteJpeg by its longjmp: the reason comes back, and the writer can
// write again afterwards (nothing it holds was clobbered).
TEST(SampleSite, ReportsALibjpegErrorWithItsReasonAndWritesAgainAfter) {
  fs::path path = fs::temp_directory_path() / ("lethe-jpeg-" + std::to_string(getpid()) + ".jpg");
  std::string error;
  auto grey = [](int, uint8_t* rgba) { std::fill(rgba, rgba + 4 * 8, uint8_t{128}); };
  EXPECT_FALSE(WriteJpeg(path.string(), 0, 8, grey, 90, false, &error));
  EXPECT_NE(error.find(path.string() + ": libjpeg: "), std::string::npos) << error;
  EXPECT_GT(error.size(), (path.string() + ": libjpeg: ").size()) << "no reason given";

  error.clear();
  ASSERT_TRUE(WriteJpeg(path.string(), 8, 8, grey, 90, true, &error)) << error;
  std::ifstream file(path, std::ios::binary);
  std::vector<uint8_t> bytes{std::istreambuf_iterator<char>(file), {}};
  ASSERT_GE(bytes.size(), 4u);
  EXPECT_EQ(bytes[0], 0xFF);
  EXPECT_EQ(bytes[1], 0xD8);  // SOI
  EXPECT_EQ(bytes[bytes.size() - 2], 0xFF);
  EXPECT_EQ(bytes[bytes.size() - 1], 0xD9);  // EOI: the whole picture
  fs::remove(path);
}

TEST(SampleSite, RejectsAPageCountOutsideOneTo99) {
  for (int page_count : {0, 100}) {
    Site site;
    std::string error;
    SiteOptions options;
    options.page_count = page_count;
    EXPECT_FALSE(GenerateSite("/tmp/lethe-unused-site", options, &site, &error));
    EXPECT_NE(error.find("1 to 99 pages"), std::string::npos) << error;
    EXPECT_FALSE(fs::exists("/tmp/lethe-unused-site"));
  }
}

}  // namespace
}  // namespace lethe::sample_site
