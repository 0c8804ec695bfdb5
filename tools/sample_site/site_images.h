// site_images.h — which images the sample site has and how each is made. A few are shared by
// every page (the logo, navigation icons, a spinner), as on a real site; every page also has its
// own set of every kind: a hero photograph, photographs in the text, thumbnails (JPEG), a chart, a
// screenshot and a figure (PNG), diagrams (still GIF) and animations (animated GIF). Most of a
// page's bytes are its own, so pages cycled through windows do not share their decoded images.
//
// Planning is separate from writing so a page's layout can be computed from the plan. Both are
// pure functions of the site seed (each image has its own Random); any thread.
#ifndef LETHE_TOOLS_SAMPLE_SITE_SITE_IMAGES_H_
#define LETHE_TOOLS_SAMPLE_SITE_SITE_IMAGES_H_

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "image_writers.h"
#include "sample_site.h"

namespace lethe::sample_site {

// What an image is for, which decides how it is drawn and where a page lays it out.
enum class ImageRole {
  kLogo,        // shared, PNG with alpha, top left of every page
  kIcon,        // shared, small PNG or GIF, in the navigation bar
  kSpinner,     // shared, small animated GIF in the navigation bar
  kHero,        // the page's full-width photograph (JPEG)
  kPhoto,       // photographs beside the text (JPEG)
  kThumbnail,   // a row of small photographs at the end (JPEG)
  kChart,       // bar chart with transparency (PNG, RGBA or palette)
  kScreenshot,  // a user interface (PNG, RGB)
  kFigure,      // a grey drawing (PNG, greyscale)
  kDiagram,     // flat drawing (still GIF)
  kAnimation,   // animated GIF in the text
};

struct PlannedImage {
  ImageSpec spec;  // file, natural size, frames, kind, owning page
  ImageRole role = ImageRole::kPhoto;
  bool progressive = false;  // JPEG progressive, PNG interlaced
  PngKind png_kind = PngKind::kRgba;
  int animation_style = 0;   // see WriteAnimation
  uint32_t seed = 0;         // the picture's own generator
};

// The images every page shows.
std::vector<PlannedImage> PlanSharedImages(uint32_t site_seed);
// The images of page `page` (1-based) only, in the order the page shows them.
std::vector<PlannedImage> PlanPageImages(int page, uint32_t site_seed);

// Draws and encodes `image` into root/image.spec.file. False with *error naming the file.
bool WritePlannedImage(const std::filesystem::path& root, const PlannedImage& image, std::string* error);

}  // namespace lethe::sample_site

#endif  // LETHE_TOOLS_SAMPLE_SITE_SITE_IMAGES_H_
