#include "row_sink_factory.h"

#include <algorithm>
#include <utility>

#include "direct_sink.h"
#include "downscaler.h"
#include "orientation.h"

namespace lethe::internal {

OutputSize ChooseOutputSize(uint32_t source_width, uint32_t source_height, int orientation,
                            uint32_t target_width, uint32_t target_height) {
  const bool swap = OrientationSwapsAxes(orientation);
  const uint32_t natural_width = swap ? source_height : source_width;
  const uint32_t natural_height = swap ? source_width : source_height;
  OutputSize output = {natural_width, natural_height, source_width, source_height};
  if (target_width == 0 || target_height == 0) return output;
  output.width = std::clamp(target_width, 1u, natural_width);
  output.height = std::clamp(target_height, 1u, natural_height);
  output.stored_width = swap ? output.height : output.width;
  output.stored_height = swap ? output.width : output.height;
  return output;
}

DecodeResult<std::unique_ptr<RowSink>> MakeRowSink(uint32_t source_width, uint32_t source_height,
                                                   int orientation, const OutputSize& output,
                                                   const DecodeLimits& limits,
                                                   bool rows_in_order) {
  if (source_width == 0 || source_height == 0) {
    return MakeDecodeError(DecodeErrorCode::kCorrupt, "image of zero size");
  }
  DecodeResult<Surface> surface = Surface::Create(output.width, output.height, limits);
  if (!surface) return surface.error();
  if (!IsReduced(output, source_width, source_height)) {
    return MakeDirectSink(source_width, source_height, orientation, std::move(*surface));
  }
  return MakeDownscaler(source_width, source_height, orientation, output, std::move(*surface),
                        limits, rows_in_order);
}

}  // namespace lethe::internal
