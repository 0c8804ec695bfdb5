// pictures.h — procedural pictures for the sample site, as RGBA pixels: photographs (smooth
// light, objects and grain, which JPEG compresses like a real photo), flat art (icons, logos,
// diagrams), bar charts on a transparent background and screenshots of a user interface (what PNG
// and GIF carry on real pages). Pure functions of their Random; any thread.
#ifndef LETHE_TOOLS_SAMPLE_SITE_PICTURES_H_
#define LETHE_TOOLS_SAMPLE_SITE_PICTURES_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "random.h"

namespace lethe::sample_site {

using Rgb = std::array<uint8_t, 3>;

// width * height pixels, 4 bytes each (R, G, B, A; not premultiplied), rows top to bottom.
struct Picture {
  Picture(int w, int h) : width(w), height(h), rgba(static_cast<size_t>(w) * static_cast<size_t>(h) * 4) {}
  uint8_t* At(int x, int y) {
    return &rgba[(static_cast<size_t>(y) * static_cast<size_t>(width) + static_cast<size_t>(x)) * 4];
  }
  // Fills the part of the rectangle inside the picture.
  void FillRect(int x, int y, int w, int h, Rgb color, uint8_t alpha = 255);
  void FillCircle(int cx, int cy, int radius, Rgb color);

  int width;
  int height;
  std::vector<uint8_t> rgba;
};

// A landscape-like photograph painted row by row, so an encoder can take it a row at a time
// without the whole picture in memory: sky and ground, soft objects, texture and sensor grain.
// A few ns a pixel (the waves and the vignette are tables per row and per column). Rows must be
// painted in order (the grain comes from `random`, which must outlive the painter).
class PhotoPainter {
 public:
  PhotoPainter(int width, int height, Random& random);
  void PaintRow(int y, uint8_t* rgba);  // width * 4 bytes

 private:
  struct Object {  // a soft ellipse that tints what is under it
    int cx, cy, rx, ry;
    std::array<int, 3> tint;
  };
  void PaintObjects(int y, uint8_t* rgba) const;

  int width_;
  Random& random_;
  std::vector<std::array<float, 3>> rows_light_;  // sky and ground colour per row
  std::vector<float> columns_wave_, rows_wave_, diagonal_wave_, columns_falloff_, rows_falloff_;
  float texture_;
  std::vector<Object> objects_;
};

// A whole photograph (PhotoPainter's rows).
Picture PhotoPicture(int width, int height, Random& random);
// Flat shapes on a plain background (icons, logos, diagrams); `alpha`: transparent background.
Picture FlatPicture(int width, int height, Random& random, bool alpha);
// A bar chart with axes and grid lines on a transparent background.
Picture ChartPicture(int width, int height, Random& random);
// A user interface: title bar, sidebar, lines of "text", buttons and a picture pane.
Picture ScreenshotPicture(int width, int height, Random& random);

}  // namespace lethe::sample_site

#endif  // LETHE_TOOLS_SAMPLE_SITE_PICTURES_H_
