#include "lethe/decode_error.h"

namespace lethe {

std::string_view DecodeErrorCodeName(DecodeErrorCode code) {
  switch (code) {
    case DecodeErrorCode::kUnsupported: return "unsupported";
    case DecodeErrorCode::kCorrupt: return "corrupt";
    case DecodeErrorCode::kTruncated: return "truncated";
    case DecodeErrorCode::kTooLarge: return "too_large";
    case DecodeErrorCode::kOutOfMemory: return "out_of_memory";
    case DecodeErrorCode::kInvalidArgument: return "invalid_argument";
  }
  return "unknown";
}

}  // namespace lethe
