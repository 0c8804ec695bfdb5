#include "orientation.h"

namespace lethe::internal {

bool OrientationSwapsAxes(int orientation) { return orientation >= 5 && orientation <= 8; }

Oriented OrientPoint(uint32_t x, uint32_t y, uint32_t width, uint32_t height, int orientation) {
  switch (orientation) {
    case 2: return {width - 1 - x, y};                // mirror horizontally
    case 3: return {width - 1 - x, height - 1 - y};   // rotate 180
    case 4: return {x, height - 1 - y};               // mirror vertically
    case 5: return {y, x};                            // transpose
    case 6: return {height - 1 - y, x};               // rotate 90 clockwise
    case 7: return {height - 1 - y, width - 1 - x};   // transverse
    case 8: return {y, width - 1 - x};                // rotate 90 counter-clockwise
    default: return {x, y};
  }
}

}  // namespace lethe::internal
