// The generated sample site: every image is a real file of its kind that the reference decoders
// read, every page references existing images, and a failure to write is reported.
#include <gif_lib.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "lethe/image_format.h"
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

TEST_F(SampleSiteTest, HasAtLeastThirtyImagesOfEveryKind) {
  EXPECT_GE(site_.images.size(), 30u);
  std::map<std::string, int> kinds;
  for (const ImageSpec& image : site_.images) ++kinds[image.kind];
  EXPECT_GE(kinds["png"], 4);
  EXPECT_GE(kinds["jpeg"], 4);
  EXPECT_GE(kinds["gif"], 2);
  EXPECT_GE(kinds["animated-gif"], 3);
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

TEST_F(SampleSiteTest, PagesReferenceExistingImagesOfEveryKind) {
  ASSERT_EQ(site_.pages.size(), 3u);
  for (const std::string& page : site_.pages) {
    nlohmann::json description = nlohmann::json::parse(Read(page));
    std::set<std::string> extensions;
    for (const auto& item : description["items"]) {
      if (item["type"] != "image") continue;
      fs::path image = (directory_ / page).parent_path() / item["src"].get<std::string>();
      EXPECT_TRUE(fs::exists(image)) << image;
      extensions.insert(image.extension().string());
      EXPECT_GT(item["width"].get<int>(), 0);
      EXPECT_LT(item["y"].get<int>(), description["height"].get<int>());
    }
    EXPECT_EQ(extensions, (std::set<std::string>{".jpg", ".png", ".gif"})) << page;
  }
}

TEST(SampleSite, ReportsAnUnwritableDirectory) {
  Site site;
  std::string error;
  EXPECT_FALSE(GenerateSite("/proc/lethe-cannot-create", SiteOptions{}, &site, &error));
  EXPECT_NE(error.find("/proc/lethe-cannot-create: cannot create"), std::string::npos) << error;
}

TEST(SampleSite, RejectsPagesWithoutEveryKind) {
  Site site;
  std::string error;
  SiteOptions options;
  options.images_per_page = 2;
  EXPECT_FALSE(GenerateSite("/tmp/unused", options, &site, &error));
  EXPECT_NE(error.find("4 images per page"), std::string::npos);
}

}  // namespace
}  // namespace lethe::sample_site
