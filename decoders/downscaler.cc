#include "downscaler.h"

#include <cstdint>
#include <cstring>
#include <utility>

#include "lethe/alloc.h"
#include "orientation.h"

namespace lethe::internal {
namespace {

// Sum is uint32_t when no bin can receive enough pixels to overflow it (256 x pixels per bin <
// 2^32, true for any reduction of an image below 16 Mpx per output pixel): 20 bytes a bin instead
// of 40, which matters for Adam7's whole grid.
template <typename Sum>
struct BinOf {
  Sum sum[4];
  uint32_t count;
};

template <typename Sum>
class Downscaler final : public RowSink {
  using Bin = BinOf<Sum>;

 public:
  Downscaler(uint32_t source_width, uint32_t source_height, int orientation, Surface output,
             uint32_t bins_width, uint32_t bins_height, bool rows_in_order, Bin* bins,
             uint32_t* column_bin)
      : RowSink(source_width, source_height),
        orientation_(orientation),
        output_(std::move(output)),
        bins_width_(bins_width),
        bins_height_(bins_height),
        rows_in_order_(rows_in_order),
        bins_(bins),
        column_bin_(column_bin) {}

  ~Downscaler() override {
    lethe_free(bins_);
    lethe_free(column_bin_);
  }

  void PutPixels(uint32_t y, uint32_t x0, uint32_t step, const uint8_t* bgra,
                 uint32_t count) override {
    if (y >= source_height()) return;
    const uint32_t bin_y = static_cast<uint32_t>(uint64_t{y} * bins_height_ / source_height());
    Bin* row = bins_;
    if (rows_in_order_) {
      if (bin_y != current_bin_y_) {
        FlushRow();
        current_bin_y_ = bin_y;
      }
    } else {
      row += size_t{bin_y} * bins_width_;
    }
    for (uint32_t i = 0, x = x0; i < count && x < source_width(); ++i, x += step) {
      Bin& bin = row[column_bin_[x]];
      const uint8_t* pixel = bgra + size_t{i} * 4;
      bin.sum[0] += pixel[0];
      bin.sum[1] += pixel[1];
      bin.sum[2] += pixel[2];
      bin.sum[3] += pixel[3];
      ++bin.count;
    }
  }

  Surface Finish(bool complete) override {
    if (rows_in_order_) {
      FlushRow();
    } else {
      for (uint32_t y = 0; y < bins_height_; ++y) WriteRow(bins_ + size_t{y} * bins_width_, y);
    }
    output_.set_complete(complete);
    return std::move(output_);
  }

 private:
  void FlushRow() {
    if (current_bin_y_ == kNoRow) return;
    WriteRow(bins_, current_bin_y_);
    std::memset(static_cast<void*>(bins_), 0, sizeof(Bin) * bins_width_);
    current_bin_y_ = kNoRow;
  }

  void WriteRow(const Bin* row, uint32_t bin_y) {
    for (uint32_t x = 0; x < bins_width_; ++x) {
      const Bin& bin = row[x];
      if (bin.count == 0) continue;
      const Oriented at = OrientPoint(x, bin_y, bins_width_, bins_height_, orientation_);
      uint8_t* out = output_.Row(at.y) + size_t{at.x} * 4;
      for (int c = 0; c < 4; ++c) {
        out[c] = static_cast<uint8_t>((bin.sum[c] + bin.count / 2) / bin.count);
      }
    }
  }

  static constexpr uint32_t kNoRow = 0xFFFFFFFFu;
  int orientation_;
  Surface output_;
  uint32_t bins_width_;
  uint32_t bins_height_;
  bool rows_in_order_;
  Bin* bins_;
  uint32_t* column_bin_;  // source column -> bin column
  uint32_t current_bin_y_ = kNoRow;
};

template <typename Sum>
DecodeResult<std::unique_ptr<RowSink>> MakeDownscalerOf(uint32_t source_width,
                                                        uint32_t source_height, int orientation,
                                                        Surface output, uint32_t bins_width,
                                                        uint32_t bins_height,
                                                        const DecodeLimits& limits,
                                                        bool rows_in_order) {
  const uint64_t bin_count = rows_in_order ? bins_width : uint64_t{bins_width} * bins_height;
  const uint64_t bin_bytes = bin_count * sizeof(BinOf<Sum>);
  if (bin_bytes + output.MemoryBytes() > limits.max_decoded_bytes) {
    return MakeDecodeError(DecodeErrorCode::kTooLarge, "downscale buffers exceed the decode limits");
  }
  auto* bins = static_cast<BinOf<Sum>*>(lethe_calloc(static_cast<size_t>(bin_count), sizeof(BinOf<Sum>)));
  auto* column_bin = static_cast<uint32_t*>(lethe_malloc(sizeof(uint32_t) * source_width));
  if (bins == nullptr || column_bin == nullptr) {
    lethe_free(bins);
    lethe_free(column_bin);
    return MakeDecodeError(DecodeErrorCode::kOutOfMemory, "out of memory for downscale buffers");
  }
  for (uint32_t x = 0; x < source_width; ++x) {
    column_bin[x] = static_cast<uint32_t>(uint64_t{x} * bins_width / source_width);
  }
  return std::unique_ptr<RowSink>(new Downscaler<Sum>(source_width, source_height, orientation,
                                                      std::move(output), bins_width, bins_height,
                                                      rows_in_order, bins, column_bin));
}

}  // namespace

DecodeResult<std::unique_ptr<RowSink>> MakeDownscaler(uint32_t source_width,
                                                      uint32_t source_height, int orientation,
                                                      const OutputSize& size, Surface output,
                                                      const DecodeLimits& limits,
                                                      bool rows_in_order) {
  const uint32_t bins_width = size.stored_width;
  const uint32_t bins_height = size.stored_height;
  // Source pixels one bin can receive at most: ceil(sw / aw) x ceil(sh / ah).
  const uint64_t per_bin = ((uint64_t{source_width} + bins_width - 1) / bins_width) *
                           ((uint64_t{source_height} + bins_height - 1) / bins_height);
  if (per_bin * 256 <= UINT32_MAX) {  // sum + count / 2 fits too
    return MakeDownscalerOf<uint32_t>(source_width, source_height, orientation, std::move(output),
                                      bins_width, bins_height, limits, rows_in_order);
  }
  return MakeDownscalerOf<uint64_t>(source_width, source_height, orientation, std::move(output),
                                    bins_width, bins_height, limits, rows_in_order);
}

}  // namespace lethe::internal
