#include "pictures.h"

#include <algorithm>
#include <cmath>

namespace lethe::sample_site {

namespace {

uint8_t Clamp(double value) { return static_cast<uint8_t>(std::clamp(value, 0.0, 255.0)); }
uint8_t Byte(int low, int high, Random& random) { return static_cast<uint8_t>(random.Range(low, high)); }
Rgb Color(int low, int high, Random& random) {
  return {Byte(low, high, random), Byte(low, high, random), Byte(low, high, random)};
}

// The photograph's light per row: sky from its top colour down to the horizon, then ground that
// darkens towards the bottom. Three floats a row.
std::vector<std::array<float, 3>> SkyAndGround(int height, Random& random) {
  const int horizon = height * random.Range(35, 65) / 100;
  const std::array<double, 3> sky_top = {40.0 + random.Range(0, 60), 90.0 + random.Range(0, 60), 170.0 + random.Range(0, 70)};
  const std::array<double, 3> sky_low = {200.0 + random.Range(0, 40), 190.0 + random.Range(0, 50), 170.0 + random.Range(0, 60)};
  const std::array<double, 3> ground = {60.0 + random.Range(0, 80), 70.0 + random.Range(0, 70), 30.0 + random.Range(0, 50)};
  std::vector<std::array<float, 3>> rows(static_cast<size_t>(height));
  for (int y = 0; y < height; ++y) {
    for (size_t c = 0; c < 3; ++c) {
      double value = y < horizon ? sky_top[c] + (sky_low[c] - sky_top[c]) * y / std::max(1, horizon)
                                 : ground[c] * (1.0 - 0.5 * (y - horizon) / std::max(1, height - horizon));
      rows[static_cast<size_t>(y)][c] = static_cast<float>(value);
    }
  }
  return rows;
}

// sin(i * frequency + phase) for i in [0, count).
std::vector<float> Wave(int count, double frequency, double phase) {
  std::vector<float> wave(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) wave[static_cast<size_t>(i)] = static_cast<float>(std::sin(i * frequency + phase));
  return wave;
}

// 1 - 1.2 * d^2 split into a row part and a column part (the vignette is separable).
std::vector<float> Falloff(int count) {
  std::vector<float> falloff(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) {
    double d = (i - count / 2.0) / count;
    falloff[static_cast<size_t>(i)] = static_cast<float>(0.5 - 1.2 * d * d);
  }
  return falloff;
}

}  // namespace

void Picture::FillRect(int x, int y, int w, int h, Rgb color, uint8_t alpha) {
  for (int row = std::max(0, y); row < std::min(height, y + h); ++row) {
    for (int column = std::max(0, x); column < std::min(width, x + w); ++column) {
      uint8_t* p = At(column, row);
      p[0] = color[0], p[1] = color[1], p[2] = color[2], p[3] = alpha;
    }
  }
}

void Picture::FillCircle(int cx, int cy, int radius, Rgb color) {
  for (int y = std::max(0, cy - radius); y < std::min(height, cy + radius); ++y) {
    for (int x = std::max(0, cx - radius); x < std::min(width, cx + radius); ++x) {
      if ((x - cx) * (x - cx) + (y - cy) * (y - cy) > radius * radius) continue;
      uint8_t* p = At(x, y);
      p[0] = color[0], p[1] = color[1], p[2] = color[2], p[3] = 255;
    }
  }
}

PhotoPainter::PhotoPainter(int width, int height, Random& random)
    : width_(width), random_(random), rows_light_(SkyAndGround(height, random)) {
  const double fx = 0.004 + random.Unit() * 0.03, fy = 0.004 + random.Unit() * 0.03;
  const double phase = random.Unit() * 6.28;
  columns_wave_ = Wave(width, fx, phase);
  rows_wave_ = Wave(height, fy * 1.3, phase * 0.7);
  diagonal_wave_ = Wave(width + height, (fx + fy) * 0.5, 0.0);
  columns_falloff_ = Falloff(width);
  rows_falloff_ = Falloff(height);
  texture_ = static_cast<float>(8 + random.Range(0, 14));
  objects_.resize(static_cast<size_t>(random.Range(3, 7)));
  for (Object& object : objects_) {  // trees, rocks, people at a distance
    object.rx = std::max(4, width * random.Range(4, 18) / 100);
    object.ry = std::max(4, height * random.Range(4, 22) / 100);
    object.cx = random.Range(0, width - 1);
    object.cy = random.Range(height / 4, height - 1);
    object.tint = {random.Range(-90, 90), random.Range(-90, 90), random.Range(-90, 90)};
  }
}

void PhotoPainter::PaintRow(int y, uint8_t* rgba) {
  const auto uy = static_cast<size_t>(y);
  const std::array<float, 3> base = rows_light_[uy];
  const float row_wave = rows_wave_[uy], row_falloff = rows_falloff_[uy];
  const float* column_wave = columns_wave_.data();
  const float* diagonal_wave = diagonal_wave_.data() + uy;
  const float* column_falloff = columns_falloff_.data();
  for (int x = 0; x < width_; ++x, rgba += 4) {
    const float wave = column_wave[x] + row_wave + diagonal_wave[x];
    const float light = column_falloff[x] + row_falloff;
    const float grain = static_cast<float>(random_.Next() & 15) - 7.5f;
    rgba[0] = Clamp((base[0] + texture_ * wave) * light + grain);
    rgba[1] = Clamp((base[1] + texture_ * 0.8f * wave) * light + grain);
    rgba[2] = Clamp((base[2] - texture_ * 0.6f * wave) * light + grain);
    rgba[3] = 255;
  }
  PaintObjects(y, rgba - 4 * static_cast<size_t>(width_));
}

void PhotoPainter::PaintObjects(int y, uint8_t* rgba) const {
  for (const Object& object : objects_) {
    if (y < object.cy - object.ry || y >= object.cy + object.ry) continue;
    const double dy = static_cast<double>(y - object.cy) / object.ry;
    for (int x = std::max(0, object.cx - object.rx); x < std::min(width_, object.cx + object.rx); ++x) {
      const double dx = static_cast<double>(x - object.cx) / object.rx;
      const double weight = 1.0 - dx * dx - dy * dy;
      if (weight <= 0) continue;
      uint8_t* p = rgba + 4 * static_cast<size_t>(x);
      for (size_t c = 0; c < 3; ++c) p[c] = Clamp(p[c] + object.tint[c] * weight);
    }
  }
}

Picture PhotoPicture(int width, int height, Random& random) {
  Picture picture(width, height);
  PhotoPainter painter(width, height, random);
  for (int y = 0; y < height; ++y) painter.PaintRow(y, picture.At(0, y));
  return picture;
}

Picture FlatPicture(int width, int height, Random& random, bool alpha) {
  Picture picture(width, height);
  picture.FillRect(0, 0, width, height, Color(180, 255, random), alpha ? 0 : 255);
  const int shapes = random.Range(6, 14);
  for (int s = 0; s < shapes; ++s) {
    const int cx = random.Range(0, width), cy = random.Range(0, height);
    const int radius = random.Range(std::max(2, width / 16), std::max(3, width / 4));
    const Rgb color = Color(0, 255, random);
    if (random.OneIn(2)) picture.FillCircle(cx, cy, radius, color);
    else picture.FillRect(cx - radius, cy - radius, 2 * radius, 2 * radius, color);
  }
  return picture;
}

Picture ChartPicture(int width, int height, Random& random) {
  Picture picture(width, height);  // all transparent
  const int left = width / 10, bottom = height - height / 8, top = height / 12;
  const Rgb axis = {60, 60, 70}, grid = {200, 200, 210};
  for (int y = bottom; y > top; y -= std::max(8, (bottom - top) / 5)) picture.FillRect(left, y, width - left - 8, 1, grid);
  picture.FillRect(left, top, 2, bottom - top, axis);
  picture.FillRect(left, bottom, width - left - 8, 2, axis);
  const int bars = random.Range(4, 12);
  const int slot = (width - left - 16) / bars;
  const Rgb color = Color(30, 220, random);
  for (int b = 0; b < bars; ++b) {
    const int bar_height = (bottom - top) * random.Range(10, 95) / 100;
    picture.FillRect(left + 8 + b * slot, bottom - bar_height, slot * 2 / 3, bar_height,
                     b % 3 == 2 ? Color(30, 220, random) : color);
  }
  return picture;
}

Picture ScreenshotPicture(int width, int height, Random& random) {
  Picture picture(width, height);
  picture.FillRect(0, 0, width, height, {246, 246, 248});
  const int bar = std::max(16, height / 14), sidebar = width / 5;
  picture.FillRect(0, 0, width, bar, Color(20, 120, random));
  picture.FillRect(0, bar, sidebar, height - bar, {228, 230, 236});
  for (int y = bar + 12; y + 8 < height; y += 22) {  // lines of text, ragged on the right
    picture.FillRect(12, y, sidebar - 24 - random.Range(0, sidebar / 3), 6, {120, 124, 140});
    picture.FillRect(sidebar + 20, y, (width - sidebar - 40) * random.Range(40, 100) / 100, 6, {70, 72, 80});
  }
  const int pane_width = (width - sidebar) / 3, pane_height = height / 3;
  Picture pane = PhotoPicture(pane_width, pane_height, random);  // a picture shown in the window
  for (int y = 0; y < pane_height; ++y) {
    std::copy_n(pane.At(0, y), static_cast<size_t>(pane_width) * 4, picture.At(width - pane_width - 16, bar + 16 + y));
  }
  for (int b = 0; b < 3; ++b) picture.FillRect(sidebar + 20 + b * 110, height - 44, 96, 28, Color(40, 200, random));
  return picture;
}

}  // namespace lethe::sample_site
