// lethe/decode_error.h — why a decode failed, and the result type every decoder returns.
//
// Every failure of a decoder is a DecodeError: a code a program can switch on and a reason a person
// can read (libpng's and libjpeg's own messages are captured into it; nothing is printed). A
// DecodeResult<T> holds either a T or a DecodeError (a small std::expected for C++20).
//
// Any thread; plain values, no shared state.
#ifndef LETHE_DECODE_ERROR_H_
#define LETHE_DECODE_ERROR_H_

#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>

#include "lethe/check.h"

namespace lethe {

enum class DecodeErrorCode {
  kUnsupported,   // a valid file that these decoders do not handle (12-bit or lossless JPEG, ...)
  kCorrupt,       // the bytes break the format (bad header, bad compressed data)
  kTruncated,     // the bytes end before anything could be decoded
  kTooLarge,      // beyond DecodeLimits (or beyond the library's own limits)
  kOutOfMemory,   // the allocator refused memory
  kInvalidArgument,  // the caller asked for something impossible (a zero target size, ...)
};

// "unsupported", "corrupt", "truncated", "too_large", "out_of_memory", "invalid_argument".
std::string_view DecodeErrorCodeName(DecodeErrorCode code);

struct DecodeError {
  DecodeErrorCode code = DecodeErrorCode::kCorrupt;
  std::string reason;  // one line, no trailing newline
};

// Either a value or a DecodeError. Accessing the wrong alternative is a contract violation
// (LETHE_CHECK), never undefined behaviour.
template <typename T>
class [[nodiscard]] DecodeResult {
 public:
  DecodeResult(T value) : state_(std::in_place_index<0>, std::move(value)) {}  // NOLINT: implicit
  DecodeResult(DecodeError error) : state_(std::in_place_index<1>, std::move(error)) {}  // NOLINT

  bool has_value() const { return state_.index() == 0; }
  explicit operator bool() const { return has_value(); }

  T& value() & {
    LETHE_CHECK(has_value(), "DecodeResult::value() on an error");
    return std::get<0>(state_);
  }
  const T& value() const& {
    LETHE_CHECK(has_value(), "DecodeResult::value() on an error");
    return std::get<0>(state_);
  }
  T&& value() && {
    LETHE_CHECK(has_value(), "DecodeResult::value() on an error");
    return std::get<0>(std::move(state_));
  }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const DecodeError& error() const {
    LETHE_CHECK(!has_value(), "DecodeResult::error() on a value");
    return std::get<1>(state_);
  }

 private:
  std::variant<T, DecodeError> state_;
};

// Shorthand used by the decoders: DecodeResult<T>(MakeDecodeError(kCorrupt, "..."))
inline DecodeError MakeDecodeError(DecodeErrorCode code, std::string reason) {
  return DecodeError{code, std::move(reason)};
}

}  // namespace lethe

#endif  // LETHE_DECODE_ERROR_H_
